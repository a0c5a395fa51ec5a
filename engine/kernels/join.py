"""The join's kernel path: ``dA x B + A x dB - dA x dB`` in a few compiled calls.

:func:`process` does what ``Join.process`` does for a join whose selection is a tuple of
columns (or none) over integer-like records (ints, bools, interned objects; floats take the
numpy path): each delta is matched against the other side's trace (one
:func:`~.matching.match` per spine batch and one for the recent rows), the ``dA x dB`` pairs
counted twice are matched again with the opposite sign, and the pairs are grouped by time and
consolidated (:func:`~.matching.group_by_time`), one batch per time in time order, each sorted
by record, as the other paths emit them.  It returns ``False``, having changed nothing, when
the join does not qualify and the numpy path runs (which also raises the schema errors).
"""
from __future__ import annotations

import numpy as np

from ..batch import Batch
from ..budget import check_pending
from ..columns import FLOAT
from ..columns import key_code
from . import matching as M
from .reduce import KEEP_ROWS, _buffers, _contiguous, _parts, _recent_matrix

#: Joins whose changes hold at most this many rows (both sides) take the kernel path; larger
#: ones (a loop's first iterations from scratch) take the numpy path, which builds only the
#: selected columns of millions of pairs instead of a row buffer of every field.
MAX_DELTA = 4096


def _source(nkey: int, delta_arity: int, other_arity: int, delta_is_left: bool, select):
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


def process(op, t: tuple, d_left, d_right) -> bool:
    """Run ``op`` (a Join) at ``t`` on the kernels; ``False`` (nothing done) when it does
    not qualify."""
    select = op.select
    if select is not None and not isinstance(select, tuple):
        return False
    lk, rk = op.left_trace.kinds, op.right_trace.kinds
    if lk is None or rk is None or FLOAT in lk or FLOAT in rk:
        return False
    nkey = op.nkey
    if lk[:nkey] != rk[:nkey]:
        return False  # the numpy path names the mismatched key column
    kinds = tuple(lk) + tuple(rk[nkey:])
    if select is not None:
        if any(not 0 <= j < len(kinds) for j in select):
            return False
        kinds = tuple(kinds[j] for j in select)
    sides = []
    for d, trace, is_left in ((d_left, op.right_trace, True), (d_right, op.left_trace, False)):
        if d is not None and len(d):
            if d.kinds != (lk if is_left else rk):
                return False
            sides.append((d, trace, is_left))
    if not sides:
        return True
    if sum(len(d) for d, _, _ in sides) > MAX_DELTA:
        return False
    ncols = len(kinds)
    depth = len(t)
    tarr = np.array(t, dtype=np.int64)
    out = _buffers.get("join", ncols + depth + 1)
    n = 0
    budget = op.flow.max_rows_per_epoch is not None
    prepared = []
    for d, trace, is_left in sides:
        dcodes = _contiguous(key_code(d.cols, d.kinds, nkey))
        order = M.key_order(dcodes)
        dcols = np.array(d.cols, dtype=np.int64).reshape(len(d.cols), -1)
        source = _source(nkey, len(d.cols), len(trace.kinds), is_left, select)
        diffs = _contiguous(d.diffs)
        prepared.append((dcodes, order, dcols, diffs, source))
        inner, first, _, rdepth = _parts(trace)
        parts = [(_contiguous(b.data), True, first) for b in inner.batches]
        extra = _recent_matrix(inner.recent, np.unique(dcodes) if len(dcodes) > 1 else dcodes)
        if extra is not None:
            parts.append((extra, False, 1))
        for data, is_sorted, f in parts:
            n, out = _match(op, out, n, budget, data, is_sorted, f, rdepth, dcodes, order,
                            dcols, diffs, nkey, source, tarr, 1)
    if len(sides) == 2:
        # dA x dB was counted in both halves: once more, negated (the right delta as an
        # unsorted matrix at time t)
        dcodes, order, dcols, diffs, source = prepared[0]
        rcodes, _, rcols, rdiffs, _ = prepared[1]
        matrix = np.empty((2 + len(rcols) + depth, len(rcodes)), dtype=np.int64)
        matrix[0] = rcodes
        matrix[1:1 + len(rcols)] = rcols
        matrix[1 + len(rcols):-1] = tarr[:, None]
        matrix[-1] = rdiffs
        n, out = _match(op, out, n, budget, matrix, False, 1, depth, dcodes, order, dcols,
                        diffs, nkey, source, tarr, -1)
    if not n:
        return True
    cols, times, diffs, starts = M.group_by_time(out, n, ncols, depth)
    if n > KEEP_ROWS:
        _buffers.trim()
    bounds = starts.tolist()
    for s, e in zip(bounds[:-1], bounds[1:]):
        u = tuple(times[s].tolist())
        op.emit(u, Batch([c[s:e] for c in cols], kinds, diffs[s:e], consolidated=True))
    return True


def _match(op, out, n, budget, data, is_sorted, first, rdepth, dcodes, order, dcols, diffs,
           nkey, source, t, sign):
    """:func:`~.matching.match`, growing the buffer (after the budget allowed the rows)."""
    while True:
        n2 = M.match(data, is_sorted, first, rdepth, dcodes, order, dcols, diffs, nkey, source,
                     t, sign, out, n)
        if n2 >= 0:
            return n2, out
        if budget:
            check_pending(op, -n2, "join")
        out = _buffers.get("join", out.shape[0], -n2, n)


def warm_up() -> None:
    """Compile (or load) the join's kernels on tiny inputs."""
    data = np.array([[1, 1, 2], [1, 1, 2], [5, 3, 4], [0, 0, 0], [0, 2, 0], [1, -1, 1]],
                    dtype=np.int64)
    dcodes = np.array([2, 1], dtype=np.int64)
    order = M.key_order(dcodes)
    dcols = np.array([[2, 1], [7, 8]], dtype=np.int64)
    diffs = np.array([1, -1], dtype=np.int64)
    source = _source(1, 2, 2, True, None)
    t = np.array([0, 1], dtype=np.int64)
    out = np.empty((6, 16), dtype=np.int64)
    n = M.match(data, True, 1, 2, dcodes, order, dcols, diffs, 1, source, t, 1, out, 0)
    n = M.match(data, False, 1, 2, dcodes, order, dcols, diffs, 1, source, t, -1, out, n)
    M.group_by_time(out, n, 3, 2)
