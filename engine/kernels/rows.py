"""Kernels over whole runs of rows: consolidation, and the sorted runs of a trace's spine.

- :func:`consolidate_rows`: sum the diffs of equal rows and drop zeros, rows sorted
  lexicographically (what every operator does to what it emits; the numpy path sorts with a
  dozen calls, a Python dict below 32 rows);
- :func:`sort_by_key` and :func:`merge_by_key`: a packed trace batch (one ``(fields, n)``
  int64 matrix, key code first) sorted stably by key code, and two such batches merged into
  one (the spine's merges of small batches within an epoch: a linear merge instead of a
  concatenation, an argsort and a gather);
- :func:`merge_compact`: two spine batches of earlier epochs merged, their times advanced to
  the frontier and their updates consolidated (the spine's other merges: the numpy path
  concatenates, consolidates the whole and sorts by key again, a dozen calls and three
  copies for what is a linear merge and a sort within each key).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .logics import _same, sort_rows, sum_sorted_runs
from .sorting import lexsort_segment, radix_sort  # noqa: F401  (radix_sort: sort_values)


@njit(cache=True)
def consolidate_rows(mat, diffs):
    """``(mat, diffs)`` with equal columns summed, zero sums dropped, sorted by the rows of
    ``mat`` (each column of ``mat`` is one row of fields, most significant field first)."""
    nf, n = mat.shape
    idx = sort_rows(mat, n)
    out = np.empty((nf, n), dtype=np.int64)
    w_out = np.empty(n, dtype=np.int64)
    m = sum_sorted_runs(mat, diffs, idx, 0, n, out, w_out, 0)
    return out[:, :m].copy(), w_out[:m].copy()


@njit(cache=True)
def sort_by_key(data):
    """``data`` with its columns sorted stably by row 0 (a packed batch by key code)."""
    nf, n = data.shape
    idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        idx[i] = i
    tmp = np.empty(n, dtype=np.int64)
    lexsort_segment(data[:1], idx, 0, n, tmp)
    out = np.empty((nf, n), dtype=np.int64)
    for i in range(n):
        a = idx[i]
        for f in range(nf):
            out[f, i] = data[f, a]
    return out


@njit(cache=True)
def merge_by_key(a, b):
    """Two packed batches sorted by row 0 merged into one (stable: for equal key codes the
    rows of ``a`` come first, as a stable sort of their concatenation orders them)."""
    out = np.empty((a.shape[0], a.shape[1] + b.shape[1]), dtype=np.int64)
    merge_by_key_into(a, b, out)
    return out


@njit(cache=True)
def merge_by_key_into(a, b, out):
    """:func:`merge_by_key` written into ``out`` (``(fields, len(a) + len(b))``, of the
    inputs' width: a large merge of narrowed batches is written in int32 directly)."""
    nf = a.shape[0]
    na, nb = a.shape[1], b.shape[1]
    i = j = k = 0
    while i < na and j < nb:
        if b[0, j] < a[0, i]:
            for f in range(nf):
                out[f, k] = b[f, j]
            j += 1
        else:
            for f in range(nf):
                out[f, k] = a[f, i]
            i += 1
        k += 1
    while i < na:
        for f in range(nf):
            out[f, k] = a[f, i]
        i += 1
        k += 1
    while j < nb:
        for f in range(nf):
            out[f, k] = b[f, j]
        j += 1
        k += 1


@njit(cache=True)
def merge_compact(a, b, time_row, epoch):
    """Two packed batches sorted by key code (row 0) merged into one: times advanced to the
    frontier ``(epoch, 0, ...)`` (row ``time_row`` raised to ``epoch``), equal updates
    summed, zero sums dropped, rows sorted by key code and, within a key, by their fields
    (what the numpy path's consolidation and stable sort by key leave)."""
    merged = merge_by_key(a, b)
    nf, n = merged.shape
    for i in range(n):
        if merged[time_row, i] < epoch:
            merged[time_row, i] = epoch
    fields = merged[:nf - 1]
    idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        idx[i] = i
    tmp = np.empty(n, dtype=np.int64)
    out = np.empty((nf, n), dtype=np.int64)
    m = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and merged[0, e] == merged[0, s]:
            e += 1
        if e - s > 1:
            lexsort_segment(fields, idx, s, e, tmp)
        i = s
        while i < e:
            r = idx[i]
            w = merged[nf - 1, r]
            j = i + 1
            while j < e and _same(fields, r, idx[j], 0, nf - 1):
                w += merged[nf - 1, idx[j]]
                j += 1
            if w != 0:
                for f in range(nf - 1):
                    out[f, m] = merged[f, r]
                out[nf - 1, m] = w
                m += 1
            i = j
        s = e
    return out[:, :m].copy()


def warm_up() -> None:
    mat = np.array([[2, 1, 2], [5, 4, 5]], dtype=np.int64)
    consolidate_rows(mat, np.array([1, 1, -1], dtype=np.int64))
    s = sort_by_key(mat)
    merge_by_key(s, s)
    narrow = s.astype(np.int32)  # a large merge of narrowed batches (trace.spine)
    merge_by_key_into(narrow, narrow, np.empty((2, 6), dtype=np.int32))
    merge_compact(np.array([[1, 2, 2], [3, 0, 1], [1, 1, -1]], dtype=np.int64),
                  np.array([[2], [1], [1]], dtype=np.int64), 1, 1)
    values = np.array([5, 3, 4], dtype=np.int64)
    radix_sort(values, 3)
