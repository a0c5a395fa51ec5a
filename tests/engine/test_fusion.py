"""Fusing arrangements into their only reader (``engine/runtime/wiring.py``): the same results and
the same statistics, run by run, as with every arrangement scheduled on its own."""
from __future__ import annotations

from hypothesis import given, settings

import ddlab
from ddlab import algorithms
from ddlab.engine.runtime import wiring
from graph_oracle import cc_oracle, scc_oracle

from .graph_programs import EPOCHS, edge_epochs, step_through


def _run(epochs, fused: bool):
    original = wiring._fuse
    if not fused:
        wiring._fuse = lambda ops, workers: None
    try:
        return _steps(epochs)
    finally:
        wiring._fuse = original


def _steps(epochs):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    views = [algorithms.connected_components(edges).view(),
             algorithms.strongly_connected_components(edges).view(),
             edges.join(edges.project(1, 0), select=(1, 2)).count().view()]
    out = step_through(flow, edges, views, epochs)
    stats = flow.stats()
    stats = stats.assign(time=stats.time.astype(str))
    records = sorted(zip(stats.operator, stats.time, stats["in"], stats["out"]))
    fused_count = sum(1 for op in flow.operators if getattr(op, "fused_into", None) is not None)
    return out, records, fused_count


@settings(max_examples=30, deadline=None)
@given(plan=EPOCHS)
def test_fused_and_unfused_runs_agree_run_by_run(plan):
    epochs = list(edge_epochs(plan))
    fused, fused_stats, n_fused = _run(epochs, True)
    plain, plain_stats, n_plain = _run(epochs, False)
    assert n_fused > 0 and n_plain == 0
    assert fused == plain
    assert fused_stats == plain_stats  # every operator run, its time, updates in and out
    for (views, present) in fused:
        assert views[0] == cc_oracle(present)
        assert views[1] == scc_oracle(present)


def test_a_shared_or_entered_arrangement_is_not_fused():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["k", "v"])
    shared = xs.arrange()
    a, b = shared.count().view(), shared.min().view()
    looped = xs.iterate(lambda v: v.join(xs, select=(0, 2)).concat(v).distinct()).view()
    xs.insert([(1, 2), (1, 3)])
    flow.step()
    assert a.to_dict() == {(1, 2): 1} and b.to_dict() == {(1, 2): 1}
    assert looped.to_dict() == {(1, 2): 1, (1, 3): 1}
    arrangements = [op for op in flow.operators if op.kind == "arrange"]
    fused = {op.label for op in arrangements if op.fused_into is not None}
    assert shared.label not in fused
    assert len(fused) < len(arrangements)
