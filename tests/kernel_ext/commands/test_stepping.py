"""``%dd step``, ``insert``, ``remove``: epochs from queued rows, literals, lists and frames."""
from __future__ import annotations

import numpy as np
import pytest
from IPython.utils.capture import capture_output

import ddlab
from ddlab.kernel_ext import get_magics

from ..conftest import as_dict, cell, dd, html_of


def test_step_applies_rows_inserted_from_python(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    ip.run_cell("edges.insert([(1, 2), (2, 3)])")
    assert get_magics(ip).session.pending() == 2
    result = dd(ip, "step")
    assert result.lines[0].changes["edges"] == (2, 0)
    assert as_dict(dd(ip, "show cc").frame) == {(1, 1): 1, (2, 1): 1, (3, 1): 1}
    # an engine step report renders through the formatter; a view built after data flowed
    # would miss it, so the engine refuses it
    ip.run_cell("edges.insert([(7, 8)]); report = edges.flow.step()")
    assert "epoch 1" in html_of(ip.user_ns["report"])
    with capture_output(), pytest.raises(ddlab.DataflowError, match="already sent updates"):
        ip.run_cell("v = cc.view()").raise_error()



def test_rows_from_lists_and_single_tuples(ip):
    dd(ip, "input pairs --columns a,b")
    dd(ip, "insert pairs (1, 2)")
    dd(ip, "insert pairs [[3, 4], [5, 6]]")
    ip.user_ns["more"] = [(7, 8)]
    dd(ip, "insert pairs more")
    assert as_dict(dd(ip, "show pairs").frame) == {(1, 2): 1, (3, 4): 1, (5, 6): 1, (7, 8): 1}
    dd(ip, "input ones --columns x")
    dd(ip, "insert ones [1, 2, 2]")
    assert as_dict(dd(ip, "show ones").frame) == {(1,): 1, (2,): 2}



def test_step_without_window_is_one_epoch(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "insert edges [(1, 2)] --no-step")
    r = dd(ip, "step 5")
    assert r.epochs == 1 and r.lines[0].changes["edges"] == (1, 0)
    assert np.isclose(sum(line.seconds for line in r.lines), r.lines[0].seconds)
