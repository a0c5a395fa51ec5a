"""The result objects the magics return: traces, step summaries (folded), bounded text."""
from __future__ import annotations

import pandas as pd

from ddlab.kernel_ext.display.lattice import lattice_grid
from ddlab.kernel_ext.display.results import StepSummary, TraceResult
from ddlab.kernel_ext.epochs import EpochLine, StepResult

from .flows import small_flow


def test_trace_result_groups_by_time_and_shows_the_lattice():
    flow, _, _ = small_flow()
    grid = lattice_grid(flow.lattice("root/scc"))
    hist = pd.DataFrame({"a": [1, 2, 3], "time": [(0,), (1,), (1,)], "diff": [1, 1, -1]})
    tr = TraceResult("a", hist, 2, {"root/scc": grid})
    assert tr.by_time["updates"].tolist() == [1, 2]
    assert tr.by_time["retractions"].tolist() == [0, 1]
    html = tr._repr_html_()
    assert "3 updates at 2 times" in html and "lattice" in html
    assert "rgba(9,105,218" in html                      # shaded cells
    assert "lattice of loop root/scc" in repr(tr)


def test_step_summary_folds_long_runs():
    lines = [EpochLine(i, 0.001, {"e": (i, 0)}) for i in range(30)]
    s = StepSummary(StepResult(lines))
    text = repr(s)
    assert "epoch 0 |" in text and "epoch 29 |" in text and "18 more epochs" in text
    assert "30 epochs in" in text
    assert s._repr_html_().count("<div><b>epoch") == 12


def test_an_empty_step_summary_says_why():
    s = StepSummary(StepResult([], "3 rows queued on edges"))
    assert repr(s) == "3 rows queued on edges" and "3 rows queued" in s._repr_html_()
