"""The teaching notebooks keep their conventions: what they run is checked by nbmake (every
notebook runs top to bottom in the suite); these checks cover what a run cannot see.

Outputs are not committed (a notebook in git is its source), each opens by saying what the
reader will learn and closes with exercises or next steps, the first code cell holds the
parameters an instructor changes, and bokeh is always loaded inline (a CDN load draws nothing
offline).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ALL = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
#: Every notebook is taught from (the demo, the magics tour, the numbered lessons, the how-to
#: guides) and keeps the conventions, so a notebook added later cannot miss a check by missing
#: from a list.
TEACHING = ALL


def _cells(name: str) -> list[dict]:
    return json.loads((NOTEBOOKS / name).read_text())["cells"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def test_the_demo_is_there():
    assert "demo.ipynb" in ALL, "notebooks/demo.ipynb is what the README's main command opens"


@pytest.mark.parametrize("name", ALL)
def test_outputs_are_stripped(name):
    dirty = [i for i, c in enumerate(_cells(name)) if c["cell_type"] == "code"
             and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{name}: cells {dirty} hold outputs or execution counts; strip them before committing"


@pytest.mark.parametrize("name", ALL)
def test_every_cell_has_a_unique_id(name):
    """nbformat 4.5 gives every cell an id; a cell added without one (by hand, or by a script
    that writes the JSON) makes nbformat warn on every run, and its next major release
    refuses the notebook."""
    ids = [c.get("id") for c in _cells(name)]
    missing = [i for i, x in enumerate(ids) if not x]
    assert not missing, f"{name}: cells {missing} have no id"
    repeated = sorted({x for x in ids if ids.count(x) > 1})
    assert not repeated, f"{name}: cell ids {repeated} are used twice"


@pytest.mark.parametrize("name", TEACHING)
def test_opens_with_what_you_learn_and_ends_with_next_steps(name):
    cells = _cells(name)
    first, last = cells[0], cells[-1]
    assert first["cell_type"] == "markdown" and _source(first).startswith("# "), f"{name}: open with a title"
    assert re.search(r"learn", _source(first), re.I), f"{name}: the first cell should say what the reader will learn"
    assert last["cell_type"] == "markdown" and re.search(r"exercises|next steps|next:", _source(last), re.I), \
        f"{name}: end with exercises or next steps"


@pytest.mark.parametrize("name", TEACHING)
def test_first_code_cell_holds_the_parameters(name):
    code = next(c for c in _cells(name) if c["cell_type"] == "code")
    assert "parameters" in code.get("metadata", {}).get("tags", []), f"{name}: tag the first code cell 'parameters'"
    for line in _source(code).splitlines():
        stripped = line.split("#")[0].strip()
        assert not stripped or re.match(r"^[A-Z_][A-Z0-9_, ]*=", stripped), \
            f"{name}: the parameters cell should only assign UPPER_CASE names, found {line!r}"


@pytest.mark.parametrize("name", ALL)
def test_bokeh_loads_inline(name):
    text = "\n".join(_source(c) for c in _cells(name) if c["cell_type"] == "code")
    for call in re.findall(r"output_notebook\(([^)]*)\)", text):
        assert "INLINE" in call, f"{name}: output_notebook({call}) must load BokehJS inline (INLINE)"
    assert "CDN" not in text, f"{name}: no CDN resources"
