"""Graph test programs: random edge-set epochs, and CC/SCC (every variant) run over them, for
the algorithm tests and the path-equivalence tests (``test_tuning``)."""
from __future__ import annotations

from hypothesis import strategies as st

import ddlab
from ddlab import algorithms
from ddlab.engine.testing import tuned
from graph_oracle import cc_oracle, scc_oracle

EDGE = st.tuples(st.integers(0, 12), st.integers(0, 12))
#: (insertions, deletion picks) per epoch; see :func:`edge_epochs`
EPOCHS = st.lists(st.tuples(st.lists(EDGE, max_size=10), st.lists(st.integers(0, 50), max_size=5)),
                  min_size=1, max_size=6)


def edge_epochs(plan):
    """Turn (insertions, deletion picks) into edge-set changes ``(adds, removals, present)``;
    deletions pick existing edges."""
    present: set = set()
    for adds, picks in plan:
        adds = sorted(set(adds) - present)
        pool = sorted(present)
        rems = sorted({pool[p % len(pool)] for p in picks}) if pool else []
        rems = [r for r in rems if r not in adds]
        present = (present | set(adds)) - set(rems)
        yield adds, rems, set(present)


def run_graph(epochs, preset=None, workers: int = 1):
    """CC (plain, prioritized) and SCC (prioritized, plain) views after each of ``epochs``
    (``(adds, removals, present)``), built and run under the tuning ``preset`` on
    ``workers``: ``[(four view dicts, present), ...]``."""
    with tuned(preset):
        flow = ddlab.Dataflow(workers=workers)
        try:
            edges = flow.input("edges", columns=["src", "dst"])
            views = [algorithms.connected_components(edges, prioritized=False).view(),
                     algorithms.connected_components_prioritized(edges).view(),
                     algorithms.strongly_connected_components(edges, prioritized=True).view(),
                     algorithms.strongly_connected_components(edges, prioritized=False).view()]
            return step_through(flow, edges, views, epochs)
        finally:
            flow.close()


def step_through(flow, edges, views, epochs) -> list:
    """Each of ``epochs`` (``(adds, removals, present)``) applied to ``edges`` and stepped:
    ``[(the views' dicts, present), ...]``."""
    results = []
    for adds, rems, present in epochs:
        edges.insert(adds)
        edges.remove(rems)
        flow.step()
        results.append(([v.to_dict() for v in views], present))
    return results


def assert_same_and_correct(runs, reference):
    """``runs`` (of :func:`run_graph`) read like ``reference`` after every epoch, and both like
    the oracles."""
    assert [r[0] for r in runs] == [r[0] for r in reference]
    for views, present in runs:
        assert views[0] == views[1] == cc_oracle(present)
        assert views[2] == views[3] == scc_oracle(present)


def churn_cc_and_scc(seed: int, epochs: int) -> None:
    """CC and SCC over ``epochs`` random epochs of a 30-node edge set (three deletions of
    present edges and four insertions each), equal to the oracles after every epoch: the
    body of the tests that split one run between two code paths (kernels or numpy, by the
    parity of the time)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    cc = algorithms.connected_components(edges).view()
    scc = algorithms.strongly_connected_components(edges).view()
    present: set = set()
    for _ in range(epochs):
        pool = sorted(present)
        gone = {pool[i] for i in rng.integers(0, len(pool), 3)} if pool else set()
        new = {(int(a), int(b)) for a, b in rng.integers(0, 30, size=(4, 2))} - present
        edges.remove(sorted(gone))
        edges.insert(sorted(new))
        present = (present - gone) | new
        flow.step()
        assert cc.to_dict() == cc_oracle(present)
        assert scc.to_dict() == scc_oracle(present)
