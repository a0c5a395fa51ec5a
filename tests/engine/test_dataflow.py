"""The dataflow (``engine/dataflow.py``): epochs give the same result however updates are cut
into them, and the graph it reports counts the updates each edge carried."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import ddlab
from ddlab.algorithms import connected_components
from ddlab.engine.errors import DataflowError, StepInProgress

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



# -- epochs in flight (Dataflow.advance) --------------------------------------------------------
def test_advance_keeps_each_epochs_updates_until_the_step_and_a_failure_rolls_all_back():
    """Closed epochs wait (pending, not applied); a step that fails rolls every epoch in flight
    back and hands all their updates over; the same epochs then step as one epoch each."""
    from ddlab import NonConvergenceError

    flow = ddlab.Dataflow(max_iterations=5)
    xs = flow.input("xs")
    v = xs.iterate(lambda c: c.map(lambda x: (x + 1) % 100 if x >= 50 else x).distinct()).view()
    xs.insert([1])
    assert flow.advance() == 1
    xs.insert([2])
    assert flow.advance() == 2
    xs.insert([60])                                   # never converges: epoch 2 fails
    assert xs.pending_count == 3 and xs.pending_updates() == [(1, 1), (2, 1), (60, 1)]
    with pytest.raises(NonConvergenceError) as info:
        flow.step()
    assert flow.epoch == 0 and flow.in_flight == 0 and v.to_dict() == {}
    assert info.value.discarded_updates == {"xs": [(1, 1), (2, 1), (60, 1)]}
    assert any("epochs 0-2 (in flight together) were rolled back" in n for n in info.value.__notes__)
    assert xs.pending_count == 0 and flow.epoch_log().empty
    xs.insert([1])
    flow.advance()
    xs.insert([2])
    flow.step()
    assert flow.epoch == 2 and v.to_dict() == {1: 1, 2: 1}
    assert list(flow.epoch_log()["input_updates"]) == [1, 1]


def test_advance_is_refused_during_a_step_and_on_several_workers():
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    failures = []

    def advance_from_callback(updates):
        try:
            flow.advance()
        except StepInProgress as err:
            failures.append(str(err))
    xs.subscribe(advance_from_callback)
    xs.insert([1])
    flow.step()
    assert failures and "advance() was called while epoch" in failures[0]
    assert flow.in_flight == 0 and flow.epoch == 1

    two = ddlab.Dataflow(workers=2)
    ys = two.input("ys")
    ys.insert([1])
    with pytest.raises(DataflowError, match="runs on 2 workers, and epochs in flight"):
        two.advance()
    assert two.in_flight == 0 and ys.pending_count == 1
    two.close()
