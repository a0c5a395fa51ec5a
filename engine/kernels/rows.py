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
def _two_rows(out, s, nf, m):
    """:func:`merge_compact`'s step for a key of two rows (``s``, ``s + 1``): summed when
    equal, else written in order; returns the new ``m``."""
    t = s + 1
    first, second = s, t
    same = True
    for f in range(1, nf - 1):
        x = out[f, s]
        y = out[f, t]
        if x != y:
            same = False
            if y < x:
                first, second = t, s
            break
    if same:
        w = out[nf - 1, s] + out[nf - 1, t]
        if w != 0:
            for f in range(nf - 1):
                out[f, m] = out[f, s]
            out[nf - 1, m] = w
            m += 1
        return m
    a0 = out[nf - 1, first]
    b0 = out[nf - 1, second]
    # (first may be s + 1: read both rows before writing either)
    if first == t:
        for f in range(nf):
            x = out[f, t]
            out[f, t] = out[f, s]
            out[f, s] = x
    if a0 != 0:
        if m != s:
            for f in range(nf):
                out[f, m] = out[f, s]
        m += 1
    if b0 != 0:
        if m != t:
            for f in range(nf):
                out[f, m] = out[f, t]
        m += 1
    return m


@njit(cache=True)
def merge_compact(a, b, time_row, epoch):
    """Two packed batches sorted by key code (row 0) merged into one: times advanced to the
    frontier ``(epoch, 0, ...)`` (row ``time_row`` raised to ``epoch``), equal updates
    summed, zero sums dropped, rows sorted by key code and, within a key, by their fields
    (what the numpy path's consolidation and stable sort by key leave).  Returns ``(out,
    m)``: the result is ``out[:, :m]`` (the caller copies or narrows it).

    The batches are merged straight into the result, and each key's rows are sorted and
    summed through a buffer the size of the key, written back in place (the result's front
    never passes the key being read): one row-sized array, where a merged copy, two index
    arrays and a final copy each cost their page faults (83-129 -> 65-77 ns a row on 12
    captured merges of the closure's moves).  ``a`` and ``b`` may be narrowed (int32)."""
    nf = a.shape[0]
    n = a.shape[1] + b.shape[1]
    out = np.empty((nf, n), dtype=np.int64)
    merge_by_key_into(a, b, out)
    for i in range(n):
        if out[time_row, i] < epoch:
            out[time_row, i] = epoch
    fields = out[:nf - 1]
    cap = 16
    idx = np.empty(cap, dtype=np.int64)
    tmp = np.empty(cap, dtype=np.int64)
    seg = np.empty((nf, cap), dtype=np.int64)
    m = 0
    s = 0
    while s < n:
        e = s + 1
        while e < n and out[0, e] == out[0, s]:
            e += 1
        size = e - s
        if size == 1:
            if out[nf - 1, s] != 0:
                if m != s:
                    for f in range(nf):
                        out[f, m] = out[f, s]
                m += 1
            s = e
            continue
        if size == 2:  # (most keys of a record-keyed trace: one record at two times)
            m = _two_rows(out, s, nf, m)
            s = e
            continue
        if size > cap:
            cap = max(size, 2 * cap)
            idx = np.empty(cap, dtype=np.int64)
            tmp = np.empty(cap, dtype=np.int64)
            seg = np.empty((nf, cap), dtype=np.int64)
        for k in range(size):
            idx[k] = s + k
        lexsort_segment(fields, idx, 0, size, tmp)
        for k in range(size):
            r = idx[k]
            for f in range(nf):
                seg[f, k] = out[f, r]
        k = 0
        while k < size:
            w = seg[nf - 1, k]
            j = k + 1
            while j < size and _same(seg, k, j, 0, nf - 1):
                w += seg[nf - 1, j]
                j += 1
            if w != 0:
                for f in range(nf - 1):
                    out[f, m] = seg[f, k]
                out[nf - 1, m] = w
                m += 1
            k = j
        s = e
    return out, m


def warm_up() -> None:
    mat = np.array([[2, 1, 2], [5, 4, 5]], dtype=np.int64)
    consolidate_rows(mat, np.array([1, 1, -1], dtype=np.int64))
    s = sort_by_key(mat)
    merge_by_key(s, s)
    narrow = s.astype(np.int32)  # a large merge of narrowed batches (trace.spine)
    merge_by_key_into(narrow, narrow, np.empty((2, 6), dtype=np.int32))
    merge_compact(np.array([[1, 2, 2], [3, 0, 1], [1, 1, -1]], dtype=np.int64),
                  np.array([[2], [1], [1]], dtype=np.int64), 1, 1)
    merge_compact(narrow, narrow, 1, 1)  # two narrowed batches (trace.spine)
    values = np.array([5, 3, 4], dtype=np.int64)
    radix_sort(values, 3)
