"""Kernels that turn a few keys' gathered rows into a reduce's output changes.

Input: the row buffers of :mod:`.histories` (key index, columns, diff), one for the reduce's
input accumulated at ``t`` and one for its output accumulated at ``t``.  :func:`finish`
groups the rows by key (a counting sort), evaluates the logic per key, subtracts the output
accumulated so far, and groups the later interesting times, in one call:

- ``COUNT`` and ``DISTINCT`` of one-field records are *abelian* here: when the key code is
  the key column, a key's count is the sum of its rows' diffs, with no consolidation by
  record (the Rust crate's ``count``/``reduce_abelian`` idea: the accumulated value is a
  group sum);
- ``MIN``/``MAX`` find the smallest (largest) value whose accumulated weight is positive in
  a few linear passes, without sorting the key's history;
- everything else (``SUM``, several key columns, hashed keys, collisions, and a ``MIN``
  whose few smallest values all cancel) consolidates the key's rows by record (sort + sum)
  and evaluates the logic on the consolidated records, exactly as the numpy path does.

:func:`finish_given` is the same with the new weights per record given (``threshold``: the
user's vectorised function runs in Python between :func:`consolidate` and it).

Records are compared field by field as int64 (the caller sends only integer, bool and
interned-object key columns, and integer or bool value columns where order matters).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .sorting import lexsort_segment, pack_fields
from .spec import COUNT, SUM, MIN, MAX, DISTINCT, GIVEN  # noqa: F401

#: ``MIN``/``MAX`` try this many candidate values per key before sorting the key's rows.
EXTREME_PASSES = 4


@njit(cache=True)
def _same(cols, a, b, lo, hi):
    for j in range(lo, hi):
        if cols[j, a] != cols[j, b]:
            return False
    return True


@njit(cache=True)
def sort_rows(cols, n):
    """A permutation of ``0..n-1`` sorting the columns ``cols[:, :n]`` lexicographically.
    When the fields' ranges fit in 63 bits together (node ids, labels, iterations, epochs),
    each row is packed into one key and those are sorted (one comparison per step instead
    of one per field); otherwise the fields are compared one by one."""
    nf = cols.shape[0]
    idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        idx[i] = i
    tmp = np.empty(n, dtype=np.int64)
    if n < 2:
        return idx
    fields = np.empty(nf, dtype=np.int64)
    for f in range(nf):
        fields[f] = f
    keys, lows, bits, total = pack_fields(cols, fields, n)
    if total > 63:
        lexsort_segment(cols, idx, 0, n, tmp)
    else:  # one packed field
        lexsort_segment(keys.view(np.int64).reshape(1, n), idx, 0, n, tmp)
    return idx


@njit(cache=True)
def _all_same(cols, lo, hi):
    """Whether rows ``lo..hi-1`` hold one record (a key's record at several times: most
    keys of a record-keyed ``distinct``)."""
    for i in range(lo + 1, hi):
        if not _same(cols, lo, i, 0, cols.shape[0]):
            return False
    return True


@njit(cache=True)
def _by_key(rows, n, nkeys, arity):
    """Counting sort of buffer rows by key index: ``(cols (arity, n), diffs, starts)``."""
    starts = np.zeros(nkeys + 1, dtype=np.int64)
    for i in range(n):
        starts[rows[0, i] + 1] += 1
    for g in range(nkeys):
        starts[g + 1] += starts[g]
    pos = starts[:nkeys].copy()
    cols = np.empty((arity, n), dtype=np.int64)
    diffs = np.empty(n, dtype=np.int64)
    for i in range(n):
        g = rows[0, i]
        p = pos[g]
        pos[g] = p + 1
        for j in range(arity):
            cols[j, p] = rows[1 + j, i]
        diffs[p] = rows[1 + arity, i]
    return cols, diffs, starts


@njit(cache=True)
def _consolidate_segment(cols, diffs, lo, hi, idx, tmp, out_cols, out_w, m):
    """Append the records of rows ``lo..hi-1`` consolidated (sorted, zeros dropped) to
    ``out_cols``/``out_w`` from position ``m``; returns the new count."""
    for i in range(lo, hi):
        idx[i] = i
    lexsort_segment(cols, idx, lo, hi, tmp)
    return sum_sorted_runs(cols, diffs, idx, lo, hi, out_cols, out_w, m)


@njit(cache=True)
def sum_sorted_runs(cols, diffs, idx, lo, hi, out_cols, out_w, m):
    """Append the records ``idx[lo:hi]`` (row numbers sorted by record) with equal records'
    diffs summed, zero sums dropped, to ``out_cols``/``out_w`` from position ``m``; returns
    the new count."""
    arity = cols.shape[0]
    i = lo
    while i < hi:
        a = idx[i]
        w = diffs[a]
        j = i + 1
        while j < hi and _same(cols, a, idx[j], 0, arity):
            w += diffs[idx[j]]
            j += 1
        if w != 0:
            for f in range(arity):
                out_cols[f, m] = cols[f, a]
            out_w[m] = w
            m += 1
        i = j
    return m


@njit(cache=True)
def consolidate_by_key(rows, n, nkeys, arity):
    """The rows of a buffer consolidated per key: ``(cols, weights, starts)``, key ``g``'s
    records at ``starts[g]:starts[g + 1]``, sorted by record, zero weights dropped."""
    cols, diffs, starts = _by_key(rows, n, nkeys, arity)
    idx = np.empty(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    out_cols = np.empty((arity, n), dtype=np.int64)
    out_w = np.empty(n, dtype=np.int64)
    out_starts = np.zeros(nkeys + 1, dtype=np.int64)
    m = 0
    for g in range(nkeys):
        lo, hi = starts[g], starts[g + 1]
        if hi - lo == 1 or (hi > lo and _all_same(cols, lo, hi)):  # (nothing to sort)
            total = 0
            for i in range(lo, hi):
                total += diffs[i]
            if total != 0:
                for f in range(arity):
                    out_cols[f, m] = cols[f, lo]
                out_w[m] = total
                m += 1
        elif hi > lo:
            m = _consolidate_segment(cols, diffs, lo, hi, idx, tmp, out_cols, out_w, m)
        out_starts[g + 1] = m
    return out_cols[:, :m], out_w[:m], out_starts


@njit(cache=True)
def _evaluate_segment(logic, kn, cols, w, lo, hi, out_cols, out_w, m):
    """Append the logic's output for the consolidated records ``lo..hi-1`` of one key code
    (several keys when codes collide: subgroups by the first ``kn`` fields)."""
    arity = cols.shape[0]
    a = lo
    while a < hi:
        b = a + 1
        while b < hi and _same(cols, a, b, 0, kn):
            b += 1
        if logic == COUNT or logic == SUM:
            total = 0
            for i in range(a, b):
                total += w[i] if logic == COUNT else cols[kn, i] * w[i]
            if total != 0 or logic == SUM:
                for f in range(kn):
                    out_cols[f, m] = cols[f, a]
                out_cols[kn, m] = total
                out_w[m] = 1
                m += 1
        elif logic == MIN or logic == MAX:
            pick = -1
            for i in range(a, b):
                if w[i] > 0:
                    pick = i
                    if logic == MIN:
                        break
            if pick >= 0:
                for f in range(arity):
                    out_cols[f, m] = cols[f, pick]
                out_w[m] = 1
                m += 1
        else:  # DISTINCT (GIVEN weights are evaluated by the caller)
            for i in range(a, b):
                if w[i] > 0:
                    for f in range(arity):
                        out_cols[f, m] = cols[f, i]
                    out_w[m] = 1
                    m += 1
        a = b
    return m


@njit(cache=True)
def _extreme_fast(logic, cols, diffs, lo, hi):
    """``MIN``/``MAX`` of one key's unconsolidated rows (value in field 1, key code in field
    0): the row holding the extreme value of positive accumulated weight, found in at most
    :data:`EXTREME_PASSES` linear passes; -1 when no value is positive, -2 when undecided."""
    have_bound = False
    bound = 0
    for _ in range(EXTREME_PASSES):
        found = False
        best = 0
        where = -1
        for i in range(lo, hi):
            v = cols[1, i]
            if have_bound and (v <= bound if logic == MIN else v >= bound):
                continue
            if not found or (v < best if logic == MIN else v > best):
                best = v
                where = i
                found = True
        if not found:
            return -1
        total = 0
        for i in range(lo, hi):
            if cols[1, i] == best:
                total += diffs[i]
        if total > 0:
            return where
        have_bound = True
        bound = best
    return -2


@njit(cache=True)
def evaluate_by_key(logic, kn, key_is_code, rows, n, nkeys, arity):
    """The logic's new output per key from unconsolidated buffer rows: ``(cols, weights,
    starts)`` like :func:`consolidate_by_key` (records sorted within each key)."""
    cols, diffs, starts = _by_key(rows, n, nkeys, arity)
    out_arity = kn + 1 if logic == COUNT or logic == SUM else arity
    cap = n if logic == DISTINCT else nkeys + n
    out_cols = np.empty((out_arity, cap), dtype=np.int64)
    out_w = np.empty(cap, dtype=np.int64)
    out_starts = np.zeros(nkeys + 1, dtype=np.int64)
    idx = np.empty(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    acc_cols = np.empty((arity, n), dtype=np.int64)
    acc_w = np.empty(n, dtype=np.int64)
    m = 0
    for g in range(nkeys):
        lo, hi = starts[g], starts[g + 1]
        if lo == hi:
            out_starts[g + 1] = m
            continue
        done = False
        if key_is_code:
            if logic == COUNT or (logic == DISTINCT and arity == 1):
                total = 0
                for i in range(lo, hi):
                    total += diffs[i]
                if logic == COUNT and total != 0:
                    out_cols[0, m] = cols[0, lo]
                    out_cols[1, m] = total
                    out_w[m] = 1
                    m += 1
                elif logic == DISTINCT and total > 0:
                    out_cols[0, m] = cols[0, lo]
                    out_w[m] = 1
                    m += 1
                done = True
            elif (logic == MIN or logic == MAX) and arity == 2:
                if hi - lo == 1:  # (most keys of a large run: no call)
                    pick = lo if diffs[lo] > 0 else -1
                else:
                    pick = _extreme_fast(logic, cols, diffs, lo, hi)
                if pick != -2:
                    if pick >= 0:
                        out_cols[0, m] = cols[0, pick]
                        out_cols[1, m] = cols[1, pick]
                        out_w[m] = 1
                        m += 1
                    done = True
        if not done:
            if _all_same(cols, lo, hi):  # (one record at several times: a sum, no sort)
                total = 0
                for i in range(lo, hi):
                    total += diffs[i]
                c = 0
                if total != 0:
                    for f in range(arity):
                        acc_cols[f, 0] = cols[f, lo]
                    acc_w[0] = total
                    c = 1
            else:
                c = _consolidate_segment(cols, diffs, lo, hi, idx, tmp, acc_cols, acc_w, 0)
            m = _evaluate_segment(logic, kn, acc_cols, acc_w, 0, c, out_cols, out_w, m)
        out_starts[g + 1] = m
    return out_cols[:, :m], out_w[:m], out_starts


@njit(cache=True)
def diff_by_key(new_cols, new_w, new_starts, old_cols, old_w, old_starts, nkeys):
    """``new - old`` per key (both sorted by record within each key): ``(cols, diffs)`` in
    key order, records sorted within a key, zero differences dropped."""
    arity = new_cols.shape[0]
    cap = len(new_w) + len(old_w)
    out_cols = np.empty((arity, cap), dtype=np.int64)
    out_w = np.empty(cap, dtype=np.int64)
    m = 0
    for g in range(nkeys):
        i, ie = new_starts[g], new_starts[g + 1]
        j, je = old_starts[g], old_starts[g + 1]
        while i < ie or j < je:
            if j >= je:
                take_new, take_old = True, False
            elif i >= ie:
                take_new, take_old = False, True
            else:
                order = 0
                for f in range(arity):
                    x = new_cols[f, i]
                    y = old_cols[f, j]
                    if x != y:
                        order = -1 if x < y else 1
                        break
                take_new = order <= 0
                take_old = order >= 0
            w = 0
            if take_new:
                w += new_w[i]
            if take_old:
                w -= old_w[j]
            if w != 0:
                src = new_cols if take_new else old_cols
                at = i if take_new else j
                for f in range(arity):
                    out_cols[f, m] = src[f, at]
                out_w[m] = w
                m += 1
            if take_new:
                i += 1
            if take_old:
                j += 1
    return out_cols[:, :m], out_w[:m]


@njit(cache=True)
def sort_records(cols, w):
    """Rows sorted by record (for outputs whose key order is not the record order)."""
    n = len(w)
    idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        idx[i] = i
    tmp = np.empty(n, dtype=np.int64)
    lexsort_segment(cols, idx, 0, n, tmp)
    out_cols = np.empty((cols.shape[0], n), dtype=np.int64)
    out_w = np.empty(n, dtype=np.int64)
    for i in range(n):
        for f in range(cols.shape[0]):
            out_cols[f, i] = cols[f, idx[i]]
        out_w[i] = w[idx[i]]
    return out_cols, out_w


@njit(cache=True)
def _minimal(later, nl):
    """Which entries of a later buffer are *minimal* among their key's times (no other time
    of the key is ``<=`` them in the product order); repeats keep one.

    Scheduling only those suffices: when a key is evaluated at a minimal time ``u1``, every
    history row behind a later time ``u3 >= u1`` is still not ``<= u1`` and schedules
    ``lub(row, u1)``, which is ``u3`` (``u3 = lub(row, t) >= u1 >= `` the row behind
    ``u1``).  So the key meets each of its interesting times once either way, but a run no
    longer schedules every later iteration of a long history again (which made a loop's
    scheduling quadratic in its iterations)."""
    depth = later.shape[0] - 1
    idx = np.empty(nl, dtype=np.int64)
    for i in range(nl):
        idx[i] = i
    tmp = np.empty(nl, dtype=np.int64)
    lexsort_segment(later, idx, 0, nl, tmp)  # by code, then time (a linear extension)
    keep = np.zeros(nl, dtype=np.bool_)
    kept = np.empty(nl, dtype=np.int64)  # the current key's minimal times so far (antichain)
    nkept = 0
    for i in range(nl):
        a = idx[i]
        if i and later[0, a] != later[0, idx[i - 1]]:
            nkept = 0
        minimal = True
        for k in range(nkept):
            b = kept[k]
            below = True
            for j in range(1, depth + 1):
                if later[j, b] > later[j, a]:
                    below = False
                    break
            if below:  # a kept time of this key is <= this one (or equal)
                minimal = False
                break
        if minimal:
            keep[a] = True
            kept[nkept] = a
            nkept += 1
    return keep


@njit(cache=True)
def later_groups(later, nl):
    """The minimal ``(time, key code)`` pairs of a later buffer (see :func:`_minimal`),
    sorted by time then code: ``(codes, times (n, depth), starts)``, one group per distinct
    time at ``starts``."""
    depth = later.shape[0] - 1
    keep = _minimal(later, nl)
    kept = 0
    for i in range(nl):
        if keep[i]:
            kept += 1
    keys = np.empty((depth + 1, kept), dtype=np.int64)
    m = 0
    for i in range(nl):
        if keep[i]:
            for j in range(depth):
                keys[j, m] = later[1 + j, i]
            keys[depth, m] = later[0, i]
            m += 1
    idx = np.empty(kept, dtype=np.int64)
    for i in range(kept):
        idx[i] = i
    tmp = np.empty(kept, dtype=np.int64)
    lexsort_segment(keys, idx, 0, kept, tmp)
    codes = np.empty(kept, dtype=np.int64)
    times = np.empty((kept, depth), dtype=np.int64)
    starts = np.empty(kept + 1, dtype=np.int64)
    m = 0
    groups = 0
    for i in range(kept):
        a = idx[i]
        if m == 0 or not _same(keys, a, idx[i - 1], 0, depth):
            starts[groups] = m
            groups += 1
        codes[m] = keys[depth, a]
        for j in range(depth):
            times[m, j] = keys[j, a]
        m += 1
    starts[groups] = m
    return codes[:m], times[:m], starts[:groups + 1]


@njit(cache=True)
def finish(logic, kn, key_is_code, sort_out, nkeys, rows_in, n_in, arity, rows_out, n_out,
           out_arity, given_cols, given_w, given_starts, later, nl):
    """One reduce run's output changes and later times, in one call: the logic's new output
    per key (evaluated from the input rows, or ``given`` for ``GIVEN``; ``n_in < 0``: the
    input trace is empty), minus the output accumulated so far (``n_out < 0``: none), sorted
    by record when ``sort_out`` (key order is not record order), and the later interesting
    times.  Returns ``(cols, diffs, later codes, later times, later group starts)``."""
    if logic == GIVEN:
        new_cols, new_w, new_starts = given_cols, given_w, given_starts
    elif n_in >= 0:
        new_cols, new_w, new_starts = evaluate_by_key(logic, kn, key_is_code, rows_in, n_in,
                                                      nkeys, arity)
    else:
        new_cols = np.empty((out_arity, 0), dtype=np.int64)
        new_w = np.empty(0, dtype=np.int64)
        new_starts = np.zeros(nkeys + 1, dtype=np.int64)
    if n_out >= 0:
        old_cols, old_w, old_starts = consolidate_by_key(rows_out, n_out, nkeys, out_arity)
        cols, diffs = diff_by_key(new_cols, new_w, new_starts, old_cols, old_w, old_starts,
                                  nkeys)
    else:
        cols, diffs = new_cols, new_w
    if sort_out and len(diffs) > 1:
        cols, diffs = sort_records(cols, diffs)
    codes, times, starts = later_groups(later, nl)
    return cols, diffs, codes, times, starts

