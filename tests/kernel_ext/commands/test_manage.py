"""``%dd status``, ``drop``, ``rebuild``, ``reset``."""
from __future__ import annotations

import pandas as pd

from ddlab.kernel_ext import get_magics

from ..conftest import as_dict, cell, dd, html_of


def test_rebuild_restart_drop_and_reset(ip):
    ip.user_ns["df"] = pd.DataFrame({"src": [1, 2], "dst": [2, 3]})
    dd(ip, "input edges --from df")
    cell(ip, "cc", "connected_components(edges)")
    dd(ip, "insert edges [(4, 5)]")
    before = as_dict(dd(ip, "show cc").frame)
    status = dd(ip, "rebuild")
    s = get_magics(ip).session
    assert s.flow.epoch == 2 and as_dict(dd(ip, "show cc").frame) == before
    assert "after epoch 1" in repr(status)
    dd(ip, "rebuild --restart")
    assert s.flow.epoch == 0 and s.pending("edges") == 2
    assert as_dict(dd(ip, "show cc").frame) == {}
    dd(ip, "step")
    assert as_dict(dd(ip, "show cc").frame) == {(1, 1): 1, (2, 1): 1, (3, 1): 1}

    dd(ip, "drop cc")
    assert "cc" not in ip.user_ns and s.names == ["edges"]
    ip.user_ns["keep"] = ip.user_ns["edges"]
    dd(ip, "reset")
    assert "edges" not in ip.user_ns and s.names == [] and s.flow.epoch == 0



def test_name_alone_shows_and_status_lists_declarations(ip):
    ip.user_ns["df"] = pd.DataFrame({"src": [1], "dst": [2]})
    dd(ip, "input edges --from df")
    status = dd(ip, "")
    rows = status.rows()
    assert rows["name"].tolist() == ["edges"] and rows["queued"].tolist() == [1]
    assert "no epoch completed yet" in repr(status)
    assert status.flow is get_magics(ip).session.flow
    assert dd(ip, "edges").name == "edges"
    assert "Dataflow" in html_of(status.flow) and "edges" in html_of(status.flow)


def test_reset_with_workers_runs_the_session_on_them(ip):
    """``%dd reset --workers 2``: declarations, windows of steps and rebuilds on two worker
    processes, with the same results as one; ``%dd status`` says so."""
    try:
        dd(ip, "reset --workers 2")
        s = get_magics(ip).session
        ip.user_ns["df"] = pd.DataFrame({"src": [1, 2, 7], "dst": [2, 3, 8]})
        dd(ip, "input edges --from df")
        cell(ip, "cc", "connected_components(edges)")
        dd(ip, "insert edges [(4, 5), (3, 4)]")
        assert s.flow.workers == 2 and s.flow.epoch == 2
        want = {(n, 1): 1 for n in (1, 2, 3, 4, 5)} | {(7, 7): 1, (8, 7): 1}
        assert as_dict(dd(ip, "show cc").frame) == want
        assert "2 workers" in repr(dd(ip, "status"))
        old = s.flow
        cell(ip, "deg", "edges.project(0).count()")  # a rebuild: a new flow, the old closed
        assert s.flow is not old and s.flow.workers == 2 and s.flow.epoch == 2
        assert as_dict(dd(ip, "show cc").frame) == want
        assert as_dict(dd(ip, "show deg").frame) == {(1, 1): 1, (2, 1): 1, (7, 1): 1,
                                                     (4, 1): 1, (3, 1): 1}
        assert old._team is None or old._team.broken
    finally:
        dd(ip, "reset --workers 1")
    assert get_magics(ip).session.flow.workers == 1
