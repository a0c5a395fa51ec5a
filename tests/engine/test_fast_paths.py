"""Every fast path computes exactly what the general path does (and both what the oracle
says): the same programs run with ``use_fast_paths(True)`` and ``(False)``."""
from __future__ import annotations

from hypothesis import given

import ddlab
from ddlab import algorithms
from ddlab.engine.config import use_fast_paths

from .test_algorithms import EPOCHS, _epochs, cc_oracle, scc_oracle
from .test_operators import EPOCHS as RECORD_EPOCHS, UNARY, _accumulate


def _run_graph(plan, enabled):
    return _run_graph_on(_epochs(plan), enabled)


def _run_graph_on(epochs, enabled):
    """CC (plain, prioritized) and SCC (prioritized, plain) views after each of ``epochs``
    (``(adds, removals, present)``): ``[(four view dicts, present), ...]``."""
    with use_fast_paths(enabled):
        flow = ddlab.Dataflow()
        edges = flow.input("edges", columns=["src", "dst"])
        views = [algorithms.connected_components(edges, prioritized=False).view(),
                 algorithms.connected_components_prioritized(edges).view(),
                 algorithms.strongly_connected_components(edges, prioritized=True).view(),
                 algorithms.strongly_connected_components(edges, prioritized=False).view()]
        results = []
        for adds, rems, present in epochs:
            edges.insert(adds)
            edges.remove(rems)
            flow.step()
            results.append(([v.to_dict() for v in views], present))
        return results


@given(plan=EPOCHS)
def test_graph_programs_same_on_both_paths(plan):
    fast = _run_graph(plan, True)
    general = _run_graph(plan, False)
    assert [r[0] for r in fast] == [r[0] for r in general]
    for (views, present) in fast:
        assert views[0] == views[1] == cc_oracle(present)
        assert views[2] == views[3] == scc_oracle(present)


@given(epochs=RECORD_EPOCHS)
def test_aggregates_same_on_both_paths(epochs):
    names = ["min", "max", "distinct", "count", "top_k", "union", "self_join"]
    outs = []
    for enabled in (True, False):
        with use_fast_paths(enabled):
            flow = ddlab.Dataflow()
            records = flow.input("records", columns=["k", "v"])
            views = [UNARY[n][0](records).view() for n in names]
            seen = []
            for epoch in epochs:
                records.update(epoch)
                flow.step()
                seen.append([v.to_dict() for v in views])
            outs.append(seen)
    assert outs[0] == outs[1]
    for got, want in zip(outs[0], _accumulate(epochs)):
        assert got == [UNARY[n][1](want) for n in names]
