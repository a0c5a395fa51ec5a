"""Batches and consolidation (``engine/batch.py``): every consolidation path (a few rows in a
dict, packed values for large integer batches, chunked scans) equals the general path and a
from-scratch ``Counter``."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ddlab.engine import tuning
from ddlab.engine.batch import consolidate
from ddlab.engine.testing import tuned

ROWS = st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2), st.integers(0, 2),
                          st.integers(-2, 2)), max_size=2 * tuning.SMALL_CONSOLIDATION)


def _arrays(rows):
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return (a[:, 0].copy(), a[:, 1].copy()), a[:, 2:3].copy(), a[:, 3].copy()


@given(rows=ROWS, with_times=st.booleans())
def test_small_consolidation_equals_general_and_oracle(rows, with_times):
    cols, times, diffs = _arrays(rows)
    args = (cols, diffs, times) if with_times else (cols, diffs)
    fast = consolidate(*args)
    with tuned("general"):
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
    with tuned("tiny"):
        fast = consolidate(*args)
    with tuned("general"):
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
        with tuned(CHUNK_ROWS=1000):  # chunk boundaries and a partial last chunk
            _same(consolidate(*args, runs=True), fast)
        with tuned("general"):
            general = consolidate(*args, runs=True)
        _same(fast, general)



@pytest.mark.parametrize("duplicate_at", [None, 0, 1499, 2999])
def test_packed_consolidation_of_distinct_rows_chunk_by_chunk(duplicate_at):
    """Rows all distinct (every chunk then starts a group at every row: no index array is
    made) or distinct but for one pair in the first, a middle or the last chunk: the same
    rows as the general path, with times and without."""
    rng = np.random.default_rng(3)
    n = 3000
    a = rng.permutation(n)
    cols = (a.copy(), (a * 7) % 1000)
    if duplicate_at is not None:   # the row sorted at duplicate_at appears twice
        cols[0][np.flatnonzero(a == duplicate_at + 1)] = duplicate_at
        cols[1][np.flatnonzero(a == duplicate_at + 1)] = (duplicate_at * 7) % 1000
    diffs = rng.choice([1, 2], n)
    times = rng.integers(0, 3, (n, 2))
    for args in ((cols, diffs), (cols, diffs, times), (cols, np.ones(n, dtype=np.int64))):
        with tuned(CHUNK_ROWS=1000, PACKED_ROWS=16):
            fast = consolidate(*args)
        with tuned("general"):
            general = consolidate(*args)
        _same(fast, general)


def test_packed_consolidation_of_distinct_rows_makes_no_row_sized_temporary():
    """Consolidating distinct rows needs little more memory than its result: the packed
    rows become a result column, and no group index or copy of them is made (the peak was
    four row-sized arrays above the result; at 6.8M rows, 200 MB at the from-scratch CC's
    peak)."""
    import tracemalloc

    n = 200_000
    a = np.random.default_rng(1).permutation(n)
    cols, diffs = (a, (a * 7) % 1000), np.ones(n, dtype=np.int64)
    consolidate(cols, diffs)   # (compiles what it uses first)
    tracemalloc.start()
    try:
        out = consolidate(cols, diffs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    result = sum(c.nbytes for c in out[0]) + out[1].nbytes
    assert len(out[1]) == n and peak < result + 8 * n // 2
