"""The reduce's kernel path: one operator run for the built-in logics in a few compiled calls.

:func:`process` does what ``Reduce.process`` does for count, sum, min, max, distinct and
threshold over integer-like records (int, bool, interned objects; floats take the numpy path):
the keys that changed or were scheduled; every row of those keys in the input and output
traces (one :func:`~.histories.scan` per run of ``Trace.packed_runs``: each spine batch and
the recent rows);
the new output per key (:func:`~.logics.evaluate_by_key`) minus the output accumulated so
far; the output changes inserted and emitted, sorted by record like the other paths; the later
interesting times scheduled; more keys than ``tuning.KERNEL_REDUCE_KEYS`` a chunk at a time
(the row buffers hold one chunk's histories).  It returns ``False``, having changed nothing,
when the program or the data do not qualify, and the general path runs.
"""
from __future__ import annotations

import numpy as np

from .. import tuning
from ..batch import Batch
from ..columns import FLOAT, INT, key_code
from ..trace.layout import pack
from . import histories as H
from . import logics as L
from ..work import KERNEL_CALLS
from .spec import qualifies


class _Buffers:
    """Row buffers reused across runs (one engine thread: no run overlaps another)."""

    def __init__(self):
        self.store: dict = {}

    def trim(self) -> None:
        """Release the buffers that grew beyond ``tuning.KERNEL_KEEP_ROWS`` rows."""
        for key in [k for k, b in self.store.items() if b.shape[1] > tuning.KERNEL_KEEP_ROWS]:
            del self.store[key]

    def get(self, name: str, fields: int, need: int = 64, keep: int = 0) -> np.ndarray:
        """A ``(fields, >= need)`` buffer; growing it keeps its first ``keep`` columns."""
        buf = self.store.get((name, fields))
        if buf is None or buf.shape[1] < need:
            cap = max(need, 64 if buf is None else 2 * buf.shape[1])
            grown = np.empty((fields, cap), dtype=np.int64)
            if keep:
                grown[:, :keep] = buf[:, :keep]
            buf = self.store[(name, fields)] = grown
        return buf


_buffers = _Buffers()


def _parts(trace):
    """``(trace, arity, row depth)``: what a scan of ``trace`` needs besides its runs (an
    entered view's rows have fewer time coordinates than its readers' times)."""
    return trace, len(trace.kinds), trace.row_depth


def _contiguous(data: np.ndarray) -> np.ndarray:
    """``data`` as a C-contiguous array (a kernel compiled for one memory layout would be
    compiled again, at run time, for another)."""
    return data if data.flags.c_contiguous else np.ascontiguousarray(data)


class Gathered:
    """A batch of times' input history (:meth:`Reduce.process_times`): the rows of the
    batch's keys, read from the input trace once and packed sorted by key code, standing in
    for the trace in each time's scan (:attr:`Reduce.history_source`).  Its rows are not
    counted again as history read."""

    __slots__ = ("runs", "row_depth")

    def __init__(self, rows, depth: int):
        order = np.argsort(rows.keycode, kind="stable")
        data, floats = pack(rows.keycode, rows.cols, rows.times, rows.diffs, order=order)
        # (the key code stored once when it is the first column: the columns from row 0)
        self.runs = [(data, len(order), True, 0 if floats and floats[0] is None else 1)]
        self.row_depth = depth

    def packed_runs(self) -> list:
        return self.runs


def _scan(op, part, keys, t, role, later, nl):
    """Every row of ``keys`` in a trace (its :func:`_parts`): ``(rows buffer, n, arity,
    later buffer, nl)``; the rows read counted in ``op``'s flow's work (not those of a
    :class:`Gathered` history, counted when it was read)."""
    trace, arity, rdepth = part
    rows = _buffers.get(role, 2 + arity)
    n = read = calls = 0
    for data, m, is_sorted, first in trace.packed_runs():
        data = _contiguous(data)
        while True:
            n2, nl2, seen = H.scan(data, m, is_sorted, keys, t, first, arity, rdepth, rows, n,
                                   later, nl)
            calls += 1
            if n2 >= 0:
                break
            rows = _buffers.get(role, 2 + arity, -n2, n)
            later = _buffers.get("later", later.shape[0], -nl2, nl)
        n, nl = n2, nl2
        read += seen
    KERNEL_CALLS[0] += calls
    if read and not isinstance(trace, Gathered):
        op.flow.work.history_rows += read
    return rows, n, arity, later, nl


def _unique(parts) -> np.ndarray:
    """Sorted distinct key codes of the changed and scheduled keys (one compiled call)."""
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return H.unique_codes(_contiguous(codes))


_EMPTY_ROWS = np.empty((1, 0), dtype=np.int64)
_EMPTY = np.empty(0, dtype=np.int64)


class _Plan:
    """What a reduce's kernel runs need that depends only on its traces' kinds (fixed once
    set, unless a rollback empties a trace): computed once, not per run."""

    __slots__ = ("in_kinds", "out_kinds", "ok", "kn", "kinds", "key_is_code", "sort_out",
                 "in_part", "out_part")

    def __init__(self, op, in_kinds, out_kinds):
        self.in_kinds, self.out_kinds = in_kinds, out_kinds
        code, nkey = op.logic_code, op.nkey
        self.ok = qualifies(code, nkey, in_kinds) and (
            out_kinds is None or FLOAT not in out_kinds) and (
            in_kinds is not None or out_kinds is not None)
        if not self.ok:
            return
        arity = len(in_kinds if in_kinds is not None else out_kinds)
        self.kn = nkey if nkey else arity
        if in_kinds is not None:
            self.kinds = in_kinds[:self.kn] + (INT,) if code in (L.COUNT, L.SUM) else in_kinds
        else:
            self.kinds = out_kinds
        self.key_is_code = self.kn == 1 and self.kinds[0] != FLOAT
        self.sort_out = not _key_orders_records(nkey, self.kinds)
        self.in_part = _parts(op.in_traces[0]) if in_kinds is not None else None
        self.out_part = _parts(op.out_trace) if out_kinds is not None else None


def _plan(op, in_kinds, out_kinds) -> _Plan:
    """``op``'s plan, kept on the operator: a plan holds its traces, which lead back to the
    operator, so a table keyed weakly by operator would keep every stepped flow alive."""
    plan = op.kernel_plan
    if plan is None or plan.in_kinds != in_kinds or plan.out_kinds != out_kinds:
        plan = op.kernel_plan = _Plan(op, in_kinds, out_kinds)
    return plan


def batch_ready(op) -> bool:
    """Whether a batch of ``op``'s times may be evaluated on the kernels from a
    :class:`Gathered` history: its logic and records qualify, its input trace holds rows."""
    in_kinds = op.in_traces[0].kinds
    return op.logic_code is not None and in_kinds is not None and \
        _plan(op, in_kinds, op.out_trace.kinds).ok


def process(op, t: tuple, inputs, pending) -> bool:
    """Run ``op`` (a Reduce) at ``t`` on the kernels; ``False`` (nothing done) when the
    logic, the records or the number of keys do not qualify."""
    code = op.logic_code
    if code is None or len(op.in_traces) != 1:
        return False
    in_trace, out_trace = op.in_traces[0], op.out_trace
    in_kinds, out_kinds = in_trace.kinds, out_trace.kinds
    parts = []
    for b in inputs:
        if b is not None and len(b):
            if FLOAT in b.kinds:
                return False
            parts.append(key_code(b.cols, b.kinds, op.nkey))
    if pending:
        parts.extend(p if isinstance(p, np.ndarray) else np.asarray(p, dtype=np.int64)
                     for p in pending)
    if not parts:
        return True
    if in_kinds is None and out_kinds is None:
        return True
    plan = _plan(op, in_kinds, out_kinds)
    if not plan.ok:
        return False
    keys = _unique(parts)
    step = tuning.KERNEL_REDUCE_KEYS
    if len(keys) <= step:
        return _run(op, plan, code, t, keys)
    if code == L.GIVEN:
        return False  # threshold's function could fail on a later chunk: all or nothing
    # chunk by chunk: the row buffers hold one chunk's histories, not every key's
    for lo in range(0, len(keys), step):
        _run(op, plan, code, t, keys[lo:lo + step])
    return True


def _deliver(op, plan, t, cols, diffs, codes, times, starts) -> None:
    """A run's output changes into the output trace and downstream; its later interesting
    times held."""
    if len(diffs):
        delta = Batch(list(cols), plan.kinds, diffs, consolidated=True)
        op.out_trace.insert(t, delta)
        op.emit(t, delta)
    if len(codes):
        hold = op.hold
        bounds = starts.tolist()
        for s, e in zip(bounds[:-1], bounds[1:]):
            hold(tuple(times[s].tolist()), codes[s:e])


def _run(op, plan, code, t, keys) -> bool:
    """:func:`process` for the sorted key codes ``keys``."""
    nk = len(keys)
    out_trace = op.out_trace
    out_kinds = out_trace.kinds
    tarr = np.array(t, dtype=np.int64)
    later = _buffers.get("later", 1 + len(t))
    nl = 0
    given_cols, given_w, given_starts = _EMPTY_ROWS, _EMPTY, _EMPTY
    if plan.in_part is not None:
        part = plan.in_part
        source = op.history_source
        if source is not None:
            part = (source, part[1], source.row_depth)
        rows_in, n_in, arity, later, nl = _scan(op, part, keys, tarr, "in", later, nl)
        if code == L.GIVEN:
            cols, w, starts = L.consolidate_by_key(rows_in, n_in, nk, arity)
            new_w = _given(op.logic, w)
            if new_w is None:
                return False
            given_cols, given_w, given_starts = _keep_nonzero(cols, new_w, starts)
    else:
        rows_in, n_in, arity = _EMPTY_ROWS, -1, len(out_kinds)
    if plan.out_part is not None:
        rows_out, n_out, out_arity, later, nl = _scan(op, plan.out_part, keys, tarr, "out",
                                                      later, nl)
    else:
        rows_out, n_out = _EMPTY_ROWS, -1
        out_arity = len(plan.kinds)
    KERNEL_CALLS[0] += 2  # unique codes, finish
    cols, diffs, codes, times, starts = L.finish(
        code, plan.kn, plan.key_is_code, plan.sort_out, nk, rows_in, n_in, arity, rows_out,
        n_out, out_arity, given_cols, given_w, given_starts, later, nl)
    if max(n_in, n_out, nl) > tuning.KERNEL_KEEP_ROWS:
        _buffers.trim()
    _deliver(op, plan, t, cols, diffs, codes, times, starts)
    return True


def _key_orders_records(nkey: int, kinds) -> bool:
    """Whether key-code order is record order (one non-float key column: the code is the
    column itself), so rows grouped by key and sorted within it are sorted by record."""
    kn = nkey if nkey else len(kinds)
    return kn == 1 and kinds[0] != FLOAT


def _given(logic, weights: np.ndarray):
    """``threshold``'s new multiplicities, or ``None`` when the function fails or returns
    the wrong shape (the numpy path then raises the error that names the record)."""
    try:
        w = np.asarray(logic.fn(weights))
    except Exception:
        return None
    if w.shape != weights.shape or w.dtype.kind not in "iub":
        return None
    return w.astype(np.int64, copy=False)


def _keep_nonzero(cols, w, starts):
    keep = w != 0
    if keep.all():
        return cols, w, starts
    kept = np.concatenate([[0], np.cumsum(keep)])
    return cols[:, keep], w[keep], kept[starts]
