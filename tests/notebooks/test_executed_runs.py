"""The suite's notebook runs (``tests/support/executed.py``): a slow one says where its time
went, in which cells and how much outside every cell (the kernel's start and shutdown), from the
timing nbmake records; and a run made in one test process is read by the others."""
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


def test_a_slow_run_names_the_longest_wait_between_two_cells():
    base = 1_795_791_600.0
    nb = _notebook([(1.0, 2.0), (2.5, 3.0), (50.0, 51.0)])
    report = slow_run_report("09.ipynb", nb, base, base + 200.0, threshold=120.0)
    assert report.endswith("; the longest wait between two cells 47.0 s, after cell 1 (c1) and "
                           "before cell 2 (c2)"), report


def test_a_run_is_shared_with_the_sessions_other_test_processes(tmp_path, monkeypatch):
    """What one test process executed, another reads (``executed.share_runs``) instead of
    executing the notebook again; a notebook no process of the session runs is not waited for."""
    from nbmake.nb_result import NotebookError, NotebookResult

    import executed as ex

    monkeypatch.setattr(ex, "_SHARED", {"dir": None, "expected": frozenset(), "gave_up": False})
    monkeypatch.setattr(ex, "SHARED_WAIT_SECONDS", 2.0)  # (a run not written fails, not hangs)
    ran, failed, absent = tmp_path / "ran.ipynb", tmp_path / "failed.ipynb", tmp_path / "absent.ipynb"
    ex.share_runs(tmp_path / "shared", [ran, failed])
    nb = _notebook([(1, 2)])
    ex._write_shared(ran, NotebookResult(nb=nb, error=None))
    ex._write_shared(failed, NotebookResult(nb=nb, error=NotebookError("boom", "trace", 3)))
    got = ex._read_shared(ran)
    assert got.error is None and got.nb.cells[0].id == "c0"
    assert ex._read_shared(failed).error == NotebookError("boom", "trace", 3)
    assert ex._read_shared(absent) is None
