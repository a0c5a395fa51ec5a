"""The small engine hooks explanations (``engine.why``) read: looking a value's code up
without interning it, and scanning a trace by a non-key field."""
from __future__ import annotations

import random

import numpy as np

import ddlab
from ddlab.engine.columns import Interner


def test_interner_code_looks_up_without_adding():
    interner = Interner()
    codes = interner.intern(["x", "y", "x"])
    assert interner.code("x") == codes[0] and interner.code("y") == codes[1]
    assert interner.code("never") is None and interner.code([1, 2]) is None
    assert len(interner) == 2


def _rows_by_scan(trace, column, values):
    rows = trace.rows_where(column, values)
    return sorted(zip(*[c.tolist() for c in rows.cols], map(tuple, rows.times.tolist()),
                      rows.diffs.tolist()))


def test_rows_where_matches_a_filter_of_all_rows_across_spine_and_recent_rows():
    rng = random.Random(3)
    flow = ddlab.Dataflow()
    pairs = flow.input("pairs", columns=["a", "b"])
    arranged = pairs.arrange()
    _ = arranged.view()
    live = {}
    for epoch in range(12):   # big and small inserts: spine batches, merges, recent rows
        n = 300 if epoch % 4 == 0 else 5
        rows = [(rng.randrange(50), rng.randrange(20)) for _ in range(n)]
        pairs.insert(rows)
        for r in rows:
            live[r] = live.get(r, 0) + 1
        gone = rng.sample(sorted(live), 3)
        pairs.remove(gone)
        for r in gone:
            live[r] -= 1
        flow.step()
    trace = arranged.op.trace
    everything = trace.all_rows()
    table = list(zip(*[c.tolist() for c in everything.cols],
                     map(tuple, everything.times.tolist()), everything.diffs.tolist()))
    for column, values in ((1, [7]), (1, [0, 3, 19]), (0, [5]), (1, [99])):
        expected = sorted(r for r in table if r[column] in values)
        assert _rows_by_scan(trace, column, values) == expected
    # the accumulated multiplicities found by scanning agree with the live contents
    got = {}
    for a, b, _, d in _rows_by_scan(trace, 1, [4]):
        got[(a, b)] = got.get((a, b), 0) + d
    assert {r: m for r, m in got.items() if m} == {r: m for r, m in live.items()
                                                   if m and r[1] == 4}


def test_rows_where_on_float_columns_and_entered_traces():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["k", "w"])
    arranged = xs.arrange()
    _ = arranged.view()
    xs.insert([(1, 0.5), (2, 1.5), (3, 0.5)])
    flow.step()
    rows = arranged.op.trace.rows_where(1, [0.5])
    assert sorted(rows.cols[0].tolist()) == [1, 3]
    from ddlab.engine.trace import EnteredTrace

    entered = EnteredTrace(arranged.op.trace, 1).rows_where(1, [1.5])
    assert entered.cols[0].tolist() == [2] and entered.times.shape == (1, 2)
    assert np.all(entered.times[:, 1] == 0)


def test_input_changes_keep_the_last_two_epochs_and_roll_back_with_a_failed_one():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["x", "y"])
    out = xs.map(lambda r: 1 // (r[1] - 9))   # y == 9 fails the epoch
    _ = out.view()
    xs.insert([(1, 1), (2, 1)])
    flow.step()
    xs.insert([(3, 1)])
    xs.remove([(1, 1)])
    flow.step()
    xs.insert([(4, 1), (4, 1)])
    flow.step()
    last = flow.input_changes()["xs"]
    assert last.to_dict("list") == {"x": [4], "y": [1], "diff": [2]}
    before = flow.input_changes(1)["xs"].sort_values("x")
    assert before.to_dict("list") == {"x": [1, 3], "y": [1, 1], "diff": [-1, 1]}
    assert flow.input_changes(0) == {}            # only the last two epochs are kept
    xs.insert([(5, 9)])
    try:
        flow.step()
    except ddlab.OperatorError:
        pass
    assert flow.input_changes()["xs"].to_dict("list") == {"x": [4], "y": [1], "diff": [2]}


def test_retained_by_operator_adds_up_to_the_epoch_log_every_epoch():
    from ddlab.algorithms import connected_components

    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    _ = connected_components(edges, prioritized=False).view()
    rng = random.Random(1)
    for _ in range(6):
        edges.insert([(rng.randrange(30), rng.randrange(30)) for _ in range(20)])
        flow.step()
        per_op = flow.retained_by_operator()
        assert sum(per_op.values()) == flow.retained_updates() == \
            int(flow.epoch_log()["retained_updates"].iloc[-1])
        assert all(n > 0 for n in per_op.values())
