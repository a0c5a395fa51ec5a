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


def test_a_derivation_is_listed_with_the_collector_paused(monkeypatch):
    """``nodes()`` (what a proof tree and the explorer read) builds a dict per step: paused
    too, and restored after."""
    import importlib

    from ddlab.algorithms import connected_components

    module = importlib.import_module("ddlab.engine.why.explain")
    seen: list = []
    shown = module.display_time
    monkeypatch.setattr(module, "display_time",
                        lambda t, kinds: seen.append(gc.isenabled()) or shown(t, kinds))
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges)
    edges.insert([(1, 2), (2, 3), (3, 4)])
    flow.step()
    nodes = flow.why(labels, (4, 1)).nodes()
    assert len(nodes) > 2 and seen and not any(seen) and gc.isenabled()


def test_a_rules_proof_is_built_with_the_collector_paused(monkeypatch):
    """A rules program's ``why`` (``rules.proof``) pauses the collector as explanations do
    (its proofs of long paths allocate as much), and restores it."""
    from ddlab.engine.rules import proof

    flow = ddlab.Dataflow()
    edge = flow.input("edge", columns=["src", "dst"])
    program = ddlab.rules(".input edge\npath(x, y) :- edge(x, y).\n"
                          "path(x, z) :- path(x, y), edge(y, z).\n.output path",
                          {"edge": edge}, flow=flow)
    edge.insert([(1, 2), (2, 3), (3, 4)])
    flow.step()
    seen = []
    build = proof._Prover.build

    def watched(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return build(self, *args, **kwargs)

    monkeypatch.setattr(proof._Prover, "build", watched)
    assert gc.isenabled()
    tree = program.why("path", (1, 4))
    assert tree.height == 3 and seen and not any(seen)
    assert gc.isenabled()
