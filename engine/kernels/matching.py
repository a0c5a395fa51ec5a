"""Kernels of the join: match a batch of changes against a trace's batches, then group the
output pairs by time and consolidate them.

:func:`match` appends, for every pair of a delta row and a row of one packed trace batch with
the same key, the output record (columns picked from either side by ``source``), the time
``lub(delta row's time, row time)`` (one time for a whole delta, or each row's own when a join
takes a batch of times) and the diff ``sign * delta diff * row diff``.  The delta's rows are
given sorted by key code (``order``), so a sorted batch is searched once per distinct key;
an unsorted matrix (recent rows, the other side's delta for the ``dA x dB`` correction) has
each of its rows looked up among the delta's codes.  :func:`group_by_time` sorts the pairs
by time then record, sums equal ones and drops zeros: one consolidated run per time.

Buffers and capacity work as in :mod:`.histories`: ``out`` is ``(ncols + depth + 1,
capacity)``; a call that would overflow writes nothing and returns minus the count needed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .histories import key_range, lower_bound, upper_bound
from .logics import sort_rows, _same
from .sorting import RADIX_MIN, lexsort_segment, pack_fields, radix_sort_keys


@njit(cache=True)
def _emit_pairs(data, first, rdepth, dcols, ddiffs, ranges, nr, nkey, source, dtimes, sign,
                out, n):
    """Append the pairs of every range ``ranges[:, k]`` = (delta row, first batch row, end)
    for ``k < nr``, but those whose key columns differ (a key-code collision), each at the
    lub of the two rows' times (``dtimes[:, r]``: delta row ``r``'s, or the one column's for
    all); returns the new count.
    (All pairs in one call, the loops inside: numba does not inline a helper, and a call per
    pair, passing its arrays each time, made a match nearly three times as slow, 57 -> 20 ns
    a pair on the explorer's matches; see ``histories._put_rows``.)"""
    ncols = source.shape[1]
    depth = dtimes.shape[0]
    one_each = dtimes.shape[1] != 1  # else one time for every delta row
    fields = data.shape[0]
    tstart = fields - 1 - rdepth
    for k in range(nr):
        r = ranges[0, k]
        for i in range(ranges[1, k], ranges[2, k]):
            same = True
            for j in range(nkey):
                if dcols[j, r] != data[first + j, i]:
                    same = False
                    break
            if not same:
                continue
            for c in range(ncols):
                idx = source[1, c]
                out[c, n] = dcols[idx, r] if source[0, c] == 0 else data[first + idx, i]
            for j in range(depth):
                w = dtimes[j, r if one_each else 0]
                if j < rdepth:
                    v = data[tstart + j, i]
                    out[ncols + j, n] = v if v > w else w
                else:
                    out[ncols + j, n] = w
            out[ncols + depth, n] = sign * ddiffs[r] * data[fields - 1, i]
            n += 1
    return n


@njit(cache=True)
def match(data, m, is_sorted, first, rdepth, dcodes, order, dcols, ddiffs, nkey, source, dtimes,
          sign, out, n):
    """Append every matching pair of the delta (``dcodes`` in delta row order, ``order``
    sorting them, ``dtimes`` its rows' times, one column each, or one column for all) and
    the first ``m`` columns of ``data``; returns the new count or minus the count needed."""
    nd = len(order)
    if m == 0 or nd == 0:
        return n
    codes = data[0]
    total = 0
    nr = 0
    if is_sorted:
        # each delta row's range of batch rows, found once (a gallop per distinct key)
        ranges = np.empty((3, nd), dtype=np.int64)
        dense = nd * nd >= m  # (delta rows, not distinct keys: a cheap upper bound)
        a = 0
        start = 0
        while a < nd:
            code = dcodes[order[a]]
            b = a + 1
            while b < nd and dcodes[order[b]] == code:
                b += 1
            lo, hi = key_range(codes, code, start, m, dense)
            if hi > lo:
                total += (hi - lo) * (b - a)
                for s in range(a, b):
                    ranges[0, nr] = order[s]
                    ranges[1, nr] = lo
                    ranges[2, nr] = hi
                    nr += 1
            start = hi
            a = b
        if total == 0:
            return n
        if n + total > out.shape[1]:
            return -(n + total)
    else:
        sorted_codes = np.empty(nd, dtype=np.int64)
        for a in range(nd):
            sorted_codes[a] = dcodes[order[a]]
        for i in range(m):
            lo = lower_bound(sorted_codes, codes[i], 0, nd)
            hi = upper_bound(sorted_codes, codes[i], lo, nd)
            total += hi - lo
        if total == 0:
            return n
        if n + total > out.shape[1]:
            return -(n + total)
        ranges = np.empty((3, total), dtype=np.int64)
        for i in range(m):
            lo = lower_bound(sorted_codes, codes[i], 0, nd)
            hi = upper_bound(sorted_codes, codes[i], lo, nd)
            for s in range(lo, hi):
                ranges[0, nr] = order[s]
                ranges[1, nr] = i
                ranges[2, nr] = i + 1
                nr += 1
    return _emit_pairs(data, first, rdepth, dcols, ddiffs, ranges, nr, nkey, source, dtimes,
                       sign, out, n)


@njit(cache=True)
def key_order(codes):
    """A permutation sorting ``codes`` (the identity when they already ascend)."""
    n = len(codes)
    idx = np.empty(n, dtype=np.int64)
    ascending = True
    for i in range(n):
        idx[i] = i
        if i and codes[i] < codes[i - 1]:
            ascending = False
    if not ascending:
        tmp = np.empty(n, dtype=np.int64)
        lexsort_segment(codes.reshape(1, n), idx, 0, n, tmp)
    return idx


@njit(cache=True)
def _grouped_outputs(n, ncols, depth):
    """:func:`group_by_time`'s result buffers for at most ``n`` pairs."""
    return (np.empty((ncols, n), dtype=np.int64), np.empty((n, depth), dtype=np.int64),
            np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64))


@njit(cache=True)
def group_by_time(out, n, ncols, depth):
    """The pairs of ``out[:, :n]`` sorted by time then record, equal ones summed, zeros
    dropped: ``(cols (ncols, m), times (m, depth), diffs, starts)``, one run per distinct
    time at ``starts[g]:starts[g + 1]``.

    Each pair's time and record are packed into one key (:func:`~.sorting.pack_fields`) and
    the keys radix-sorted with the pairs' diffs: equal pairs are then equal neighbours, a
    time's run ends where the key's time bits change, and the fields are read back from
    the sorted keys, so nothing is read through row numbers (comparing fields through them
    cost a cache miss per field per pair: 128-145 ns a pair on the closure's moves, against
    about 70 with the positions carried and the diffs read through them).  Pairs whose fields
    need more than 63 bits are compared field by field."""
    width = depth + ncols
    rows = np.empty(width, dtype=np.int64)
    for d in range(depth):
        rows[d] = ncols + d
    for c in range(ncols):
        rows[depth + c] = c
    keys, lows, bits, total = pack_fields(out, rows, n)
    if total > 63 or n < 2:
        return _group_by_time_compared(out, n, ncols, depth)
    diff_row = ncols + depth
    weights = np.empty(n, dtype=np.int64)  # the diffs, moved with their keys
    if n >= RADIX_MIN:
        for i in range(n):
            weights[i] = out[diff_row, i]
        radix_sort_keys(keys, weights, total)
    else:
        idx = np.empty(n, dtype=np.int64)
        for i in range(n):
            idx[i] = i
        tmp = np.empty(n, dtype=np.int64)
        lexsort_segment(keys.view(np.int64).reshape(1, n), idx, 0, n, tmp)
        ordered = np.empty(n, dtype=np.uint64)
        for i in range(n):
            ordered[i] = keys[idx[i]]
            weights[i] = out[diff_row, idx[i]]
        keys = ordered
    record_bits = 0
    for c in range(ncols):
        record_bits += bits[depth + c]
    time_shift = np.uint64(record_bits)
    cols, times, diffs, starts = _grouped_outputs(n, ncols, depth)
    m = 0
    groups = 0
    last_time = np.uint64(0)
    i = 0
    while i < n:
        key = keys[i]
        w = weights[i]
        j = i + 1
        while j < n and keys[j] == key:
            w += weights[j]
            j += 1
        if w != 0:
            time_key = key >> time_shift
            if groups == 0 or time_key != last_time:
                starts[groups] = m
                groups += 1
                last_time = time_key
            rest = key
            for f in range(width - 1, -1, -1):  # least significant field first
                b = bits[f]
                value = lows[f]
                if b:
                    value += np.int64(rest & ((np.uint64(1) << np.uint64(b)) - np.uint64(1)))
                    rest = rest >> np.uint64(b)
                if f < depth:
                    times[m, f] = value
                else:
                    cols[f - depth, m] = value
            diffs[m] = w
            m += 1
        i = j
    starts[groups] = m
    return cols[:, :m].copy(), times[:m].copy(), diffs[:m].copy(), starts[:groups + 1].copy()


@njit(cache=True)
def _group_by_time_compared(out, n, ncols, depth):
    """:func:`group_by_time` comparing the fields through the sorted row numbers (rows whose
    fields do not pack into 63 bits)."""
    keys = np.empty((depth + ncols, n), dtype=np.int64)
    for i in range(n):
        for j in range(depth):
            keys[j, i] = out[ncols + j, i]
        for c in range(ncols):
            keys[depth + c, i] = out[c, i]
    idx = sort_rows(keys, n)
    cols, times, diffs, starts = _grouped_outputs(n, ncols, depth)
    m = 0
    groups = 0
    i = 0
    idx_prev = 0
    width = depth + ncols
    while i < n:
        a = idx[i]
        w = out[ncols + depth, a]
        j = i + 1
        while j < n and _same(keys, a, idx[j], 0, width):
            w += out[ncols + depth, idx[j]]
            j += 1
        if w != 0:
            if groups == 0 or not _same(keys, a, idx_prev, 0, depth):
                starts[groups] = m
                groups += 1
            for c in range(ncols):
                cols[c, m] = out[c, a]
            for d in range(depth):
                times[m, d] = out[ncols + d, a]
            diffs[m] = w
            m += 1
            idx_prev = a
        i = j
    starts[groups] = m
    return cols[:, :m].copy(), times[:m].copy(), diffs[:m].copy(), starts[:groups + 1].copy()


def column_sources(nkey: int, delta_arity: int, other_arity: int, delta_is_left: bool, select):
    """``(2, ncols)``: for every output column, whether it comes from the delta (0) or the
    other side (1), and which column there."""
    if delta_is_left:
        where = [(0, j) for j in range(delta_arity)] + \
            [(1, j) for j in range(nkey, other_arity)]
    else:
        where = [(1, j) for j in range(other_arity)] + \
            [(0, j) for j in range(nkey, delta_arity)]
    if select is not None:
        where = [where[k] for k in select]
    return np.array(where, dtype=np.int64).reshape(-1, 2).T.copy()


def warm_up() -> None:
    """Compile (or load) the join's kernels (:mod:`.join`) on tiny inputs."""
    data = np.array([[1, 1, 2], [1, 1, 2], [5, 3, 4], [0, 0, 0], [0, 2, 0], [1, -1, 1]],
                    dtype=np.int64)
    dcodes = np.array([2, 1], dtype=np.int64)
    order = key_order(dcodes)
    dcols = np.array([[2, 1], [7, 8]], dtype=np.int64)
    diffs = np.array([1, -1], dtype=np.int64)
    source = column_sources(1, 2, 2, True, None)
    t = np.array([[0, 0], [1, 1]], dtype=np.int64)  # each delta row's time, one per column
    out = np.empty((6, 16), dtype=np.int64)
    n = match(data, 3, True, 1, 2, dcodes, order, dcols, diffs, 1, source, t, 1, out, 0)
    n = match(data, 3, False, 1, 2, dcodes, order, dcols, diffs, 1, source, t, -1, out, n)
    # a narrowed spine batch (int32; see trace.layout.narrowed)
    match(data.astype(np.int32), 3, True, 1, 2, dcodes, order, dcols, diffs, 1, source, t,
          1, out, n)
    group_by_time(out, n, 3, 2)
