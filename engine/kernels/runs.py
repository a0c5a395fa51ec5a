"""A whole reduce run in one compiled call.

A reduce run on the kernels was a dozen compiled calls with Python between them: the distinct
keys, one scan per spine batch of each trace (four or five each), then :func:`~.logics.finish`.
Each call is a microsecond of dispatch and a few of Python glue, and a loop's reduce runs a
few dozen times per window move.  :func:`reduce_run` does all of it in one call, for traces of
at most four int64 spine batches (the rest take the call-per-batch path).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .histories import scan_slots, unique_codes
from .logics import finish

#: spine batches :func:`reduce_run` takes per trace
SLOTS = 4


@njit(cache=True)
def reduce_run(logic, kn, key_is_code, sort_out, codes, t,
               has_in, in_first, arity, in_rdepth, i0, im0, i1, im1, i2, im2, i3, im3, irec,
               imr, has_out, out_first, out_arity, out_rdepth, o0, om0, o1, om1, o2, om2, o3,
               om3, orec, omr):
    """A whole reduce run in one call (every built-in logic but ``GIVEN``): the distinct key
    codes of the changed and scheduled keys (``codes``), their rows in the input and output
    traces (each as up to four spine batches and the recent rows, see
    :func:`~.histories.scan_slots`), then :func:`finish`.  Returns :func:`finish`'s five
    results and the number of history rows read."""
    keys = unique_codes(codes)
    nk = len(keys)
    later = np.empty((1 + len(t), 64), dtype=np.int64)
    nl = 0
    empty = np.empty((1, 0), dtype=np.int64)
    if has_in:
        rows_in = np.empty((2 + arity, 64), dtype=np.int64)
        rows_in, n_in, later, nl = scan_slots(keys, t, in_first, arity, in_rdepth, i0, im0, i1,
                                              im1, i2, im2, i3, im3, irec, imr, rows_in, 0,
                                              later, nl)
    else:
        rows_in = empty
        n_in = -1
    if has_out:
        rows_out = np.empty((2 + out_arity, 64), dtype=np.int64)
        rows_out, n_out, later, nl = scan_slots(keys, t, out_first, out_arity, out_rdepth, o0,
                                                om0, o1, om1, o2, om2, o3, om3, orec, omr,
                                                rows_out, 0, later, nl)
    else:
        rows_out = empty
        n_out = -1
    none = np.empty(0, dtype=np.int64)
    cols, diffs, lcodes, times, starts = finish(logic, kn, key_is_code, sort_out, nk, rows_in,
                                                n_in, arity, rows_out, n_out, out_arity,
                                                empty, none, none, later, nl)
    read = max(n_in, 0) + max(n_out, 0) + nl
    return cols, diffs, lcodes, times, starts, read


_NONE = np.empty((1, 0), dtype=np.int64)


def slots(trace):
    """A trace's packed runs as :func:`reduce_run`'s arguments ``(first, d0, m0, ..., d3, m3,
    recent, mr)``, or ``None`` when they do not fit (more than :data:`SLOTS` spine batches, or
    a narrowed int32 one)."""
    runs = trace.packed_runs()
    out = []
    first = 1
    recent, mr = _NONE, 0
    for data, m, is_sorted, f in runs:
        if data.dtype != np.int64 or not data.flags.c_contiguous:
            return None
        if is_sorted:
            if len(out) == 2 * SLOTS:
                return None
            out += [data, m]
            first = f
        else:
            recent, mr = data, m
    while len(out) < 2 * SLOTS:
        out += [_NONE, 0]
    return (first, *out, recent, mr)


def warm_up() -> None:
    """Compile (or load) :func:`reduce_run` on a tiny input."""
    data = np.array([[1, 1, 2], [1, 1, 2], [5, 3, 4], [0, 0, 0], [0, 2, 0], [1, -1, 1]],
                    dtype=np.int64)
    empty = (_NONE, 0) * (SLOTS - 1)
    t = np.array([0, 1], dtype=np.int64)
    codes = np.array([2, 1, 2], dtype=np.int64)
    reduce_run(2, 1, True, False, codes, t, True, 1, 2, 2, data, 3, *empty, _NONE, 0,
               True, 1, 2, 2, data, 3, *empty, data, 3)
