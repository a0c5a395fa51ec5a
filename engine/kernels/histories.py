"""Kernels that read a few keys' histories out of packed trace batches.

A trace batch is one ``(fields, n)`` int64 matrix sorted by its first row, the key code:
``[key code], columns..., time coordinates..., diff`` (the key code row is absent when the key
code *is* the first column; ``first`` says where the columns start).  For a sorted set of
query codes and a time ``t``, :func:`scan_sorted` appends every row of those keys (among the
first ``m`` columns: a trace's recent rows fill a buffer partly) to a row
buffer when its time is ``<= t`` (the rows the accumulation at ``t`` sums) and to a *later*
buffer otherwise, as ``(key code, lub(time, t))`` (the interesting times a reduce must
revisit).  :func:`scan_unsorted` does the same for a matrix in insertion order (a trace's
recent rows).

Buffers: ``rows`` is ``(2 + arity, capacity)``: key index (position in the query codes),
columns, diff; ``later`` is ``(1 + depth, capacity)``: key code, time.  Both kernels return
the new fill counts and the rows read, or minus the counts they would need when a buffer is
too small (the caller grows it and calls again: nothing was written past the old counts).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import logics
from .sorting import RADIX_MIN, _field_span, lexsort_segment, radix_sort_keys


@njit(cache=True)
def lower_bound(col, value, lo, hi):
    """First index in ``[lo, hi)`` of sorted ``col`` whose value is ``>= value``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if col[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def upper_bound(col, value, lo, hi):
    """First index in ``[lo, hi)`` of sorted ``col`` whose value is ``> value``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if col[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def gallop_lower(col, value, lo, hi):
    """:func:`lower_bound` found by probing ``lo + 1, lo + 2, lo + 4, ...`` first: about
    ``2 log2(d)`` probes near ``lo`` for an answer ``d`` rows ahead, where a binary search's
    first probes land far away in a large batch (each a cache miss)."""
    if lo >= hi or col[lo] >= value:
        return lo
    step = 1
    while lo + step < hi and col[lo + step] < value:
        lo += step
        step *= 2
    return lower_bound(col, value, lo + 1, min(lo + step, hi))


@njit(cache=True)
def gallop_upper(col, value, lo, hi):
    """:func:`upper_bound` by galloping from ``lo`` (see :func:`gallop_lower`)."""
    if lo >= hi or col[lo] > value:
        return lo
    step = 1
    while lo + step < hi and col[lo + step] <= value:
        lo += step
        step *= 2
    return upper_bound(col, value, lo + 1, min(lo + step, hi))


@njit(cache=True)
def key_range(codes, code, start, m, dense):
    """``[lo, hi)``: the rows of key ``code`` in sorted ``codes[start:m]``.  The end of a key's
    rows is a few rows on: galloped.  So is the start when the queries are ``dense`` (the
    next key is near: as many queries as the square root of the rows or more); a few
    queries in a large batch binary-search it."""
    if dense:
        lo = gallop_lower(codes, code, start, m)
    else:
        lo = lower_bound(codes, code, start, m)
    return lo, gallop_upper(codes, code, lo, m)


@njit(cache=True)
def find(keys, code):
    """Position of ``code`` in sorted ``keys``, or -1."""
    i = lower_bound(keys, code, 0, len(keys))
    if i < len(keys) and keys[i] == code:
        return i
    return -1


#: how many of a key's later times a new one is compared with (see :func:`_put_rows`)
DOMINATED_WINDOW = 8


@njit(cache=True)
def _put_rows(data, lo, hi, g, t, first, arity, rdepth, rows, n, later, nl):
    """Append rows ``lo..hi-1`` of ``data`` (all of key index ``g``) to ``rows`` (time
    ``<= t``) or ``later``; returns the new fill counts.  A later time is not appended when
    one of the key's later times appended by this call (the last :data:`DOMINATED_WINDOW` of
    them) is ``<=`` it: only a key's minimal later times are scheduled (``logics._minimal``),
    and within a sorted batch a record's rows come in time order, so most of a long history's
    later rows repeat or follow one already there (a loop's reduce otherwise wrote every
    later iteration of every record at each run).

    One call per key range, the row loop inside: numba does not inline a per-row helper, and
    calling one per row (its four array arguments passed each time) made a scan three times
    slower (39 -> 14 ns a row, measured on the explorer's scans)."""
    fields = data.shape[0]
    tstart = first + arity
    depth = len(t)
    kstart = nl
    for i in range(lo, hi):
        now = True
        for j in range(rdepth):
            if data[tstart + j, i] > t[j]:
                now = False
                break
        if now:
            rows[0, n] = g
            for j in range(arity):
                rows[1 + j, n] = data[first + j, i]
            rows[1 + arity, n] = data[fields - 1, i]
            n += 1
            continue
        later[0, nl] = data[0, i]
        for j in range(rdepth):
            v = data[tstart + j, i]
            later[1 + j, nl] = v if v > t[j] else t[j]
        for j in range(rdepth, depth):
            later[1 + j, nl] = t[j]
        keep = True
        for b in range(max(kstart, nl - DOMINATED_WINDOW), nl):
            below = True
            for j in range(1, depth + 1):
                if later[j, b] > later[j, nl]:
                    below = False
                    break
            if below:  # an earlier later time of this key is <= this one
                keep = False
                break
        if keep:
            nl += 1
    return n, nl


@njit(cache=True)
def scan(data, m, is_sorted, keys, t, first, arity, rdepth, rows, n, later, nl):
    """:func:`scan_sorted` or :func:`scan_unsorted` over the first ``m`` columns of ``data``
    (one compiled entry point for both)."""
    if is_sorted:
        return scan_sorted(data, m, keys, t, first, arity, rdepth, rows, n, later, nl)
    return scan_unsorted(data, m, keys, t, first, arity, rdepth, rows, n, later, nl)


@njit(cache=True)
def scan_sorted(data, m, keys, t, first, arity, rdepth, rows, n, later, nl):
    """Append the rows of ``keys`` (sorted, unique) in batch ``data`` (sorted by key code).
    Returns ``(n, nl, rows read)``, or ``(-need_rows, -need_later, 0)`` when a buffer is too
    small."""
    k = len(keys)
    if m == 0 or k == 0:
        return n, nl, 0
    codes = data[0]
    los = np.empty(k, dtype=np.int64)
    his = np.empty(k, dtype=np.int64)
    total = 0
    if k >= m:
        # more queries than rows (a from-scratch run's chunk of keys against a small batch):
        # one merge of the two sorted sequences, not a search per query
        i = 0
        for g in range(k):
            key = keys[g]
            while i < m and codes[i] < key:
                i += 1
            los[g] = i
            while i < m and codes[i] == key:
                i += 1
            his[g] = i
            total += i - los[g]
    else:
        start = 0
        dense = k * k >= m
        for g in range(k):
            lo, hi = key_range(codes, keys[g], start, m, dense)
            los[g] = lo
            his[g] = hi
            total += hi - lo
            start = hi
    if n + total > rows.shape[1] or nl + total > later.shape[1]:
        return -(n + total), -(nl + total), 0
    for g in range(k):
        if his[g] > los[g]:
            n, nl = _put_rows(data, los[g], his[g], g, t, first, arity, rdepth, rows, n,
                              later, nl)
    return n, nl, total


@njit(cache=True)
def scan_unsorted(data, m, keys, t, first, arity, rdepth, rows, n, later, nl):
    """:func:`scan_sorted` for a matrix in insertion order (each row's key looked up)."""
    if m == 0 or len(keys) == 0:
        return n, nl, 0
    total = 0
    where = np.empty(m, dtype=np.int64)
    for i in range(m):
        where[i] = find(keys, data[0, i])
        if where[i] >= 0:
            total += 1
    if n + total > rows.shape[1] or nl + total > later.shape[1]:
        return -(n + total), -(nl + total), 0
    for i in range(m):
        if where[i] >= 0:  # (one row at a time: rows of one key are not together here)
            n, nl = _put_rows(data, i, i + 1, where[i], t, first, arity, rdepth, rows, n,
                              later, nl)
    return n, nl, total


@njit(cache=True)
def unique_codes(codes):
    """Sorted distinct values of ``codes`` (the sort skipped when they already ascend).  A
    long unsorted run is radix-sorted as values less their minimum: no order among equal
    codes to keep, so no positions move with them (hashed codes: 64 bits each)."""
    n = len(codes)
    ascending = True
    for i in range(1, n):
        if codes[i] < codes[i - 1]:
            ascending = False
            break
    if ascending:
        s = codes
    elif n >= RADIX_MIN:
        no_idx = np.empty(0, dtype=np.int64)
        low, bits = _field_span(codes.reshape(1, n), 0, no_idx, 0, n)
        shifted = np.empty(n, dtype=np.uint64)
        for i in range(n):
            shifted[i] = np.uint64(codes[i]) - np.uint64(low)
        radix_sort_keys(shifted, no_idx, bits)
        s = np.empty(n, dtype=np.int64)
        for i in range(n):
            s[i] = np.int64(shifted[i] + np.uint64(low))
    else:
        idx = np.empty(n, dtype=np.int64)
        for i in range(n):
            idx[i] = i
        tmp = np.empty(n, dtype=np.int64)
        lexsort_segment(codes.reshape(1, n), idx, 0, n, tmp)
        s = np.empty(n, dtype=np.int64)
        for i in range(n):
            s[i] = codes[idx[i]]
    out = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if m == 0 or s[i] != out[m - 1]:
            out[m] = s[i]
            m += 1
    return out[:m].copy()


def warm_up() -> None:
    """Compile (or load) the kernels every built-in logic but ``threshold`` uses (those of
    :mod:`.reduce`) on tiny inputs."""
    no_rows, none = np.empty((1, 0), dtype=np.int64), np.empty(0, dtype=np.int64)
    keys = np.array([1, 2], dtype=np.int64)
    t = np.array([0, 1], dtype=np.int64)
    data = np.array([[1, 1, 2], [1, 1, 2], [5, 3, 4], [0, 0, 0], [0, 2, 0], [1, -1, 1]],
                    dtype=np.int64)
    rows = np.empty((4, 8), dtype=np.int64)
    later = np.empty((3, 8), dtype=np.int64)
    n, nl, _ = scan(data, data.shape[1], True, keys, t, 1, 2, 2, rows, 0, later, 0)
    # a narrowed spine batch (int32; see trace.layout.narrowed)
    scan(data.astype(np.int32), data.shape[1], True, keys, t, 1, 2, 2, rows, 0, later, 0)
    unique_codes(np.array([2, 1, 2], dtype=np.int64))
    logics.finish(logics.MIN, 1, True, False, 2, rows, n, 2, rows, n, 2, no_rows, none, none,
                  later, nl)
