"""The join's kernel path: ``dA x B + A x dB - dA x dB`` in a few compiled calls.

:func:`process` does what ``Join.process`` does for a join whose selection is a tuple of
columns (or none) over integer-like records (ints, bools, interned objects; floats take the
numpy path): each delta is matched against the other side's trace (one
:func:`~.matching.match` per run of ``Trace.packed_runs``), the ``dA x dB`` pairs
counted twice are matched again with the opposite sign, and the pairs are grouped by time and
consolidated (:func:`~.matching.group_by_time`), one batch per time in time order, each sorted
by record, as the other paths emit them.  It returns ``False``, having changed nothing, when
the join does not qualify and the numpy path runs (which also raises the schema errors).
"""
from __future__ import annotations

import weakref

import numpy as np

from ..batch import Batch
from ..budget import check_pending
from ..columns import FLOAT
from ..columns import key_code
from ..work import KERNEL_CALLS
from . import matching as M
from .. import tuning
from .reduce import _buffers, _contiguous


class _Plan:
    """What a join's kernel runs need that depends only on its traces' kinds (fixed once
    set): computed once per operator, not per run."""

    __slots__ = ("lk", "rk", "ok", "kinds", "sources")

    def __init__(self, op, lk, rk):
        self.lk, self.rk = lk, rk
        select, nkey = op.select, op.nkey
        kinds = tuple(lk) + tuple(rk[nkey:])
        self.ok = (select is None or isinstance(select, tuple)) and FLOAT not in lk and \
            FLOAT not in rk and lk[:nkey] == rk[:nkey] and (  # else the numpy path names it
                select is None or all(0 <= j < len(kinds) for j in select))
        if not self.ok:
            return
        self.kinds = kinds if select is None else tuple(kinds[j] for j in select)
        # the output columns' sources when the left delta meets the right trace, and back
        self.sources = {True: M.column_sources(nkey, len(lk), len(rk), True, select),
                        False: M.column_sources(nkey, len(rk), len(lk), False, select)}


_plans: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def process(op, t: tuple, d_left, d_right) -> bool:
    """Run ``op`` (a Join) at ``t`` on the kernels; ``False`` (nothing done) when it does
    not qualify."""
    at = np.array(t, dtype=np.int64).reshape(-1, 1)  # (one column: every row at t)
    return process_times(op, len(t), d_left, at, d_right, at)


def process_times(op, depth: int, d_left, left_times, d_right, right_times) -> bool:
    """Run ``op`` on deltas whose rows have their own times (``left_times``: one column per
    row of ``d_left``, or one column for all), a join over a batch of times; ``False``
    (nothing done) when it does not qualify."""
    lk, rk = op.left_trace.kinds, op.right_trace.kinds
    if lk is None or rk is None:
        return False
    plan = _plans.get(op)
    if plan is None or plan.lk != lk or plan.rk != rk:  # (equal kinds, new tuples)
        plan = _plans[op] = _Plan(op, lk, rk)
    if not plan.ok:
        return False
    nkey, kinds = op.nkey, plan.kinds
    sides = []
    for d, dtimes, trace, is_left in ((d_left, left_times, op.right_trace, True),
                                      (d_right, right_times, op.left_trace, False)):
        if d is not None and len(d):
            if d.kinds != (lk if is_left else rk):
                return False
            sides.append((d, dtimes, trace, is_left))
    if not sides:
        return True
    if sum(len(d) for d, _, _, _ in sides) > tuning.KERNEL_JOIN_ROWS:
        return False
    ncols = len(kinds)
    out = _buffers.get("join", ncols + depth + 1)
    n = 0
    budget = op.flow.max_rows_per_epoch is not None
    prepared = []
    for d, dtimes, trace, is_left in sides:
        dcodes = _contiguous(key_code(d.cols, d.kinds, nkey))
        order = M.key_order(dcodes)
        dcols = np.array(d.cols, dtype=np.int64).reshape(len(d.cols), -1)
        source = plan.sources[is_left]
        diffs = _contiguous(d.diffs)
        prepared.append((dcodes, order, dcols, diffs, source, dtimes))
        rdepth = trace.row_depth
        for data, m, is_sorted, first in trace.packed_runs():
            n, out = _match(op, out, n, budget, _contiguous(data), m, is_sorted, first, rdepth,
                            dcodes, order, dcols, diffs, nkey, source, dtimes, 1)
    if len(sides) == 2:
        # dA x dB was counted in both halves: once more, negated (the right delta as an
        # unsorted matrix, each row at its time)
        dcodes, order, dcols, diffs, source, dtimes = prepared[0]
        rcodes, _, rcols, rdiffs, _, rtimes = prepared[1]
        matrix = np.empty((2 + len(rcols) + depth, len(rcodes)), dtype=np.int64)
        matrix[0] = rcodes
        matrix[1:1 + len(rcols)] = rcols
        matrix[1 + len(rcols):-1] = rtimes
        matrix[-1] = rdiffs
        n, out = _match(op, out, n, budget, matrix, matrix.shape[1], False, 1, depth, dcodes,
                        order, dcols, diffs, nkey, source, dtimes, -1)
    if not n:
        return True
    op.flow.work.matched_pairs += n
    KERNEL_CALLS[0] += 1 + len(prepared)  # key orders, grouping
    cols, times, diffs, starts = M.group_by_time(out, n, ncols, depth)
    if n > tuning.KERNEL_KEEP_ROWS:
        _buffers.trim()
    bounds = starts.tolist()
    for s, e in zip(bounds[:-1], bounds[1:]):
        u = tuple(times[s].tolist())
        op.emit(u, Batch([c[s:e] for c in cols], kinds, diffs[s:e], consolidated=True))
    return True


def _match(op, out, n, budget, data, m, is_sorted, first, rdepth, dcodes, order, dcols, diffs,
           nkey, source, dtimes, sign):
    """:func:`~.matching.match`, growing the buffer (after the budget allowed the rows)."""
    while True:
        n2 = M.match(data, m, is_sorted, first, rdepth, dcodes, order, dcols, diffs, nkey,
                     source, dtimes, sign, out, n)
        KERNEL_CALLS[0] += 1
        if n2 >= 0:
            if budget and n2 > n:   # the rows so far, as the numpy path checks each gather
                check_pending(op, n2, "join")
            return n2, out
        if budget:
            check_pending(op, -n2, "join")
        out = _buffers.get("join", out.shape[0], -n2, n)
