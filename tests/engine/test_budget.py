"""The runaway-epoch budget: an exploding join stops with a clear error before memory is spent,
the epoch is rolled back, and the flow keeps working."""
from __future__ import annotations

import tracemalloc

import pytest

import ddlab
from ddlab import BudgetExceeded

from .reliability_helpers import apply, build_program, epochs, reading


def test_exploding_join_stops_before_materialising():
    flow = ddlab.Dataflow(max_rows_per_epoch=1_000_000)
    x = flow.input("x")
    pairs = x.join(x, name="pairs").view()
    small = x.count().view()
    x.insert([(i % 3, i) for i in range(30)])
    flow.step()
    before = (pairs.to_dict(), small.to_dict(), flow.epoch, flow.retained_updates(),
              len(flow.stats()))
    # 40,000 records on one key: 1.6 billion matches (~100 GB if gathered)
    x.insert([(7, i) for i in range(40_000)])
    tracemalloc.start()
    try:
        with pytest.raises(BudgetExceeded, match=r"pairs#\d+ in 'root' would join 1,6\d\d,\d{3},"
                                                 r"\d{3} rows in epoch 1, over the budget of "
                                                 r"1,000,000 rows") as info:
            flow.step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20  # it stopped before gathering the matches
    err = info.value
    assert err.operator.startswith("pairs#") and err.limit == 1_000_000 and err.rows > 10**9
    assert isinstance(err, MemoryError)
    assert (pairs.to_dict(), small.to_dict(), flow.epoch, flow.retained_updates(),
            len(flow.stats())) == before
    x.insert([(1, 100)])
    flow.step()
    assert pairs.to_dict()[(1, 100, 100)] == 1


def test_budget_counts_rows_over_a_whole_epoch_and_restarts_each_step():
    flow = ddlab.Dataflow(max_rows_per_epoch=30)
    x = flow.input("x")
    # a loop: each iteration emits a few rows, the epoch's total crosses the budget
    counter = x.iterate(lambda v: v.map(lambda r: min(r + 1, 40)).concat(x).distinct())
    out = counter.view()
    x.insert([0])
    with pytest.raises(BudgetExceeded, match=r"over the budget of 30 rows per operator per epoch"):
        flow.step()
    assert flow.epoch == 0 and out.to_dict() == {}
    flow.max_rows_per_epoch = None  # lifted
    x.insert([0])
    flow.step()
    assert out.to_dict() == {i: 1 for i in range(41)}
    flow.max_rows_per_epoch = 30
    x.insert([100])  # a small epoch fits: the count restarted
    flow.step()
    assert out.to_dict()[100] == 1


def test_flat_map_explosion_is_refused():
    flow = ddlab.Dataflow(max_rows_per_epoch=10_000)
    x = flow.input("x")
    x.flat_map(lambda r: range(r), name="fan").view()
    x.insert([5_000, 6_000])
    with pytest.raises(BudgetExceeded, match=r"fan#\d+ .* would produce 11,000 rows"):
        flow.step()
    assert flow.epoch == 0


def test_default_budget_does_not_change_results():
    batches = epochs(3, seed=5)
    a = build_program(ddlab.Dataflow(max_iterations=200))
    b = build_program(ddlab.Dataflow(max_iterations=200, max_rows_per_epoch=None))
    for batch in batches:
        for flow, inputs, _, _ in (a, b):
            apply(inputs, batch)
            flow.step()
        ra, rb = reading(*a[:3]), reading(*b[:3])
        assert ra["views"] == rb["views"]
