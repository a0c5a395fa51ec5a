"""The large-batch paths (issue 13, from-scratch speed and memory) against the general numpy
paths and an oracle: packed-value consolidation, and whole programs run with the large
paths' row thresholds lowered so small hypothesis inputs take them."""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ddlab
from ddlab.engine import kernels
from ddlab.engine import batch as batch_mod
from ddlab.engine.batch import consolidate
from ddlab.engine.config import use_fast_paths
from ddlab.engine import trace as trace_mod
from ddlab.engine.batch import Batch
from ddlab.engine.operators import reduce as reduce_mod

from .test_algorithms import EPOCHS, cc_oracle, scc_oracle
from .test_fast_paths import _run_graph, _run_graph_on
from .test_operators import EPOCHS as RECORD_EPOCHS, UNARY, _accumulate

@contextmanager
def large_paths(rows=None):
    """Every large path on from a handful of rows (the small paths keep their own bounds)."""
    rows = rows or batch_mod.SMALL_ROWS + 1
    saved = [(mod, name, getattr(mod, name)) for mod, name in LARGE_BOUNDS]
    try:
        for mod, name, _ in saved:
            setattr(mod, name, rows)
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)


@pytest.fixture(autouse=True)
def _without_kernels(monkeypatch):
    """These tests check the large numpy paths against the general path: the compiled kernels,
    which would otherwise take the same runs, are off here (tests/engine/test_kernels.py
    checks them against both)."""
    monkeypatch.setattr(kernels, "enabled", False)


#: (module, name) of every large path's row threshold
LARGE_BOUNDS = [(batch_mod, "PACKED_ROWS"), (reduce_mod, "LARGE_KEYS"),
                (trace_mod, "LARGE_MERGE_ROWS"), (trace_mod, "LARGE_SPINE_ROWS"),
                (batch_mod, "CHUNK_ROWS"), (trace_mod, "KEY_INDEX_ROWS")]

SPANS = st.sampled_from([1, 2, 3, 100, 1 << 20, 1 << 40, 1 << 62])


@st.composite
def _rows(draw):
    n = draw(st.integers(1, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    spans = draw(st.lists(SPANS, min_size=1, max_size=3))
    cols = tuple(rng.integers(-(s // 2), s // 2 + 1, n) for s in spans)
    dspan = draw(st.sampled_from([0, 1, 2, 5, 1 << 40]))
    diffs = rng.integers(-dspan, dspan + 1, n)
    depth = draw(st.integers(0, 2))
    times = rng.integers(0, draw(SPANS), (n, depth)) if depth else None
    return cols, diffs, times


def _same(fast, general):
    for f, g in zip(fast, general):
        f, g = (f if isinstance(f, tuple) else (f,)), (g if isinstance(g, tuple) else (g,))
        assert len(f) == len(g)
        for a, b in zip(f, g):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)


@given(rows=_rows())
def test_packed_consolidation_equals_general_and_oracle(rows):
    cols, diffs, times = rows
    args = (cols, diffs) if times is None else (cols, diffs, times)
    with large_paths(2):
        fast = consolidate(*args)
    with use_fast_paths(False):
        general = consolidate(*args)
    _same(fast, general)
    want = Counter()
    for i in range(len(diffs)):
        key = tuple(int(c[i]) for c in cols) + \
            (tuple(int(x) for x in times[i]) if times is not None else ())
        want[key] += int(diffs[i])
    want = sorted((k, v) for k, v in want.items() if v)
    got_cols, got_diffs = fast[0], fast[-1]
    got = [(tuple(int(c[i]) for c in got_cols) +
            (tuple(int(x) for x in fast[1][i]) if times is not None else ()), int(got_diffs[i]))
           for i in range(len(got_diffs))]
    assert got == want


def test_packed_consolidation_of_a_large_batch():
    rng = np.random.default_rng(7)
    n = 50_000
    cols = (np.sort(rng.integers(0, 1000, n)), rng.integers(0, 1000, n))
    diffs = rng.choice([-1, 1], n)
    times = rng.integers(0, 4, (n, 2))
    for args in ((cols, diffs), (cols, diffs, times)):
        fast = consolidate(*args, runs=True)
        with large_paths(1000):  # chunk boundaries and a partial last chunk
            _same(consolidate(*args, runs=True), fast)
        with use_fast_paths(False):
            general = consolidate(*args, runs=True)
        _same(fast, general)


@settings(max_examples=40)
@given(plan=EPOCHS)
def test_graph_programs_on_large_paths(plan):
    with large_paths():
        fast = _run_graph(plan, True)
    general = _run_graph(plan, False)
    assert [r[0] for r in fast] == [r[0] for r in general]
    for views, present in fast:
        assert views[0] == views[1] == cc_oracle(present)
        assert views[2] == views[3] == scc_oracle(present)


@settings(max_examples=40)
@given(epochs=RECORD_EPOCHS)
def test_aggregates_on_large_paths(epochs):
    names = ["min", "max", "distinct", "count", "top_k", "union", "self_join"]
    with large_paths():
        flow = ddlab.Dataflow()
        records = flow.input("records", columns=["k", "v"])
        views = [UNARY[n][0](records).view() for n in names]
        for epoch, want in zip(epochs, _accumulate(epochs)):
            records.update(epoch)
            flow.step()
            assert [v.to_dict() for v in views] == [UNARY[n][1](want) for n in names]


class _Clock:
    epoch = 0


def _summed(rows):
    """Rows ``(..., diff)`` with the diffs of equal fields summed, zeros dropped, sorted."""
    out = Counter()
    for *fields, d in rows:
        out[tuple(fields)] += d
    return sorted((k, v) for k, v in out.items() if v)


def _trace_rows(trace):
    r = trace.all_rows()
    return _summed(zip(r.keycode.tolist(), *[c.tolist() for c in r.cols],
                       map(tuple, r.times.tolist()), r.diffs.tolist()))


@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(-3, 5),
                                           st.sampled_from([1, -1, 2])),
                                 min_size=1, max_size=40), min_size=1, max_size=12),
       nkey=st.sampled_from([1, 2]), floats=st.booleans())
def test_large_trace_merges_equal_general(batches, nkey, floats):
    """Merged spines (and their lookups) hold the same rows on both paths."""
    clock = _Clock()
    traces = []
    for enabled, rows in ((True, 2), (False, None)):
        with use_fast_paths(enabled), large_paths(rows):
            trace = trace_mod.Trace(nkey, 2, clock, "t")
            for i, rows_ in enumerate(batches):
                a = np.array(rows_, dtype=np.int64)
                second = a[:, 1].astype(np.float64) / 2 if floats else a[:, 1]
                trace.insert((0, i), Batch([a[:, 0], second], ("i", "f" if floats else "i"),
                                           a[:, 2]).consolidate())
            got = [_trace_rows(trace)]
            codes = np.unique(trace.all_rows().keycode)[::2]
            g = trace.gather(codes)
            got.append(_summed(zip(g.keycode.tolist(), g.cols[1].tolist(),
                                   map(tuple, g.times.tolist()), g.diffs.tolist())))
            cols, diffs, later_codes, later_times = trace.gather_until(codes, (0, 3))
            got.append(_summed(zip(cols[0].tolist(), cols[1].tolist(), diffs.tolist())))
            cols, weights, later_codes2, later_times2 = trace.accumulate_until(codes, (0, 3))
            got.append(list(zip(cols[0].tolist(), cols[1].tolist(), weights.tolist())))
            assert got[-1] == [k + (v,) for k, v in got[-2]]  # sorted, summed, no zeros
            assert [c.tolist() for c in later_codes2] == [c.tolist() for c in later_codes]
            got.append(sorted(set(zip(np.concatenate(later_codes or [np.zeros(0, int)]).tolist(),
                                  map(tuple, np.concatenate(later_times or [
                                      np.zeros((0, 2), int)]).tolist())))))
            clock.epoch = 1
            trace.compact()
            got.append(_trace_rows(trace))
            clock.epoch = 0
            traces.append(got)
    assert traces[0] == traces[1]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(5, 40))
def test_larger_graphs_on_large_paths(seed, nodes):
    """Epochs of tens to hundreds of edges (joins and reduces over many keys at once, deltas
    beyond the small paths), with deletions, on both paths and against the oracles."""
    rng = np.random.default_rng(seed)
    present, plan = set(), []
    for _ in range(3):
        adds = {(int(a), int(b)) for a, b in rng.integers(0, nodes, (int(rng.integers(1, 150)), 2))}
        adds -= present
        pool = sorted(present)
        rems = {pool[i] for i in rng.integers(0, len(pool), len(pool) // 3)} if pool else set()
        present = (present | adds) - rems
        plan.append((sorted(adds), sorted(rems), set(present)))

    with large_paths():
        fast = _run_graph_on(plan, True)
        general = _run_graph_on(plan, False)
    assert [r[0] for r in fast] == [r[0] for r in general]
    for views, present_ in fast:
        assert views[0] == views[1] == cc_oracle(present_)
        assert views[2] == views[3] == scc_oracle(present_)
