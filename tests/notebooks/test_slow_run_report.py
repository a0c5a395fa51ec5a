"""A slow notebook run in the suite says where its time went: in which cells, and how much
outside every cell (the kernel's start and shutdown), from the timing nbmake records."""
from __future__ import annotations

import nbformat

from executed import slow_run_report


def _notebook(spans):
    nb = nbformat.v4.new_notebook()
    for i, (began, ended) in enumerate(spans):
        cell = nbformat.v4.new_code_cell("pass")
        cell.id = f"c{i}"
        cell.metadata["execution"] = {"iopub.status.busy": f"2026-11-27T15:00:{began:06.3f}Z",
                                      "iopub.status.idle": f"2026-11-27T15:00:{ended:06.3f}Z"}
        nb.cells.append(cell)
    return nb


def test_a_run_under_the_threshold_says_nothing():
    assert slow_run_report("a.ipynb", _notebook([(1, 2)]), 0.0, 100.0) is None


def test_a_slow_run_names_its_slowest_cells_and_the_time_outside_them():
    base = 1_795_791_600.0  # 2026-11-27T15:00:00Z
    nb = _notebook([(1.0, 2.5), (3.0, 40.0), (41.0, 42.0)])
    report = slow_run_report("09.ipynb", nb, base - 300.0, base + 45.0, threshold=120.0)
    assert report == ("09.ipynb took 345.0 s: 301.0 s before its first cell, 3.0 s after its last "
                      "(the kernel's start and shutdown); cells 39.5 s, the slowest cell 1 (c1) "
                      "37.0 s, cell 0 (c0) 1.5 s, cell 2 (c2) 1.0 s")
