"""Explanations run with the cyclic garbage collector paused (``engine/why/gc_pause``: an
explanation's burst of small allocations otherwise starts collections of the whole heap),
and leave it as they found it: on after, off if it was off, on after an error and after a
nested explanation (a record that left)."""
from __future__ import annotations

import gc

import pytest

import ddlab
from ddlab.engine.errors import DataflowError


def _flow(seen: list):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])

    def hop(r):
        seen.append(gc.isenabled())      # called by the replay that checks an explanation
        return (r[1], r[0])

    out = edges.map(hop).distinct()
    view = out.view()
    edges.insert([(1, 2), (2, 3)])
    flow.step()
    return flow, edges, out, view


def test_the_collector_is_paused_during_an_explanation_and_restored_after():
    seen: list = []
    flow, edges, out, view = _flow(seen)
    assert gc.isenabled()
    seen.clear()
    why = flow.why(out, (2, 1))
    assert why.verified and seen and not any(seen)     # the replay ran with it paused
    assert gc.isenabled()
    edges.remove([(1, 2)])
    flow.step()
    seen.clear()
    gone = flow.why(out, (2, 1))                        # explained again on the previous epoch
    assert not gone.present and gone.previous is not None and gone.previous.present
    assert seen and not any(seen) and gc.isenabled()
    with pytest.raises(DataflowError):
        flow.why(view, (2, 1))                          # not a collection: refused
    assert gc.isenabled()


def test_an_explanation_leaves_a_disabled_collector_disabled():
    seen: list = []
    flow, _, out, _ = _flow(seen)
    gc.disable()
    try:
        assert flow.why(out, (3, 2)).verified
        assert not gc.isenabled()
    finally:
        gc.enable()
