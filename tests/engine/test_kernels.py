"""The compiled per-key kernels (engine/kernels) against the paths they replace and an oracle.

Each kernel is checked on random inputs against the numpy or Python reference it stands in
for (the logics' ``small`` forms and numpy ``evaluate``, ``Trace.gather`` plus the time
filter, dict arithmetic); whole programs run with the kernels on and off and are compared
with each other and with from-scratch evaluation; bugs planted in the kernel path are found
by the fuzzer; and without numba the engine warns once and runs on its numpy path."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

import ddlab
from ddlab import NonConvergenceError
from ddlab.engine import kernels, testing
from ddlab.engine.batch import Batch
from ddlab.engine.kernels import spec
from ddlab.engine.operators import join as join_operator, reduce as reduce_operator
from ddlab.engine.lattice import leq_rows
from ddlab.engine.operators import aggregates as agg
from ddlab.engine.operators.reduce import Accumulation
from ddlab.engine.trace import Trace
from ddlab.engine.testing import tuned

from graph_oracle import cc_oracle

from . import oracle
from .graph_programs import (EPOCHS as GRAPH_EPOCHS, assert_same_and_correct, churn_cc_and_scc,
                             edge_epochs, run_graph)
from .record_programs import EPOCHS as RECORD_EPOCHS, UNARY, _in_loop, accumulate as _accumulate

pytestmark = pytest.mark.skipif(not kernels.available(), reason="numba is not installed")

if kernels.available():
    from ddlab.engine.kernels import histories as H, logics as L


# -- the kernels one by one ----------------------------------------------------------------

#: buffer rows ``(key index, value, diff)`` of up to five keys (two value columns or one)
ROWS = st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 3), st.integers(0, 3),
                          st.integers(-2, 2)), max_size=40)
LOGICS = {"count": (spec.COUNT, agg.Count()), "sum": (spec.SUM, agg.Sum()),
          "min": (spec.MIN, agg.Extreme(False)), "max": (spec.MAX, agg.Extreme(True)),
          "distinct": (spec.DISTINCT, agg.DISTINCT)}


def _buffer(rows, arity):
    """A row buffer as the scans fill it: key index, columns (the key column holds the key
    index itself, so the key code is the key column), diff."""
    buf = np.zeros((2 + arity, max(len(rows), 1)), dtype=np.int64)
    for i, (g, a, b, d) in enumerate(rows):
        values = (g, a, b)[:arity]
        buf[:, i] = (g,) + values + (d,)
    return buf


def _consolidated(rows, arity):
    """{key index: {record: weight}} (zero weights dropped): the Python reference."""
    acc: dict = {}
    for g, a, b, d in rows:
        rec = (g, a, b)[:arity]
        acc.setdefault(g, Counter())[rec] += d
    out = {g: {r: w for r, w in c.items() if w} for g, c in acc.items()}
    return {g: c for g, c in out.items() if c}


def _split(cols, weights, starts):
    """{key index: {record: weight}} of a kernel's ``(cols, weights, starts)``."""
    out = {}
    for g in range(len(starts) - 1):
        part = {tuple(int(c[i]) for c in cols): int(weights[i])
                for i in range(starts[g], starts[g + 1])}
        if part:
            out[g] = part
    return out


@pytest.mark.parametrize("arity", [1, 2, 3])
@given(rows=ROWS)
def test_consolidate_by_key_equals_python(rows, arity):
    buf = _buffer(rows, arity)
    cols, weights, starts = L.consolidate_by_key(buf, len(rows), 5, arity)
    assert _split(cols, weights, starts) == _consolidated(rows, arity)
    for g in range(5):  # sorted by record within each key
        recs = [tuple(c[i] for c in cols) for i in range(starts[g], starts[g + 1])]
        assert recs == sorted(recs)


@pytest.mark.parametrize("name", sorted(LOGICS))
@pytest.mark.parametrize("arity", [1, 2, 3])
@pytest.mark.parametrize("key_is_code", [True, False])
@given(rows=ROWS)
def test_evaluate_by_key_equals_small_and_numpy_logics(name, arity, key_is_code, rows):
    code, logic = LOGICS[name]
    nkey = 0 if name == "distinct" else 1
    kinds = ("i",) * arity
    if not spec.qualifies(code, nkey, kinds):
        return  # (sum needs exactly one value column, min/max at least one)
    kn = nkey or arity
    buf = _buffer(rows, arity)
    cols, weights, starts = L.evaluate_by_key(code, kn, key_is_code and kn == 1, buf,
                                              len(rows), 5, arity)
    got = _split(cols, weights, starts)
    op = SimpleNamespace(nkey=nkey, label="test", flow=SimpleNamespace(interner=None))
    for g, acc in _consolidated(rows, arity).items():
        small = logic.small([dict(acc)], nkey)
        recs = sorted(acc)
        a = Accumulation([np.array([r[j] for r in recs], dtype=np.int64)
                          for j in range(arity)], kinds,
                         np.array([acc[r] for r in recs], dtype=np.int64))
        ncols, _, nweights = logic.evaluate([a], op)
        numpy_out = {tuple(int(c[i]) for c in ncols): int(nweights[i])
                     for i in range(len(nweights))}
        assert small == numpy_out
        assert got.get(g, {}) == small, (g, acc)


def _diffs(rows):
    return {r: w for r, w in rows.items() if w}


@given(new=ROWS, old=ROWS)
def test_diff_by_key_equals_dict_arithmetic(new, old):
    nc, nw, ns = L.consolidate_by_key(_buffer(new, 2), len(new), 5, 2)
    oc, ow, os_ = L.consolidate_by_key(_buffer(old, 2), len(old), 5, 2)
    cols, diffs = L.diff_by_key(nc, nw, ns, oc, ow, os_, 5)
    got = Counter({tuple(int(c[i]) for c in cols): int(diffs[i]) for i in range(len(diffs))})
    want = Counter()
    for acc in _consolidated(new, 2).values():
        want.update(acc)
    for acc in _consolidated(old, 2).values():
        want.subtract(acc)
    assert dict(got) == _diffs(want)
    recs = [tuple(c[i] for c in cols) for i in range(len(diffs))]
    assert recs == sorted(recs)  # key index first, then record: record order


@given(pairs=st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 3), st.integers(0, 3)),
                      max_size=30))
def test_later_groups_keep_each_keys_minimal_times(pairs):
    """Grouped by time like the numpy path groups them, but only each key's minimal times
    (no other time of the key is <= them): the rest are found again from those."""
    later = np.array([[c, a, b] for c, a, b in pairs], dtype=np.int64).reshape(-1, 3).T.copy()
    codes, times, starts = L.later_groups(later, len(pairs))
    got = {}
    for s, e in zip(starts[:-1], starts[1:]):
        got[tuple(times[s].tolist())] = codes[s:e].tolist()
        assert all(tuple(times[i].tolist()) == tuple(times[s].tolist()) for i in range(s, e))
    times_of: dict = {}
    for c, a, b in pairs:
        times_of.setdefault(c, set()).add((a, b))
    want: dict = {}
    for c, ts in times_of.items():
        for u in ts:
            if not any(v != u and v[0] <= u[0] and v[1] <= u[1] for v in ts):
                want.setdefault(u, set()).add(c)
    assert got == {u: sorted(cs) for u, cs in want.items()}
    assert list(got) == sorted(got)


@given(rows=st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2), st.integers(0, 2),
                              st.integers(-2, 2)), max_size=80), with_times=st.booleans())
def test_consolidate_rows_equals_the_general_path(rows, with_times):
    """``batch.consolidate`` through the kernel and on the general numpy path: the same rows
    in the same order (sorted by record, then time), zero sums dropped."""
    from ddlab.engine.batch import consolidate

    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    cols, times, diffs = (a[:, 0].copy(), a[:, 1].copy()), a[:, 2:3].copy(), a[:, 3].copy()
    args = (cols, diffs, times) if with_times else (cols, diffs)
    fast = kernels.consolidate(*args[:2], times if with_times else None)
    with tuned("general"):
        general = consolidate(*args)
    assert len(fast) == len(general)
    for f, g in zip(fast, general):
        f, g = (f if isinstance(f, tuple) else (f,)), (g if isinstance(g, tuple) else (g,))
        for x, y in zip(f, g):
            np.testing.assert_array_equal(x, y)


@given(a=st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 9)), max_size=30),
       b=st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 9)), max_size=30))
def test_sorted_runs_equal_a_stable_argsort(a, b):
    """The spine's kernels: a packed matrix sorted by key code, and two sorted ones merged,
    exactly as a stable argsort of (their concatenation's) key row orders them."""
    def matrix(rows):
        return np.array(rows, dtype=np.int64).reshape(-1, 2).T.copy()

    def stable(m):
        return m[:, np.argsort(m[0], kind="stable")]

    ma, mb = matrix(a), matrix(b)
    np.testing.assert_array_equal(kernels.sort_by_key(ma), stable(ma))
    sa, sb = stable(ma), stable(mb)
    np.testing.assert_array_equal(kernels.merge_by_key(sa, sb),
                                  stable(np.concatenate([sa, sb], axis=1)))


@given(col=st.lists(st.integers(0, 9), max_size=60), value=st.integers(-1, 10),
       lo=st.integers(0, 60), hi=st.integers(0, 60), dense=st.booleans())
def test_galloping_searches_equal_searchsorted(col, value, lo, hi, dense):
    """The galloping bounds a scan and a join's matching use find what ``searchsorted``
    finds in ``col[lo:hi]``, near ``lo`` or far from it."""
    from ddlab.engine.kernels import histories as H

    arr = np.array(sorted(col), dtype=np.int64)
    lo = min(lo, len(arr))
    hi = min(max(hi, lo), len(arr))
    left = lo + int(np.searchsorted(arr[lo:hi], value, "left"))
    right = lo + int(np.searchsorted(arr[lo:hi], value, "right"))
    assert H.gallop_lower(arr, value, lo, hi) == left
    assert H.gallop_upper(arr, value, lo, hi) == right
    assert H.key_range(arr, value, lo, hi, dense) == (left, right)


@given(values=st.lists(st.integers(0, 2**63 - 1), max_size=200),
       bits=st.sampled_from([1, 7, 11, 12, 22, 33, 40, 63]), spread=st.booleans())
def test_radix_sort_equals_numpy_sort(values, bits, spread):
    """The radix sort orders values below ``2**bits`` as numpy's sort does, including the
    passes it skips (every value with the same digit: ``spread`` false keeps the low digits
    equal) and a last digit narrower than the others."""
    mask = (1 << bits) - 1
    arr = np.array([v & mask for v in values], dtype=np.int64)
    if not spread and bits > 11:
        arr &= ~np.int64((1 << 11) - 1)  # the first pass sees one digit only
    got = arr.copy()
    kernels.sort_values(got, bits)
    np.testing.assert_array_equal(got, np.sort(arr))


def test_the_cache_stamp_covers_every_kernel_source():
    """Every module of compiled kernels is in the stamp that says whether the disk cache is
    warm for these sources (a module left out would be edited without the stamp changing)."""
    from pathlib import Path

    folder = Path(kernels.__file__).parent
    modules = {p.name for p in folder.glob("*.py")} - {"__init__.py", "compile.py"}
    assert modules == set(kernels._SOURCES)


@pytest.mark.parametrize("case", ["small fields", "hashes", "int32", "wide", "equal", "signed"])
@pytest.mark.parametrize("n", [1500, 40000])
def test_a_long_segment_sorts_as_a_stable_lexicographic_sort(case, n):
    """``lexsort_segment`` on segments past ``RADIX_MIN`` (the radix path) orders row numbers
    as numpy's stable lexsort does, rows before and after the segment untouched: fields of
    a few bits (position packed below the keys), 64-bit hashes (positions carried beside
    them), int32 fields, ranges over 64 bits together (the merge sort), all rows equal, and
    fields spanning negative and positive values."""
    from ddlab.engine.kernels import sorting

    assert n >= sorting.RADIX_MIN
    rng = np.random.default_rng(n + len(case))
    if case == "small fields":
        cols = np.vstack([rng.integers(0, 3, n), rng.integers(0, 40, n), rng.integers(0, 900, n)])
    elif case == "hashes":
        cols = rng.integers(-2**63, 2**63 - 1, (1, n), dtype=np.int64)
        cols[0, ::7] = cols[0, 3]  # repeats: the tie-break by position decides their order
    elif case == "int32":
        cols = rng.integers(-2**31, 2**31 - 1, (2, n)).astype(np.int32)
    elif case == "wide":
        cols = rng.integers(0, 2**40, (2, n))  # 80 bits: the merges
    elif case == "equal":
        cols = np.full((2, n), 7)
    else:
        cols = rng.integers(-50, 50, (3, n))
    cols = np.ascontiguousarray(cols)
    lo, hi = 5, n - 3
    idx = rng.permutation(n).astype(np.int64)
    seg = idx[lo:hi].copy()
    want = seg[np.lexsort(cols[::-1][:, seg])]  # stable, last key most significant
    got = idx.copy()
    sorting.lexsort_segment(cols, got, lo, hi, np.empty(n, dtype=np.int64))
    np.testing.assert_array_equal(got[lo:hi], want)
    np.testing.assert_array_equal(got[:lo], idx[:lo])
    np.testing.assert_array_equal(got[hi:], idx[hi:])


def _pairs(case, n, rng):
    """A join's output buffer ``(ncols + depth + 1, n)``: columns, times, diffs."""
    if case == "small fields":
        cols = [rng.integers(0, 30, n), rng.integers(0, 4, n)]
        times = [rng.integers(0, 3, n), rng.integers(0, 5, n)]
    elif case == "hashes":  # a 64-bit column: 64 + time bits do not pack (compared path)
        h = rng.integers(-2**63, 2**63 - 1, 40, dtype=np.int64)
        cols = [h[rng.integers(0, 40, n)], rng.integers(0, 3, n)]
        times = [rng.integers(0, 2, n), rng.integers(0, 3, n)]
    elif case == "signed":
        cols = [rng.integers(-2**20, 2**20, n) // 2**16, rng.integers(-3, 3, n)]
        times = [rng.integers(4, 6, n), rng.integers(0, 2, n)]
    elif case == "one time":
        cols = [rng.integers(0, 50, n)]
        times = [np.full(n, 3), np.full(n, 1)]
    else:  # "63 bits": fits exactly
        cols = [rng.integers(0, 2**60, n)]
        times = [rng.integers(0, 2, n), rng.integers(0, 4, n)]
    diffs = rng.choice(np.array([-1, 1, 2]), n)
    return np.ascontiguousarray(np.vstack(cols + times + [diffs]).astype(np.int64)), len(cols)


@pytest.mark.parametrize("case", ["small fields", "hashes", "signed", "one time", "63 bits"])
@pytest.mark.parametrize("n", [7, 300, 5000])
def test_a_joins_pairs_grouped_by_time_equal_a_sum_per_pair(case, n):
    """``group_by_time`` (fields packed into one key and radix-sorted, or compared one by
    one when they do not pack) equals summing each (time, record)'s diffs in a dict: the
    nonzero sums sorted by time then record, one run per distinct time; buffer columns past
    ``n`` are ignored."""
    from ddlab.engine.kernels import matching as M

    rng = np.random.default_rng(n * 7 + len(case))
    out, ncols = _pairs(case, n, rng)
    depth = out.shape[0] - ncols - 1
    out = np.ascontiguousarray(np.hstack([out, np.full((out.shape[0], 3), 99)]))
    sums: Counter = Counter()
    for col in out[:, :n].T.tolist():
        sums[tuple(col[ncols:ncols + depth]) + tuple(col[:ncols])] += col[-1]
    want = sorted((k, w) for k, w in sums.items() if w)
    cols, times, diffs, starts = M.group_by_time(out, n, ncols, depth)
    got = [(tuple(t) + tuple(c), w) for t, c, w in
           zip(times.tolist(), cols.T.tolist(), diffs.tolist())]
    assert got == want
    distinct = [i for i in range(len(want)) if i == 0 or want[i][0][:depth] != want[i - 1][0][:depth]]
    assert starts.tolist() == distinct + [len(want)]


@pytest.mark.parametrize("n", [5, 3000, 200000])
def test_unique_codes_equal_numpys_unique(n):
    """A run's distinct key codes (radix-sorted past ``RADIX_MIN`` as values less their
    minimum) equal ``np.unique``: hashed codes with repeats, the int64 extremes, small
    codes and codes already ascending."""
    from ddlab.engine.kernels import histories as H

    rng = np.random.default_rng(n)
    hashes = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    hashes[::5] = hashes[1]
    hashes[:2] = [-2**63, 2**63 - 1]
    for codes in (hashes, rng.integers(-9, 9, n), np.sort(rng.integers(0, 99, n))):
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        np.testing.assert_array_equal(H.unique_codes(codes), np.unique(codes))


@pytest.mark.parametrize("n", [5000, 70000])
def test_consolidation_with_the_radix_sort_equals_numpy(n):
    """A packed consolidation of rows in no order past ``RADIX_SORT_ROWS`` (the radix sort)
    gives the rows numpy's sort gives (kernels off), for rows with times and cancelling
    diffs."""
    from ddlab.engine.batch import consolidate

    rng = np.random.default_rng(n)
    cols = [rng.integers(0, 300, n), rng.integers(-5, 5000, n)]
    times = rng.integers(0, 4, (n, 2))
    diffs = rng.choice(np.array([-1, 1, 2]), n)
    with tuned(RADIX_SORT_ROWS=1000):
        fast = consolidate(cols, diffs, times)
    with tuned("numpy"):
        want = consolidate(cols, diffs, times)
    for f, w in zip(fast[0] + (fast[1], fast[2]), want[0] + (want[1], want[2])):
        np.testing.assert_array_equal(f, w)


@given(rows=st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.integers(-3, 3),
                              st.sampled_from([0, 1, 2**40, -2**40])), max_size=60),
       small=st.booleans())
def test_sort_rows_orders_like_lexsort(rows, small):
    """The packed sort (fields whose ranges fit in 63 bits) and its field-by-field fallback
    (wider ranges) both order rows as numpy's lexsort does."""
    if small:
        rows = [(a % 1000, b, c % 7) for a, b, c in rows]
    cols = np.array(rows, dtype=np.int64).reshape(-1, 3).T.copy()
    order = L.sort_rows(cols, cols.shape[1])
    want = np.lexsort(cols[::-1]) if cols.shape[1] else np.zeros(0, dtype=np.int64)
    np.testing.assert_array_equal(cols[:, order], cols[:, want])


UPDATES = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 2),
                             st.integers(0, 2), st.sampled_from([1, -1, 2])), max_size=60)


@pytest.mark.parametrize("layout", ["key_first", "key_apart"])
@given(updates=UPDATES, queries=st.sets(st.integers(-1, 7), max_size=6),
       t=st.tuples(st.integers(0, 2), st.integers(0, 2)), capacity=st.sampled_from([2, 5, 128]))
def test_scan_equals_trace_gather_and_time_filter(layout, updates, queries, t, capacity):
    """Rows found by the scans of ``Trace.packed_runs`` (spine batches and recent rows) are
    the rows ``Trace.gather`` finds, split by ``time <= t`` exactly as the numpy reduce splits
    them."""
    with tuned(RECENT_CAPACITY=capacity):
        _check_scan(layout, updates, queries, t)


def _check_scan(layout, updates, queries, t):
    clock = SimpleNamespace(epoch=0)
    nkey = 1 if layout == "key_first" else 2
    trace = Trace(nkey, 2, clock)
    for k, v, e, i, d in updates:
        clock.epoch = e
        trace.insert((e, i), Batch([np.array([k]), np.array([v])], ("i", "i"),
                                   np.array([d]), consolidated=True))
    if trace.kinds is None:
        return
    from ddlab.engine.columns import key_code

    all_rows = trace.all_rows()
    codes = sorted(set(key_code(all_rows.cols, trace.kinds, nkey).tolist()) |
                   {q for q in queries})[: len(queries) + 1]
    keys = np.array(sorted(set(codes)), dtype=np.int64)
    tarr = np.array(t, dtype=np.int64)
    rows = np.empty((4, 4), dtype=np.int64)
    later = np.empty((3, 4), dtype=np.int64)
    n = nl = read = 0
    for data, m, is_sorted, f in trace.packed_runs():
        while True:
            n2, nl2, seen = H.scan(data, m, is_sorted, keys, tarr, f, 2, 2, rows, n, later, nl)
            if n2 >= 0:
                break
            grown = np.empty((4, -n2), dtype=np.int64)
            grown[:, :n] = rows[:, :n]
            rows = grown
            grown = np.empty((3, -nl2), dtype=np.int64)
            grown[:, :nl] = later[:, :nl]
            later = grown
        n, nl = n2, nl2
        read += seen
    got_now = Counter()
    for i in range(n):
        got_now[(int(keys[rows[0, i]]), int(rows[1, i]), int(rows[2, i]))] += int(rows[3, i])
    got_later = sorted((int(later[0, i]), int(later[1, i]), int(later[2, i]))
                       for i in range(nl))
    gathered = trace.gather(keys)
    now = leq_rows(gathered.times, t)
    want_now = Counter()
    want_later = []
    for i in range(len(gathered)):
        code = int(gathered.keycode[i])
        if now[i]:
            want_now[(code, int(gathered.cols[0][i]), int(gathered.cols[1][i]))] += \
                int(gathered.diffs[i])
        else:
            u = np.maximum(gathered.times[i], t)
            want_later.append((code, int(u[0]), int(u[1])))
    assert got_now == want_now
    assert read == len(gathered)
    # a later time may be left out when one of its key's is <= it: every one written is
    # one of the gathered rows', and the minimal ones per key are all there
    assert set(got_later) <= set(want_later)
    assert _minimal_per_key(got_later) == _minimal_per_key(want_later)


def _minimal_per_key(entries) -> set:
    """The ``(key, time...)`` entries no other entry of the same key is ``<=``."""
    return {e for e in entries
            if not any(o != e and o[0] == e[0] and all(a <= b for a, b in zip(o[1:], e[1:]))
                       for o in entries)}


# -- whole programs: kernels on and off, and the oracle --------------------------------------

KERNEL_OPERATORS = ["count", "sum", "min", "max", "distinct", "threshold", "self_join",
                    "join_select_tuple", "join_select_fn", "union"]


@pytest.mark.parametrize("depth", [0, 1, 2], ids=["top", "loop", "nested"])
@pytest.mark.parametrize("name", KERNEL_OPERATORS)
@given(epochs=RECORD_EPOCHS)
def test_kernel_operators_same_with_kernels_on_and_off(name, depth, epochs):
    """Each operator with a kernel path (and two that decline it: a Python selector, a set
    operation), at top level and in loops: the same output as the oracle, and the same
    updates, operator by operator, as with the kernels off."""
    program, expect = UNARY[name]
    results = {}
    for on in (True, False):
        with testing.use_kernels(on):
            flow = ddlab.Dataflow()
            records = flow.input("records", columns=["k", "v"])
            view = _in_loop(program, depth)(records).view()
            seen = []
            for epoch, want in zip(epochs, _accumulate(epochs)):
                records.update(epoch)
                flow.step()
                assert view.to_dict() == expect(want)
                seen.append(flow.stats().groupby("operator")["out"].sum().to_dict())
            results[on] = seen
    assert results[True] == results[False]  # the same updates, operator by operator


@given(plan=GRAPH_EPOCHS)
def test_graph_programs_same_with_kernels_on_and_off(plan):
    epochs = list(edge_epochs(plan))
    with testing.use_kernels(True):
        on = run_graph(epochs)
    assert_same_and_correct(on, run_graph(epochs, "numpy"))


# -- on data-parallel workers (issue 31): the kernels run in every worker's process ------------

WORKERS_EXAMPLES = int(os.environ.get("DDLAB_KERNEL_WORKERS_EXAMPLES", "12"))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers need os.fork")
@pytest.mark.parametrize("workers", [2, 3])
def test_kernel_operators_on_workers_equal_the_oracle(workers):
    """Every kernel operator, at top level and in a loop, in one flow on ``workers`` (each
    worker's kernels see only its key shard): after every epoch each view equals the oracle."""
    @settings(max_examples=WORKERS_EXAMPLES, deadline=None)
    @given(epochs=RECORD_EPOCHS)
    def check(epochs):
        with testing.use_kernels(True):
            flow = ddlab.Dataflow(workers=workers)
            try:
                records = flow.input("records", columns=["k", "v"])
                views = {(name, depth): _in_loop(UNARY[name][0], depth)(records).view()
                         for name in KERNEL_OPERATORS for depth in (0, 1)}
                for epoch, want in zip(epochs, _accumulate(epochs)):
                    records.update(epoch)
                    flow.step()
                    for (name, depth), view in views.items():
                        assert view.to_dict() == UNARY[name][1](want), (name, depth)
            finally:
                flow.close()

    check()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers need os.fork")
@pytest.mark.parametrize("workers", [2, 3])
def test_graph_programs_on_workers_with_kernels_on_and_off(workers):
    """CC and SCC, plain and prioritized, through random inserts and removals on ``workers``:
    the same views with the kernels on and off, both equal to the oracles."""
    @settings(max_examples=WORKERS_EXAMPLES // 2, deadline=None)
    @given(plan=GRAPH_EPOCHS)
    def check(plan):
        epochs = list(edge_epochs(plan))
        with testing.use_kernels(True):
            on = run_graph(epochs, workers=workers)
        assert_same_and_correct(on, run_graph(epochs, "numpy", workers=workers))

    check()


@pytest.mark.parametrize("parity", [0, 1])
def test_kernel_and_numpy_paths_share_a_reduce_and_a_join(monkeypatch, parity):
    """The compiled kernels take the runs at some times and the numpy (or Python) paths at
    the others (by the parity of the time): what one path scheduled or wrote (interesting
    times as arrays, output rows, recent rows), the other reads."""
    from ddlab.engine.kernels import join as kernel_join, reduce as kernel_reduce

    reduce_process, join_process = kernel_reduce.process, kernel_join.process
    monkeypatch.setattr(reduce_operator, "_kernel_process", lambda op, t, *a: sum(t) % 2 ==
                        parity and reduce_process(op, t, *a))
    monkeypatch.setattr(join_operator, "_kernel_process", lambda op, t, *a: sum(t) % 2 !=
                        parity and join_process(op, t, *a))
    churn_cc_and_scc(parity, 20)


KEYED = st.lists(st.lists(st.tuples(st.tuples(st.integers(0, 2), st.sampled_from(["a", "b"]),
                                              st.integers(-2, 2)),
                                    st.sampled_from([1, -1, 2])), max_size=8),
                 min_size=1, max_size=4)


@given(epochs=KEYED)
def test_two_key_columns_and_interned_objects(epochs):
    """Hashed key codes (two key columns), interned string keys, bools: the kernel path
    sorts its output by record and agrees with the numpy path and the oracle."""
    results = {}
    for on in (True, False):
        with testing.use_kernels(on):
            flow = ddlab.Dataflow()
            rec = flow.input("rec", columns=["k", "s", "v"])
            views = [rec.count(key_columns=2).view(), rec.min(key_columns=2).view(),
                     rec.max(key_columns=1).view(), rec.distinct().view(),
                     rec.map(lambda r: (r[1], r[2] > 0)).count().view()]
            out = []
            for epoch, acc in zip(epochs, _accumulate(epochs)):
                rec.update(epoch)
                flow.step()
                out.append([v.to_dict() for v in views])
                assert out[-1][3] == oracle.distinct(acc)
                groups: dict = {}
                for (k, s, _), m in acc.items():
                    groups[(k, s)] = groups.get((k, s), 0) + m
                assert out[-1][0] == {(k, s, n): 1 for (k, s), n in groups.items() if n}
            results[on] = out
    assert results[True] == results[False]


def test_threshold_errors_are_the_numpy_paths():
    """A threshold function that raises or returns the wrong shape: the kernel path declines
    and the numpy path raises its error naming the record; the epoch rolls back."""
    for fn, match in ((lambda w: 1 / 0 + w, "ZeroDivisionError"),
                      (lambda w: np.zeros(3), "one integer per multiplicity")):
        flow = ddlab.Dataflow()
        xs = flow.input("xs")
        view = xs.threshold(fn).view()
        xs.insert([1, 2])
        with pytest.raises(ddlab.OperatorError, match=match):
            flow.step()
        assert view.to_dict() == {}


def test_a_one_edge_update_takes_the_kernel_path(monkeypatch):
    """On CC updates every reduce run takes the kernel path (no run declines), and the
    Python and numpy reduce paths are not reached."""
    from ddlab.engine.kernels import reduce as kernel_reduce
    from ddlab.engine.operators.reduce import Reduce

    taken = Counter()
    original = kernel_reduce.process

    def spy(op, *args):
        done = original(op, *args)
        taken[done] += 1
        return done
    monkeypatch.setattr(reduce_operator, "_kernel_process", spy)
    monkeypatch.setattr(Reduce, "_process_small", lambda *a: pytest.fail("Python path ran"))
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = ddlab.algorithms.connected_components(edges).view()
    present = {(i, i + 1) for i in range(0, 60, 2)} | {(i, i + 3) for i in range(0, 60, 5)}
    edges.insert(sorted(present))
    flow.step()
    for change in [(1, 2), (7, 40), (0, 1)]:
        (edges.remove if change in present else edges.insert)([change])
        present ^= {change}
        flow.step()
        assert view.to_dict() == cc_oracle(present)
    assert taken[True] > 10 and taken[False] == 0


# -- the fuzzer finds bugs planted in the kernel path -----------------------------------------

@pytest.mark.slow   # hypothesis needs hundreds of programs to reach the planted count bug
@pytest.mark.parametrize("plant", ["forget_interesting_times", "count_keeps_old_totals"])
def test_the_fuzzer_catches_a_wrong_kernel(monkeypatch, plant):
    """A kernel path that forgets its later interesting times (wrong only inside loops from
    the second epoch on), and a count that never retracts a key's previous total."""
    from ddlab.engine.kernels import reduce as kernel_reduce

    from .program_gen import EPOCHS, programs
    from .test_fuzz_programs import _SETTINGS, run_program

    finish = kernel_reduce.L.finish

    def wrong(logic, cols, diffs, codes, times, starts):
        if plant == "forget_interesting_times":
            return cols, diffs, codes[:0], times[:0], starts[:1]
        if logic == spec.COUNT and len(diffs):
            keep = diffs > 0
            return cols[:, keep], diffs[keep], codes, times, starts
        return cols, diffs, codes, times, starts

    def planted(*args):
        return wrong(args[0], *finish(*args))

    monkeypatch.setattr(kernel_reduce, "L", SimpleNamespace(
        **{**{k: getattr(L, k) for k in dir(L) if not k.startswith("__")}, "finish": planted}))

    # found is enough: no shrinking (minutes of it on these programs, for a planted bug)
    @settings(max_examples=1000, database=None, phases=(Phase.generate,),
              **{**_SETTINGS, "derandomize": True})
    @given(program=programs(max_loop_depth=2, size=7), epochs=EPOCHS)
    def check(program, epochs):
        run_program(program, epochs)

    with pytest.raises((AssertionError, NonConvergenceError, pytest.fail.Exception,
                        BaseExceptionGroup)) as info:
        check()
    errors = info.value.exceptions if isinstance(info.value, BaseExceptionGroup) \
        else [info.value]
    # (hypothesis groups distinct failures; a loop that converges where the definition
    # diverges fails pytest.raises(NonConvergenceError) with "DID NOT RAISE")
    assert any("from scratch" in str(e) or "DID NOT RAISE" in str(e)
               or isinstance(e, NonConvergenceError) for e in errors)


# -- without numba ---------------------------------------------------------------------------

def test_without_numba_the_engine_warns_once_and_runs_on_numpy(monkeypatch):
    monkeypatch.setitem(kernels._state, "checked", True)
    monkeypatch.setitem(kernels._state, "available", False)
    monkeypatch.setitem(kernels._state, "reason", "ImportError: No module named 'numba'")
    monkeypatch.setitem(kernels._state, "warned", False)
    monkeypatch.setitem(kernels._state, "ready", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flow = ddlab.Dataflow()
        edges = flow.input("edges", columns=["src", "dst"])
        view = ddlab.algorithms.connected_components(edges).view()
        edges.insert([(1, 2), (3, 4)])
        flow.step()
        edges.insert([(2, 3)])
        flow.step()
    assert view.to_dict() == cc_oracle({(1, 2), (3, 4), (2, 3)})
    said = [w for w in caught if "numba" in str(w.message)]
    assert len(said) == 1 and "numpy path" in str(said[0].message)


def _fresh_kernel_state(monkeypatch):
    """Kernels not loaded yet in this process, numba importable, nothing warned."""
    monkeypatch.setattr(kernels, "_state", dict(
        kernels._state, checked=True, available=True, reason=None, warned=False, ready=False,
        compiling=None, next_poll=0.0, failed=False, failure=None, waiting=False))


def _two_epochs_of_cc():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = ddlab.algorithms.connected_components(edges).view()
    for batch in ([(1, 2), (3, 4)], [(2, 3)], [(5, 6)]):
        edges.insert(batch)
        flow.step()
    return view.to_dict()


@pytest.mark.parametrize("where", ["cache location", "compile"])
def test_a_kernel_failure_warns_once_and_the_engine_stays_on_numpy(monkeypatch, where):
    """A numba release without the private attribute the cache check reads (background
    mode, a cold check), or a kernel failing to compile (a warm cache): one warning, right
    results, and the failing call is not tried again at every operator run."""
    _fresh_kernel_state(monkeypatch)
    calls = []

    def broken(*args):
        calls.append(args)
        if where == "compile":
            raise RuntimeError("Failed in nopython mode pipeline (step: nopython frontend)")
        raise AttributeError("'FunctionCache' object has no attribute '_cache_path'")

    if where == "compile":
        monkeypatch.setattr(kernels, "cache_is_warm", lambda: True)
        monkeypatch.setattr(kernels, "warm_up", broken)
    else:
        monkeypatch.setattr(kernels, "background", True)
        monkeypatch.setattr(kernels, "_fingerprint", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tuned(KERNELS=True):
            got = _two_epochs_of_cc()
            assert not kernels.active()
    assert got == cc_oracle({(1, 2), (3, 4), (2, 3), (5, 6)})
    said = [str(w.message) for w in caught if "kernels" in str(w.message)]
    assert len(said) == 1 and "numpy path" in said[0], said
    assert len(calls) == 1
    assert "numpy path" in kernels.status()


def test_processes_starting_on_a_cold_cache_share_one_compiler(monkeypatch, tmp_path):
    """A process that finds another live process compiling (its lock in the cache) waits
    for that compiler's stamp on the numpy path instead of starting a compiler of its own;
    a lock left by a process that is gone is taken over."""
    _fresh_kernel_state(monkeypatch)
    monkeypatch.setattr(kernels, "background", True)
    monkeypatch.setattr(kernels, "cache_dir", lambda: tmp_path)
    warm = [False]
    monkeypatch.setattr(kernels, "cache_is_warm", lambda: warm[0])
    started = []

    def start():
        started.append(1)
        kernels._state["compiling"] = SimpleNamespace(poll=lambda: None, returncode=None)

    monkeypatch.setattr(kernels, "_start_background", start)
    monkeypatch.setattr(kernels, "warm_up", lambda: kernels._state.update(ready=True))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "ddlab-kernels.compiling").write_text(f"{other.pid}\n")
        with tuned(KERNELS=True):
            assert not kernels.active() and not started
            assert "another process is compiling" in kernels.status()
            kernels._state["next_poll"] = 0.0
            assert not kernels.active() and not started  # still compiling there
            warm[0] = True  # its stamp: the cache is filled
            assert kernels.active() and not started
        # a lock whose process is gone is taken over: this process compiles
        other.kill()
        other.wait()
        _fresh_kernel_state(monkeypatch)
        warm[0] = False
        with tuned(KERNELS=True):
            assert not kernels.active() and started == [1]
            lock = (tmp_path / "ddlab-kernels.compiling").read_text().split()
            assert lock == [str(os.getpid())]
            kernels._state["compiling"] = SimpleNamespace(poll=lambda: 0, returncode=0)
            kernels._state["next_poll"] = 0.0
            assert kernels.active()  # done: loaded, and the lock released
        assert not (tmp_path / "ddlab-kernels.compiling").exists()
    finally:
        other.kill()
        other.wait()


def test_a_stepped_flow_is_freed_with_the_kernels_on():
    """The kernels keep nothing of a flow once it is dropped (a plan kept in a table keyed
    weakly by operator held its traces, which hold the operator: every stepped flow, such
    as each replay a checked ``why`` builds, stayed in memory)."""
    import gc
    import weakref

    def stepped():
        flow = ddlab.Dataflow()
        edges = flow.input("edges", columns=["src", "dst"])
        ddlab.algorithms.connected_components(edges).view()
        edges.insert([(1, 2), (2, 3), (5, 6)])
        flow.step()
        return weakref.ref(flow)

    with tuned(KERNELS=True):
        kernels.warm_up()
        assert kernels.active()
        gone = stepped()
    gc.collect()
    assert gone() is None


def test_a_process_without_numba_runs_and_says_so_once():
    """In a fresh interpreter where ``import numba`` fails: one warning, right results."""
    code = """
import sys, warnings
sys.modules["numba"] = None          # import numba raises ImportError
warnings.simplefilter("always")
import ddlab
flow = ddlab.Dataflow(); xs = flow.input("xs"); c = xs.count().view()
for i in range(3):
    xs.insert([1, 2, 2]); flow.step()
print(sorted(c.to_dict()))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(1, 3), (2, 6)]"
    assert done.stderr.count("numba is not usable") == 1, done.stderr


@pytest.mark.slow   # compiles every kernel from nothing in a fresh process (about a minute)
def test_a_cold_cache_compiles_in_the_background_without_blocking(tmp_path):
    """In a fresh process whose kernel cache is empty: the first steps run on the numpy path
    at once (no step waits for the compiler), a background process fills the cache, and the
    engine then switches to the kernels; results are right throughout, and the next process
    finds the cache warm."""
    code = """
import time, ddlab
from ddlab.engine import kernels, testing
flow = ddlab.Dataflow(); xs = flow.input("xs"); c = xs.count().view()
start = time.perf_counter(); xs.insert([1, 2, 2]); flow.step()
first = time.perf_counter() - start
assert not kernels.active() and "background" in kernels.status(), kernels.status()
deadline = time.monotonic() + 600
while not kernels.active():
    assert time.monotonic() < deadline, kernels.status()
    time.sleep(0.5)
xs.insert([2]); flow.step()
print(first < 3, sorted(c.to_dict()), kernels.status().split(" (")[0])
"""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "DDLAB_KERNELS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True [(1, 1), (2, 3)] compiled kernels: on", done.stdout
    again = subprocess.run([sys.executable, "-c", "from ddlab.engine import kernels; "
                            "print(kernels.cache_is_warm())"], capture_output=True, text=True,
                           timeout=300, env=env)
    assert again.stdout.strip() == "True", again.stderr


def test_ddlab_kernels_0_turns_them_off():
    code = ("import ddlab.engine.kernels as k, ddlab; f = ddlab.Dataflow(); x = f.input('x');"
            " v = x.count().view(); x.insert([1]); f.step(); print(k.active(), v.to_dict())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "DDLAB_KERNELS": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False {(1, 1): 1}"


@pytest.mark.parametrize("layout", ["key_first", "key_apart"])
@given(updates=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 3),
                                  st.integers(0, 2), st.sampled_from([1, -1, 2])), max_size=80),
       capacity=st.sampled_from([2, 5]))
def test_spine_merges_equal_the_numpy_path(layout, updates, capacity):
    """A trace fed the same updates over several epochs, its spine merged (times advanced to
    the frontier, updates consolidated) by :func:`kernels.merge_compact` or by the numpy
    path, holds the same batches, row for row."""
    def spine(on):
        clock = SimpleNamespace(epoch=0)
        nkey = 1 if layout == "key_first" else 2
        trace = Trace(nkey, 2, clock)
        with testing.use_kernels(on), tuned(RECENT_CAPACITY=capacity, SMALL_INSERT=3):
            for k, v, e, i, d in sorted(updates, key=lambda u: u[2]):
                clock.epoch = e
                trace.insert((e, i), Batch([np.array([k, k + 1]), np.array([v, v])],
                                           ("i", "i"), np.array([d, -d]), consolidated=True))
        return [b.data for b in trace.batches], trace.compacted_rows()

    got, got_rows = spine(True)
    want, want_rows = spine(False)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got_rows.diffs, want_rows.diffs)


def test_merge_compact_advances_consolidates_and_drops_zeros():
    """Two batches of key 7 at epochs 0 and 1 merged at epoch 2: ``(7, 1)`` at (0, 0) and at
    (1, 0) become one update at (2, 0) of weight 2; ``(7, 2)`` cancels; the rest keep their
    iteration and stay sorted by key, record and time."""
    # rows: key (= column 0), column 1, epoch, iteration, diff
    a = np.array([[3, 7, 7], [5, 1, 2], [0, 0, 0], [1, 0, 0], [1, 1, 1]], dtype=np.int64)
    b = np.array([[7, 7, 9], [1, 2, 0], [1, 1, 1], [0, 0, 4], [1, -1, 1]], dtype=np.int64)
    want = np.array([[3, 7, 9], [5, 1, 0], [2, 2, 2], [1, 0, 4], [1, 2, 1]], dtype=np.int64)
    for x, y in ((a, b), (a.astype(np.int32), b.astype(np.int32)), (a, b.astype(np.int32))):
        got, m = kernels.merge_compact(x, y, 2, 2)  # wide, narrowed, one of each
        np.testing.assert_array_equal(got[:, :m], want)


@pytest.mark.parametrize("rows", [2, 6, 40])
@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_merge_compact_equals_a_sum_per_update(rows, data):
    """``merge_compact`` of two key-sorted batches (keys of one, two and many rows, the
    two-row keys taking their own branch) equals advancing each row's epoch to the frontier
    and summing the diffs of equal (key, record, time) in a dict, sorted."""
    draw = st.tuples(st.integers(0, rows // 2), st.integers(0, 2), st.integers(0, 3),
                     st.integers(0, 2), st.sampled_from([1, -1, 2]))
    def batch():
        got = sorted(data.draw(st.lists(draw, max_size=rows)), key=lambda r: r[0])
        return np.array(got, dtype=np.int64).reshape(-1, 5).T.copy()
    a, b, epoch = batch(), batch(), data.draw(st.integers(0, 3))
    sums: Counter = Counter()
    for k, v, e, i, d in np.hstack([a, b]).T.tolist():
        sums[(k, v, max(e, epoch), i)] += d
    want = sorted(k + (w,) for k, w in sums.items() if w)
    got, m = kernels.merge_compact(a, b, 2, epoch)
    assert [tuple(c) for c in got[:, :m].T.tolist()] == want


PAIRS_DATA = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 2),
                                st.integers(0, 2), st.sampled_from([1, -1, 2])), max_size=40)
PAIRS_DELTA = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3),
                                 st.sampled_from([1, -1, 3])), max_size=12)


@given(data_rows=PAIRS_DATA, delta_rows=PAIRS_DELTA, is_sorted=st.booleans(),
       t=st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 1)),
       shifts=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=12,
                       max_size=12),
       rdepth=st.sampled_from([2, 3]), sign=st.sampled_from([1, -1]),
       delta_is_left=st.booleans())
def test_match_finds_every_pair_of_equal_keys(data_rows, delta_rows, is_sorted, t, shifts,
                                              rdepth, sign, delta_is_left):
    """A join's match of a delta against one packed batch equals every (delta row, batch
    row) pair with equal key columns, by brute force: the record built from both sides, the
    time ``lub(row time, delta row's time)`` (a row with fewer time coordinates padded with
    the delta row's; the delta rows' times are ``t`` moved on by a random shift each, as in a
    join over a batch of times) and the diff ``sign * delta diff * row diff``.  Key codes
    are the key modulo 3, so codes collide between different keys, which must not match."""
    from ddlab.engine.kernels import matching as M

    key_code = lambda k: k % 3  # noqa: E731
    rows = sorted(data_rows, key=lambda r: key_code(r[0])) if is_sorted else data_rows
    # batch rows: key code, key, value, times (rdepth of them), diff
    data = np.array([[key_code(k), k, v, e, i] + [0] * (rdepth - 2) + [d]
                     for k, v, e, i, d in rows], dtype=np.int64).reshape(-1, 4 + rdepth).T.copy()
    dcodes = np.array([key_code(k) for k, _, _ in delta_rows], dtype=np.int64)
    dcols = np.array([[k, v] for k, v, _ in delta_rows], dtype=np.int64).reshape(-1, 2).T.copy()
    ddiffs = np.array([d for _, _, d in delta_rows], dtype=np.int64)
    order = M.key_order(dcodes)
    source = M.column_sources(1, 2, 2, delta_is_left, None)
    times = [(t[0] + a, t[1] + b, t[2]) for a, b in shifts[:len(delta_rows)]]
    tarr = np.array(times, dtype=np.int64).reshape(-1, 3).T.copy()
    out = np.empty((source.shape[1] + 3 + 1, 1), dtype=np.int64)
    n = M.match(data, data.shape[1], is_sorted, 1, rdepth, dcodes, order, dcols, ddiffs, 1,
                source, tarr, sign, out, 0)
    if n < 0:  # too small: grown as the join grows it, and called again
        out = np.empty((out.shape[0], -n), dtype=np.int64)
        n = M.match(data, data.shape[1], is_sorted, 1, rdepth, dcodes, order, dcols, ddiffs,
                    1, source, tarr, sign, out, 0)
    got = Counter(tuple(int(x) for x in out[:, j]) for j in range(n))
    want = Counter()
    for (dk, dv, dd), dt in zip(delta_rows, times):
        for k, v, e, i, d in rows:
            if k != dk:
                continue
            record = (dk, dv, v) if delta_is_left else (k, v, dv)
            time = tuple(max(a, b) for a, b in zip((e, i, 0)[:rdepth], dt)) + dt[rdepth:]
            want[record + time + (sign * dd * d,)] += 1
    assert got == want
