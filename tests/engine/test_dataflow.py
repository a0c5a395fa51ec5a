"""The dataflow (``engine/dataflow.py``): epochs give the same result however updates are cut
into them, and the graph it reports counts the updates each edge carried."""
from __future__ import annotations

from hypothesis import given, strategies as st

import ddlab
from ddlab.algorithms import connected_components

from .record_programs import EPOCHS


@given(epochs=EPOCHS, cuts=st.lists(st.integers(0, 40), max_size=6))
def test_result_does_not_depend_on_batching(epochs, cuts):
    """The same updates cut into different epochs give the same final collection."""
    updates = [u for e in epochs for u in e]
    cuts = sorted(set(c % (len(updates) + 1) for c in cuts))
    batches = [updates[a:b] for a, b in zip([0] + cuts, cuts + [len(updates)])]
    results = []
    for plan in (epochs, batches, [updates]):
        flow = ddlab.Dataflow()
        records = flow.input("records", columns=["k", "v"])
        out = records.iterate(lambda v, r=records: r.enter(v).join(r.enter(v)).project(0, 2)
                              .concat(r.enter(v)).distinct().min()).view()
        for batch in plan:
            records.update(batch)
            flow.step()
        results.append(out.to_dict())
    assert results[0] == results[1] == results[2]



def test_graph_counts_updates_per_edge_in_the_last_epoch():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    connected_components(edges, prioritized=False).view()  # one loop kind (no auto choice)
    edges.insert([(1, 2), (2, 3)])
    flow.step()
    ops, links = flow.graph()
    assert set(ops.scope_kind) == {"epoch", "iteration"}
    source = ops.loc[ops.kind == "input", "id"].item()
    assert set(links.loc[links.source == source, "updates"]) == {2}
    assert len(links) == sum(len(op.inputs) for op in flow.operators)

