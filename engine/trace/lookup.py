"""Finding keys' rows in a spine: searches of the sorted key codes, and gathering what they find.

Two regimes.  A few query keys (a one-edge update): one ``searchsorted`` per batch finds both
ends of every key's run (the run of ``c`` ends where ``c + 1`` would start, :func:`run_bounds`)
and the ranges are expanded in Python, which for a handful of keys costs less than numpy
calls.  Many keys (a from-scratch load): :func:`key_rows` per batch, through an index of the
batch's distinct keys where keys repeat (:func:`key_ranges`), then the picked rows are copied
once, field by field (:func:`collect`, :func:`gather_fields`), or packed straight into one
int64 per row and consolidated (:func:`accumulate`).
"""
from __future__ import annotations

import numpy as np

from .. import tuning
from ..batch import packing_ranges, sum_packed
from ..lattice import leq, leq_rows
from .batches import TraceBatch
from .layout import narrow_query, take_columns
from .rows import Rows

INT64_MAX = np.iinfo(np.int64).max


def run_bounds(batches, query: np.ndarray, largest: int | None) -> list[list]:
    """Per batch, the start of every query code's run followed by its end (two lists of
    ``len(query)`` joined): one search per batch; two where ``c + 1`` would wrap (``largest``,
    the largest query code, is the int64 maximum)."""
    if largest == INT64_MAX:
        out = []
        for b in batches:
            q = narrow_query(b.keycode, query)
            out.append(np.concatenate([b.keycode.searchsorted(q, "left"),
                                       b.keycode.searchsorted(q, "right")]).tolist())
        return out
    probe = np.concatenate([query, query + 1])
    return [b.keycode.searchsorted(narrow_query(b.keycode, probe)).tolist() for b in batches]


def key_ranges(b: TraceBatch, codes: np.ndarray):
    """``(lo, counts)``: where each query code's rows start in batch ``b`` and how many.

    Large batches whose keys repeat (a loop's history: a node's label at many times) are
    searched through an index of their distinct keys and where each key's run starts, built
    once per batch: one search of a small, cache-resident array instead of two searches of
    the whole key column."""
    index = b.key_index
    if index is None:
        index = False
        n = len(b)
        if n >= tuning.KEY_INDEX_ROWS and tuning.FAST_PATHS:
            kc = b.keycode
            change = np.empty(n, dtype=bool)
            change[0] = True
            np.not_equal(kc[1:], kc[:-1], out=change[1:])
            starts = np.flatnonzero(change)
            if 4 * len(starts) <= n:
                index = (kc.take(starts), np.append(starts, n))
        b.key_index = index
    if index is False:
        query = narrow_query(b.keycode, codes)
        lo = b.keycode.searchsorted(query, "left")
        return lo, b.keycode.searchsorted(query, "right") - lo
    keys, bounds = index
    j = keys.searchsorted(narrow_query(keys, codes))
    found = np.take(keys, j, mode="clip") == codes
    lo = bounds.take(j)
    counts = np.take(bounds, j + 1, mode="clip") - lo
    counts *= found
    return lo, counts


def key_rows(b: TraceBatch, codes: np.ndarray) -> np.ndarray:
    """Indices of the rows of batch ``b`` whose key is in ``codes`` (sorted, unique), in row
    order.  A batch with fewer rows than there are codes is scanned instead (each row's key
    looked up among the codes): fewer searches."""
    if len(b) < len(codes) and tuning.FAST_PATHS:
        kc = b.keycode
        at = codes.searchsorted(kc)
        np.minimum(at, len(codes) - 1, out=at)
        return np.flatnonzero(codes.take(at) == kc)
    return expand_ranges(*key_ranges(b, codes))


def expand_ranges(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices ``lo[i], ..., lo[i] + counts[i] - 1`` for every ``i``, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    if counts.max() == 1:  # at most one row per key: no ranges to expand
        return lo if total == len(counts) else lo[counts > 0]
    ends = np.cumsum(counts)
    return np.repeat(lo - (ends - counts), counts) + np.arange(total)


def collect(picks) -> Rows:
    """Rows at the given indices of the given batches (``(batch, indices)`` pairs, at least
    one; the batches of one trace share their layout), copied once into one packed matrix."""
    if len(picks) == 1:
        b, idx = picks[0]
        return b.take(idx)
    first = picks[0][0]
    total = sum(len(idx) for _, idx in picks)
    if total < tuning.LARGE_GATHER_ROWS:  # small: one concatenate of the picked columns
        data = np.concatenate([take_columns(b.data, idx) for b, idx in picks], axis=1,
                              dtype=np.int64)
        return Rows.from_packed(data, first.floats)
    # large: gather straight into the result, field by field (no temporary copies; the
    # indices come from searchsorted over the batch, so 'clip' never clips)
    data = np.empty((len(first.data), total), dtype=np.int64)
    pos = 0
    for b, idx in picks:
        end = pos + len(idx)
        for j in range(len(data)):
            _take_into(b.data[j], idx, data[j, pos:end])
        pos = end
    return Rows.from_packed(data, first.floats)


def picks_until(batches, codes, t):
    """``(picks, later_codes, later_times)``: ``(batch, row indices)`` of the rows with a key
    in ``codes`` and a time ``<= t``; key codes and times of the rows not ``<= t``.  A batch
    whose times' lub is ``<= t`` (the usual case: a trace holds no time beyond the one being
    processed) is not filtered."""
    picks, later_codes, later_times = [], [], []
    for b in batches:
        idx = key_rows(b, codes)
        if not len(idx):
            continue
        if b.upper is None:
            b.upper = tuple(int(c.max()) for c in b.times.T)
        if not leq(b.upper, t):
            times = np.take(b.times, idx, axis=0).astype(np.int64, copy=False)
            now = leq_rows(times, t)
            if not now.all():
                later_codes.append(b.keycode.take(idx[~now]).astype(np.int64, copy=False))
                later_times.append(times[~now])
                idx = idx[now]
        if len(idx):
            picks.append((b, idx))
    return picks, later_codes, later_times


def gather_fields(picks, kinds):
    """``(cols, diffs)`` of the picked rows, one array per field (only the fields a reduce
    reads: not the times, not a separate key code)."""
    arity = len(kinds)
    total = sum(len(idx) for _, idx in picks)
    if picks:   # (int64 for narrowed batches' int32 fields)
        dtypes = [np.float64 if c.dtype.kind == "f" else np.int64 for c in picks[0][0].cols]
    else:
        dtypes = [np.float64 if k == "f" else np.int64 for k in kinds]
    cols = [np.empty(total, dtype=d) for d in dtypes]
    diffs = np.empty(total, dtype=np.int64)
    pos = 0
    for b, idx in picks:
        end = pos + len(idx)
        for j in range(arity):
            _take_into(b.cols[j], idx, cols[j][pos:end])
        _take_into(b.diffs, idx, diffs[pos:end])
        pos = end
    return cols, diffs


def picked_ranges(picks):
    """Packing ranges (:func:`~ddlab.engine.batch.packing_ranges`) covering the columns
    and diffs of the picked batches (each batch's minima and maxima computed once), or
    ``None``: a float column, too wide, or fewer rows than a packed consolidation pays."""
    if sum(len(idx) for _, idx in picks) < max(1, tuning.PACKED_ROWS):
        return None
    bounds = None
    for b, _ in picks:
        if b.bounds is None:
            fields = b.cols + (b.diffs,)
            if any(f.dtype.kind != "i" for f in fields):   # a float column
                return None
            b.bounds = tuple((int(f.min()), int(f.max())) for f in fields)
        bounds = b.bounds if bounds is None else tuple(
            (min(lo, lo2), max(hi, hi2)) for (lo, hi), (lo2, hi2) in zip(bounds, b.bounds))
    return packing_ranges(bounds)


def accumulate(picks, ranges, arity: int):
    """``(cols, weights)``: the picked rows consolidated, every row packed straight from the
    batches into one int64 with ``ranges`` (:func:`picked_ranges`) and the packed values
    summed (:func:`~ddlab.engine.batch.sum_packed`): no gathered column is materialised."""
    total = sum(len(idx) for _, idx in picks)
    chunk = tuning.CHUNK_ROWS
    packed = np.zeros(total, dtype=np.int64)
    scratch = np.empty(min(total, chunk), dtype=np.int64)
    pos = 0
    for b, idx in picks:
        fields = [(f, lo, bits) for f, (lo, bits) in zip(b.cols + (b.diffs,), ranges)]
        for a in range(0, len(idx), chunk):  # chunks stay in cache
            part = idx[a:a + chunk]
            seg, tmp = packed[pos:pos + len(part)], scratch[:len(part)]
            for field, lo, bits in fields:
                if bits:
                    _take_into(field, part, tmp)
                    if lo:
                        tmp -= lo
                    seg <<= bits
                    seg |= tmp
            pos += len(part)
    cols, _, weights = sum_packed(packed, ranges, arity, runs=True)   # a run per batch
    return list(cols), weights


def _take_into(field: np.ndarray, idx: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = field[idx]``; ``np.take(..., out=)`` when the dtypes agree (no temporary),
    an assignment when ``field`` is a narrowed batch's int32 row."""
    if field.dtype == out.dtype:
        np.take(field, idx, out=out, mode="clip")
    else:
        out[:] = field.take(idx, mode="clip")
