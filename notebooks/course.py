"""Build a course from the lessons beside this file: a student set without the worked answers,
a solutions set, and reveal.js slides from the cells tagged for them.

    python notebooks/course.py OUT                  # OUT/student/*.ipynb and OUT/solutions/*.ipynb
    python notebooks/course.py OUT --slides 01 02 09  # and OUT/slides/NN_*.slides.html (executes them)

Why a script here, not a ``ddlab`` command: it works on the notebooks of a checkout (the wheel
ships none) and is for whoever teaches from the repository; it needs nothing but nbformat (and
nbconvert for the slides), both part of Jupyter.

The cells' tags say what goes where (``notebooks/README.md``, "For teachers"):

- ``answer``: a worked answer (its prose, or the code that shows it); left out of the student
  set, kept in the solutions set.  The exercises and their checks (``PREDICTION = None``, ...)
  stay in both: a student's check prints "not answered yet" until they answer.
- ``slide`` starts a slide, ``slide-more`` adds the cell to the slide before it; a code cell
  on a slide shows its output only, unless also tagged ``slide-code``.  Untagged cells are left
  out of the slides.

Both sets are written without outputs, so a student runs each lesson top to bottom.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ANSWER, SLIDE, SLIDE_MORE, SLIDE_CODE = "answer", "slide", "slide-more", "slide-code"
#: the notebooks of the course, in the syllabus's order (notebooks/README.md)
COURSE = ["01_differences", "02_a_loop_is_differences", "03_two_kinds_of_change",
          "04_inside_an_operator", "05_prioritization", "06_figure1_and_figure6",
          "07_nested_loops_scc", "08_compaction_and_frontiers", "09_timely_dataflow",
          "10_performance", "11_rules", "12_why", "13_scaling", "demo", "magics_tour",
          "howto_your_own_data"]
STUDENT_NOTE = ("*Student copy: the worked answers are left out (your teacher has the "
                "solutions set). Each exercise's check cell says \"not answered yet\" until you "
                "fill in its answer.*")


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _cleared(nb):
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    return nb


def student(nb):
    """``nb`` without its answer cells and outputs, a note under its title."""
    out = _cleared(nb)
    out.cells = [c for c in out.cells if ANSWER not in tags(c)]
    note = nbformat.v4.new_markdown_cell(STUDENT_NOTE)
    note.id = "student-note"
    out.cells.insert(1, note)
    return out


def solutions(nb):
    """``nb`` whole, without outputs: every worked answer in place."""
    return _cleared(nb)


def slide_deck(nb):
    """``nb`` marked for nbconvert's reveal.js export: the tagged cells on their slides, the
    others skipped, code inputs hidden unless tagged ``slide-code``.  Keeps outputs (give it an
    executed notebook)."""
    deck = copy.deepcopy(nb)
    deck.metadata.pop("widgets", None)
    kept = 0
    for cell in deck.cells:
        t = tags(cell)
        kind = "slide" if SLIDE in t else "-" if SLIDE_MORE in t or _loads_bokehjs(cell) else "skip"
        cell.metadata["slideshow"] = {"slide_type": kind}
        if kind != "skip":
            kept += 1
            if cell.cell_type == "code" and SLIDE_CODE not in t:
                cell.metadata.setdefault("tags", []).append("slide-hide-input")
    if not any(SLIDE in tags(c) for c in deck.cells):
        raise ValueError("no cell of this notebook is tagged 'slide': it has no slides")
    return deck


def _loads_bokehjs(cell) -> bool:
    """Whether the cell's output loads BokehJS (``output_notebook``), which the plots on later
    slides need: such a cell goes with the slide before it, its input hidden (it shows nothing)."""
    return any(kind in output.get("data", {}) for output in cell.get("outputs", [])
               for kind in ("application/vnd.bokehjs_load.v0+json", "application/javascript"))


def slides_html(nb, reveal_url_prefix: str | None = None) -> str:
    """The reveal.js page of :func:`slide_deck` (``nb`` executed)."""
    from nbconvert.exporters import SlidesExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = {"slide-hide-input"}
    config.SlidesExporter.exclude_input_prompt = True
    config.SlidesExporter.exclude_output_prompt = True
    config.SlidesExporter.reveal_scroll = True          # a long slide scrolls instead of being cut
    if reveal_url_prefix:
        config.SlidesExporter.reveal_url_prefix = reveal_url_prefix
    body, _ = SlidesExporter(config=config).from_notebook_node(slide_deck(nb))
    return body


def execute(path: Path):
    """The notebook at ``path`` executed in its folder, as the README's export recipe runs it
    (``store_widget_state=False``: the widgets' static snapshots are what the slides show)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=1800, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def lesson(key: str) -> Path:
    """The lesson whose file name starts with ``key`` (``01``, ``demo``)."""
    found = [HERE / f"{name}.ipynb" for name in COURSE if name.startswith(key)]
    if len(found) != 1:
        raise SystemExit(f"course.py: {key!r} names {len(found)} lessons of {', '.join(COURSE)}")
    return found[0]


def build(out: Path, slides: list[str] = (), reveal_url_prefix: str | None = None) -> dict:
    """Write ``out/student``, ``out/solutions`` (every notebook of :data:`COURSE`) and
    ``out/slides`` (the lessons named in ``slides``); what was written, by set."""
    written = {"student": [], "solutions": [], "slides": []}
    for name in COURSE:
        nb = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
        for kind, make in (("student", student), ("solutions", solutions)):
            target = out / kind / f"{name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(make(nb), target)
            written[kind].append(target)
    for key in slides:
        path = lesson(key)
        target = out / "slides" / f"{path.stem}.slides.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(slides_html(execute(path), reveal_url_prefix), encoding="utf-8")
        written["slides"].append(target)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write the sets into")
    parser.add_argument("--slides", nargs="*", default=[], metavar="LESSON",
                        help="lessons to execute and write as reveal.js slides (e.g. 01 02 09)")
    parser.add_argument("--reveal-url-prefix", default=None,
                        help="where the slides load reveal.js from (default: nbconvert's CDN)")
    args = parser.parse_args(argv)
    written = build(args.out, args.slides, args.reveal_url_prefix)
    for kind, files in written.items():
        if files:
            print(f"{kind}: {len(files)} file(s) in {args.out / kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
