"""The course a teacher builds (``notebooks/course.py``): the student set keeps every exercise
and its check but no worked answer, and still runs to the end; the solutions set keeps every
cell; the slides hold the tagged cells and their figures.

The oracle of "no worked answer" is independent of the tags: the prose that gives an answer
says so (``Worked answer``), and a student notebook must not contain it; that every name a
student cell reads is defined by an earlier student cell is checked with Python's own parser.
"""
from __future__ import annotations

import ast
import builtins
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
_spec = importlib.util.spec_from_file_location("course", NOTEBOOKS / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)

LESSONS = [name for name in course.COURSE if name[:2].isdigit()]
WORKED = re.compile(r"worked\s+answer", re.I)


def _read(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_the_course_lists_every_notebook_once():
    assert sorted(course.COURSE) == sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("course")
    return out, course.build(out)


def test_every_set_holds_every_notebook(built):
    out, written = built
    for kind in ("student", "solutions"):
        assert sorted(p.stem for p in written[kind]) == sorted(course.COURSE)


@pytest.mark.parametrize("name", [n for n in LESSONS if n != "11_rules"])
def test_the_student_copy_has_the_exercises_and_no_worked_answer(built, name):
    out, _ = built
    original = _read(name)
    mine = nbformat.read(out / "student" / f"{name}.ipynb", as_version=4)
    prose = "\n".join(c.source for c in mine.cells if c.cell_type == "markdown")
    assert not WORKED.search(prose.replace(course.STUDENT_NOTE, "")), f"{name}: a worked answer is left"
    assert not any(course.ANSWER in course.tags(c) for c in mine.cells)
    assert re.search(r"## Exercises", prose), f"{name}: the exercises are gone"
    answers = [c for c in original.cells if course.ANSWER in course.tags(c)]
    assert answers, f"{name}: no cell tagged {course.ANSWER!r}"
    assert len(mine.cells) == len(original.cells) - len(answers) + 1          # (the note)
    assert all(not c.get("outputs") for c in mine.cells if c.cell_type == "code")


def test_the_solutions_keep_every_cell(built):
    out, _ = built
    for name in course.COURSE:
        original, mine = _read(name), nbformat.read(out / "solutions" / f"{name}.ipynb", as_version=4)
        assert [c.source for c in mine.cells] == [c.source for c in original.cells]


def _bound(tree) -> set[str]:
    """Names a cell binds at its top level (assignments, defs, imports, loop targets, ``with``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _read_names(tree) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _code(cell) -> str:
    """The cell as the Python IPython runs (``x = %dd graph y`` becomes a call)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell.source)


@pytest.mark.parametrize("name", [n for n in course.COURSE if n != "11_rules"])
def test_no_student_cell_needs_a_name_only_an_answer_defined(name):
    nb = _read(name)
    answer_only, seen = set(), set(dir(builtins)) | {"display", "get_ipython"}
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        tree = ast.parse(_code(cell))
        if course.ANSWER in course.tags(cell):
            answer_only |= _bound(tree) - seen
            continue
        missing = (_read_names(tree) & answer_only) - seen - _bound(tree)
        assert not missing, f"{name}: a student cell reads {sorted(missing)}, defined only in an answer cell"
        seen |= _bound(tree)


@pytest.mark.notebooks
@pytest.mark.parametrize("name", ["01_differences", "09_timely_dataflow"])
def test_a_student_copy_runs_to_the_end(built, name):
    from executed import RecipeClient

    out, _ = built
    path = out / "student" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    RecipeClient(nb, timeout=300, kernel_name="python3",
                 resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    printed = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                        for o in c.outputs if o.get("output_type") == "stream")
    assert re.search(r"not answered yet|write your prediction|Write your prediction", printed, re.I)


@pytest.mark.parametrize("key", ["01", "02", "09"])
def test_the_slides_hold_the_tagged_cells(key):
    nb = _read(course.lesson(key).stem)
    deck = course.slide_deck(nb)
    starts = [c for c in deck.cells if c.metadata["slideshow"]["slide_type"] == "slide"]
    assert len(starts) >= 5, f"lesson {key}: {len(starts)} slides"
    assert starts[0].cell_type == "markdown" and starts[0].source.startswith("# ")
    assert not any(course.ANSWER in course.tags(c) and c.metadata["slideshow"]["slide_type"] != "skip"
                   for c in deck.cells), "a worked answer on a slide"


def test_a_lesson_without_slides_says_so():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# untagged")]
    with pytest.raises(ValueError, match="tagged 'slide'"):
        course.slide_deck(nb)


@pytest.mark.parametrize("name", [n for n in LESSONS if n != "11_rules"])
def test_every_lesson_ends_with_a_recap(name):
    cells = _read(name).cells
    recap = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Recap")]
    assert len(recap) == 1, f"{name}: one recap"
    assert all(course.ANSWER not in course.tags(c) and re.match(r"(## Next steps|\*\*Next)", c.source)
               for c in cells[recap[0] + 1:]), f"{name}: the recap closes the lesson (only the way on after it)"
