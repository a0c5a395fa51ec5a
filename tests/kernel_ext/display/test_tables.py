"""The shared tables: bounded, coloured by the sign of a diff, escaped."""
from __future__ import annotations

import doctest

import pandas as pd

from ddlab.kernel_ext.display import tables


def test_frame_html_is_bounded_and_colours_diffs():
    frame = pd.DataFrame({"x": range(1000), "diff": [1, -1] * 500})
    html = tables.frame_html(frame, 7, diff="diff", counts=("diff",))
    assert html.count("<tr>") == 1 + 7 and "showing 7 of 1,000 rows" in html
    assert html.count(tables.ADD) == 2 * 4 and html.count(tables.DEL) == 2 * 3   # per cell
    assert "&lt;b&gt;" in tables.frame_html(pd.DataFrame({"s": ["<b>"]}))   # escaped


def test_docstring_examples():
    result = doctest.testmod(tables)
    assert result.attempted >= 3 and result.failed == 0
