"""The small-delta paths (issue 13) against the general numpy paths and an oracle: dict
consolidation of a few rows, few-key trace lookups, and the automatic choice between plain
and prioritized label propagation (including its rollback)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ddlab
from ddlab.engine import kernels
from ddlab import algorithms
from ddlab.engine import batch as batch_mod
from ddlab.engine.batch import Batch, consolidate
from ddlab.engine.config import use_fast_paths
from ddlab.engine.trace import Trace

from .test_algorithms import cc_oracle, scc_oracle

ROWS = st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2), st.integers(0, 2),
                          st.integers(-2, 2)), max_size=2 * batch_mod.SMALL_ROWS)


@pytest.fixture(autouse=True)
def _without_kernels(monkeypatch):
    """These tests check the Python paths against the general path: the compiled kernels,
    which would otherwise take the same runs, are off here (tests/engine/test_kernels.py
    checks them against both)."""
    monkeypatch.setattr(kernels, "enabled", False)


def _arrays(rows):
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return (a[:, 0].copy(), a[:, 1].copy()), a[:, 2:3].copy(), a[:, 3].copy()


@given(rows=ROWS, with_times=st.booleans())
def test_small_consolidation_equals_general_and_oracle(rows, with_times):
    cols, times, diffs = _arrays(rows)
    args = (cols, diffs, times) if with_times else (cols, diffs)
    fast = consolidate(*args)
    with use_fast_paths(False):
        general = consolidate(*args)
    for f, g in zip(fast, general):
        f, g = (f if isinstance(f, tuple) else (f,)), (g if isinstance(g, tuple) else (g,))
        for a, b in zip(f, g):
            np.testing.assert_array_equal(a, b)
    want = Counter()
    for r in rows:
        want[(r[0], r[1]) + ((r[2],) if with_times else ())] += r[3]
    want = sorted((k, v) for k, v in want.items() if v)
    out_cols, out_diffs = fast[0], fast[-1]
    got = [((int(a), int(b)) + ((int(fast[1][i, 0]),) if with_times else ()), int(d))
           for i, (a, b, d) in enumerate(zip(out_cols[0], out_cols[1], out_diffs))]
    assert got == want  # sorted by record (then time), zeros dropped


class _Clock:
    epoch = 0


@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 5)),
                                 min_size=1, max_size=12), min_size=1, max_size=6),
       queries=st.lists(st.integers(-1, 31), max_size=24))
def test_small_lookups_equal_general(batches, queries):
    trace = Trace(1, 2, _Clock(), "t")
    for i, rows in enumerate(batches):
        a = np.array(rows, dtype=np.int64)
        trace.insert((0, i), Batch([a[:, 0], a[:, 1]], ("i", "i"),
                                   np.ones(len(a), dtype=np.int64)))
    codes = np.unique(np.array(queries, dtype=np.int64))
    repeated = np.array(queries, dtype=np.int64)

    def rows_of(r):
        return sorted(zip(r.keycode.tolist(), *[c.tolist() for c in r.cols],
                          map(tuple, r.times.tolist()), r.diffs.tolist()))

    fast_g, (fq, fr) = trace.gather(codes), trace.gather_matches(repeated)
    with use_fast_paths(False):
        gen_g, (gq, gr) = trace.gather(codes), trace.gather_matches(repeated)
    assert rows_of(fast_g) == rows_of(gen_g)
    assert sorted(zip(fq.tolist(), fr.keycode.tolist(), fr.cols[1].tolist())) == \
        sorted(zip(gq.tolist(), gr.keycode.tolist(), gr.cols[1].tolist()))
    # the oracle: every inserted row whose key is queried
    want = sorted((k, k, v, (0, i), 1) for i, rows in enumerate(batches) for k, v in rows
                  if k in set(codes.tolist()))
    assert rows_of(fast_g) == want


def test_lookup_of_the_largest_code_takes_the_two_search_path():
    trace = Trace(1, 1, _Clock(), "t")
    top = np.iinfo(np.int64).max
    trace.insert((0,), Batch([np.array([5, top, top])], ("i",), np.array([1, 1, -2])))
    rows = trace.gather(np.array([top]))
    assert sorted(rows.diffs.tolist()) == [-2, 1]


def _auto_flow(monkeypatch, threshold):
    from ddlab.engine.algorithms import graphs

    monkeypatch.setattr(graphs, "CC_PRIORITIZED_FROM_EDGES", threshold)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    cc = algorithms.connected_components(edges)
    return flow, edges, cc, cc.view()


@pytest.mark.parametrize("threshold, chosen", [(3, "prioritized"), (4, "plain")])
def test_automatic_choice_follows_the_first_load(monkeypatch, threshold, chosen):
    flow, edges, cc, view = _auto_flow(monkeypatch, threshold)
    present = {(1, 2), (2, 3), (7, 8)}
    edges.insert(sorted(present))
    flow.step()
    assert algorithms.explain_choice(cc).startswith(f"{chosen} label propagation: first load 3")
    for adds, rems in [([(3, 7)], []), ([], [(2, 3)]), ([(9, 1), (4, 5)], [(1, 2)])]:
        edges.insert(adds)
        edges.remove(rems)
        present = (present | set(adds)) - set(rems)
        flow.step()
        assert view.to_dict() == cc_oracle(present)
    stats = flow.stats()
    assert set(stats.scope) == {"root", "root/cc"}  # one loop, whichever the choice
    priorities = {t[1][0] for t in stats[stats.scope == "root/cc"].time}
    assert (priorities == {0}) == (chosen == "plain")  # plain: one priority class
    names = set(stats[stats.kind == "choose"].operator)
    assert any(f"{chosen} label propagation: first load 3 edges" in n for n in names)


def test_a_rolled_back_first_load_leaves_the_choice_open(monkeypatch):
    flow, edges, cc, view = _auto_flow(monkeypatch, 3)
    boom = edges.map(lambda r: 1 // (r[0] - 99)).view()  # fails on the record (99, 0)
    edges.insert([(1, 2), (2, 3), (99, 0)])
    with pytest.raises(Exception):
        flow.step()
    assert "not decided yet" in algorithms.explain_choice(cc)
    edges.insert([(1, 2)])
    flow.step()
    assert algorithms.explain_choice(cc).startswith("plain label propagation: first load 1")
    assert view.to_dict() == cc_oracle({(1, 2)})
    assert boom.to_dict() == {-1: 1}


def test_large_batches_take_the_field_by_field_paths_and_match_the_oracle():
    """Batches past the packed paths' 4,096-row limits (field-by-field merges, gathers and
    permuted packing), on both paths, against networkx over epochs of changes."""
    rng = np.random.default_rng(7)
    pairs = rng.integers(0, 3000, size=(6000, 2))
    present = {(int(a), int(b)) for a, b in pairs if a != b}
    for enabled in (True, False):
        with use_fast_paths(enabled):
            flow = ddlab.Dataflow()
            edges = flow.input("edges", columns=["src", "dst"])
            views = [algorithms.connected_components(edges, prioritized=p).view()
                     for p in (False, True)]
            current = set(present)
            edges.insert(sorted(current))
            flow.step()
            for _ in range(3):
                pool = sorted(current)
                gone = {pool[i] for i in rng.integers(0, len(pool), 300)}
                new = {(int(a), int(b)) for a, b in rng.integers(0, 3000, size=(300, 2))} - current
                edges.remove(sorted(gone))
                edges.insert(sorted(new))
                current = (current - gone) | new
                flow.step()
                want = cc_oracle(current)
                assert [v.to_dict() for v in views] == [want, want]


def test_large_gathers_equal_the_oracle():
    trace = Trace(1, 2, _Clock(), "t")
    rng = np.random.default_rng(3)
    inserted = []
    for i, n in enumerate([6000, 5000, 300, 9000]):
        a = rng.integers(0, 2000, size=(n, 2))
        inserted += [(int(k), int(v), (0, i)) for k, v in a]
        trace.insert((0, i), Batch([a[:, 0], a[:, 1]], ("i", "i"), np.ones(n, dtype=np.int64)))
    codes = np.unique(rng.integers(0, 2000, 1500))
    rows = trace.gather(codes)
    got = sorted(zip(rows.cols[0].tolist(), rows.cols[1].tolist(), map(tuple, rows.times.tolist())))
    keep = set(codes.tolist())
    assert got == sorted(r for r in inserted if r[0] in keep)


# -- recent rows (trace) and the reduce's Python path ------------------------------------------

class _EpochClock:
    def __init__(self):
        self.epoch = 0


@given(inserts=st.lists(st.tuples(st.integers(0, 3),  # epoch advance before the insert
                                  st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3),
                                                     st.sampled_from([-2, -1, 1, 2])),
                                           min_size=1, max_size=9)),
                        min_size=1, max_size=12),
       queries=st.lists(st.integers(-1, 13), max_size=20),
       capacity=st.sampled_from([2, 5, 1000]))
def test_recent_rows_read_like_the_spine(inserts, queries, capacity):
    """Small inserts wait in the recent rows (spilled into the spine at ``capacity`` rows);
    every way of reading the trace sees the same updates as a trace built without them."""
    from ddlab.engine import trace as trace_module

    old_capacity = trace_module.RECENT_CAPACITY
    trace_module.RECENT_CAPACITY = capacity
    try:
        traces = {}
        for enabled in (True, False):
            with use_fast_paths(enabled):
                clock = _EpochClock()
                tr = Trace(1, 2, clock, "t")
                for i, (advance, rows) in enumerate(inserts):
                    clock.epoch += advance
                    a = np.array(rows, dtype=np.int64)
                    tr.insert((clock.epoch, i), Batch([a[:, 0], a[:, 1]], ("i", "i"), a[:, 2]))
                traces[enabled] = tr
    finally:
        trace_module.RECENT_CAPACITY = old_capacity
    fast, general = traces[True], traces[False]
    codes = np.unique(np.array(queries, dtype=np.int64))
    repeated = np.array(queries, dtype=np.int64)

    def live(rows):  # the multiset of (key, value) as of every time: compaction-invariant
        acc = Counter()
        for k, v, d in zip(rows.keycode.tolist(), rows.cols[1].tolist(), rows.diffs.tolist()):
            acc[(k, v)] += d
        return {r: m for r, m in acc.items() if m}

    with use_fast_paths(True):
        fast_g, (fq, fr) = fast.gather(codes), fast.gather_matches(repeated)
        found = fast.histories(codes.tolist(), 10_000)
    with use_fast_paths(False):
        gen_g, (gq, gr) = general.gather(codes), general.gather_matches(repeated)
    assert live(fast_g) == live(gen_g)
    assert _query_multiset(fq, fr) == _query_multiset(gq, gr)
    hist = Counter()
    for c, rows in found.items():
        for row in rows:
            assert row[0] == c
            hist[(row[1], row[2])] += row[-1]
    assert {r: m for r, m in hist.items() if m} == live(gen_g)
    assert live(fast.compacted_rows()) == live(general.compacted_rows())


def _query_multiset(q, rows):
    acc = Counter()
    for i, v, d in zip(q.tolist(), rows.cols[1].tolist(), rows.diffs.tolist()):
        acc[(i, v)] += d
    return {r: m for r, m in acc.items() if m}


def test_a_one_edge_update_takes_the_python_paths(monkeypatch):
    """The equality tests above and the fuzzer only test the Python paths if they run: on a
    one-edge change of a connected-components program most reduce and join runs take them."""
    from ddlab.engine.operators.join import Join
    from ddlab.engine.operators.reduce import Reduce

    taken = Counter()

    def spy_on(cls, kind):
        original = cls._process_small

        def spy(self, *args):
            done = original(self, *args)
            taken[kind, done] += 1
            return done
        monkeypatch.setattr(cls, "_process_small", spy)
    spy_on(Reduce, "reduce")
    spy_on(Join, "join")
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = algorithms.connected_components(edges).view()
    present = {(i, i + 1) for i in range(0, 60, 2)} | {(i, i + 3) for i in range(0, 60, 5)}
    edges.insert(sorted(present))
    flow.step()
    taken.clear()
    for change in [(1, 2), (7, 40), (0, 1)]:
        if change in present:
            edges.remove([change])
            present.discard(change)
        else:
            edges.insert([change])
            present.add(change)
        flow.step()
        assert view.to_dict() == cc_oracle(present)
    assert taken["reduce", True] > 3 * taken["reduce", False]
    assert taken["join", True] > 3 * taken["join", False]


@pytest.mark.parametrize("parity", [0, 1])
def test_python_and_numpy_paths_share_a_reduce(monkeypatch, parity):
    """The reduce's Python path runs at some times and the numpy path at others (here: by
    the parity of the time; on real data, by the size of a key's history): what one path
    scheduled or wrote, the other reads.  A regression: interesting times scheduled by the
    Python path reached the numpy path as a list."""
    from ddlab.engine.operators.reduce import Reduce

    original = Reduce._process_small
    monkeypatch.setattr(Reduce, "_process_small",
                        lambda self, t, keys: sum(t) % 2 == parity and original(self, t, keys))
    rng = np.random.default_rng(parity)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    cc = algorithms.connected_components(edges).view()
    scc = algorithms.strongly_connected_components(edges).view()
    present = set()
    for _ in range(25):
        pool = sorted(present)
        gone = {pool[i] for i in rng.integers(0, len(pool), 3)} if pool else set()
        new = {(int(a), int(b)) for a, b in rng.integers(0, 30, size=(4, 2))} - present
        edges.remove(sorted(gone))
        edges.insert(sorted(new))
        present = (present - gone) | new
        flow.step()
        assert cc.to_dict() == cc_oracle(present)
        assert scc.to_dict() == scc_oracle(present)
