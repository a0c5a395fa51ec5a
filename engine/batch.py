"""Batches of updates at one time, and consolidation.

Operators exchange :class:`Batch` es: the updates of one collection at *one* time, as numpy
columns plus a diff column.  Consolidation (sum the diffs of equal records, drop zeros) is a
sort plus a segmented sum: no per-record Python.  Every operator consolidates what it emits,
because a loop whose body emits ``+x`` and ``-x`` for one record at one time would otherwise
never look quiet (trap 1 of the design note).
"""
from __future__ import annotations

import numpy as np

from . import kernels, tuning
from .errors import SchemaError
from .columns import KIND_NAMES


class Batch:
    """Updates ``(record, diff)`` at one time: ``cols`` (one array per field), ``kinds``,
    ``diffs``.  Immutable by convention: operators build new arrays instead of writing."""

    __slots__ = ("cols", "kinds", "diffs", "consolidated", "sorted_runs")

    def __init__(self, cols, kinds, diffs, consolidated=False, sorted_runs=False):
        self.cols = tuple(cols)
        self.kinds = tuple(kinds)
        self.diffs = diffs
        self.consolidated = consolidated
        # consolidated batches are sorted by record; a concatenation of them is a few runs
        self.sorted_runs = sorted_runs

    def __len__(self) -> int:
        return len(self.diffs)

    @property
    def arity(self) -> int:
        return len(self.cols)

    def take(self, idx) -> "Batch":
        return Batch([c[idx] for c in self.cols], self.kinds, self.diffs[idx], self.consolidated)

    def negate(self) -> "Batch":
        return Batch(self.cols, self.kinds, -self.diffs, self.consolidated)

    def consolidate(self) -> "Batch":
        if self.consolidated:
            return self
        cols, diffs = consolidate(self.cols, self.diffs, runs=self.sorted_runs)
        return Batch(cols, self.kinds, diffs, True)

    def __repr__(self) -> str:
        return f"Batch({len(self)} updates, kinds={''.join(self.kinds)})"


def pack_keys(keys) -> list[np.ndarray]:
    """Fewer sort keys that order rows like ``keys`` do together (first key most significant):
    runs of consecutive integer keys whose value ranges fit in 63 bits are packed into one
    int64 (shifted by their minimum).  Sorting one packed column is several times faster than
    a multi-key lexsort, and equal rows keep equal packed values."""
    if not tuning.FAST_PATHS or (len(keys) > 1 and len(keys[0]) < tuning.PACK_KEYS_ROWS):
        return list(keys)  # small batches: a lexsort costs less than finding the ranges
    chunks, current, bits_used = [], [], 0
    for k in keys:
        if k.dtype.kind not in "iu" or not len(k):
            if current:
                chunks.append(_pack(current))
                current, bits_used = [], 0
            chunks.append(k)
            continue
        lo, hi = int(k.min()), int(k.max())
        bits = (hi - lo).bit_length()
        if current and bits_used + bits > 63:
            chunks.append(_pack(current))
            current, bits_used = [], 0
        current.append((k, lo, bits))
        bits_used += bits
    if current:
        chunks.append(_pack(current))
    return chunks


def _pack(parts) -> np.ndarray:
    if len(parts) == 1:
        return parts[0][0]
    packed = np.zeros(len(parts[0][0]), dtype=np.int64)
    for values, lo, bits in parts:
        if bits:
            packed <<= bits
            packed |= (values - lo) if lo else values
    return packed


def row_boundaries(keys) -> np.ndarray:
    """For columns already sorted together: True where a row differs from the one before."""
    n = len(keys[0])
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    for k in keys:
        if n > 1:
            change[1:] |= k[1:] != k[:-1]
    return change


def sort_order(keys) -> np.ndarray:
    """Permutation sorting rows by ``keys`` (first key most significant)."""
    packed = pack_keys(keys)
    if len(packed) == 1:
        return np.argsort(packed[0], kind="stable")
    return np.lexsort(packed[::-1])


def consolidate(cols, diffs, times=None, runs: bool = False):
    """Sum diffs of equal ``(record[, time])`` rows and drop zeros.

    Returns ``(cols, diffs)`` or, with a time matrix, ``(cols, times, diffs)``; rows come out
    sorted by record (then time).  ``runs`` says the rows are a few already sorted runs
    (merging trace batches, gathered histories): a stable sort then merges them in about
    linear time.
    """
    n = len(diffs)
    if n <= 1:
        keep = diffs != 0
        if times is None:
            return tuple(c[keep] for c in cols), diffs[keep]
        return tuple(c[keep] for c in cols), times[keep], diffs[keep]
    if n < tuning.KERNEL_CONSOLIDATION and tuning.FAST_PATHS and kernels.active() and \
            diffs.dtype == np.int64 and all(c.dtype == np.int64 for c in cols):
        return kernels.consolidate(cols, diffs, times)
    if n <= tuning.SMALL_CONSOLIDATION and tuning.FAST_PATHS and \
            all(c.dtype.kind == "i" for c in cols):
        return _consolidate_small(cols, diffs, times)
    if n >= tuning.PACKED_ROWS and tuning.FAST_PATHS:
        out = _consolidate_packed(cols, diffs, times, runs)
        if out is not None:
            return out
    keys = list(cols)
    if times is not None:
        keys.extend(times.T)
    packed = pack_keys(keys)
    # (``take`` rather than fancy indexing: the same gather, about twice as fast)
    if len(packed) == 1:
        order = np.argsort(packed[0], kind="stable" if runs else None)
        sp = packed[0].take(order)
        change = np.empty(n, dtype=bool)
        change[0] = True
        np.not_equal(sp[1:], sp[:-1], out=change[1:])
    else:
        order = np.lexsort(packed[::-1])
        change = row_boundaries([k.take(order) for k in packed])
    starts = np.flatnonzero(change)
    sums = np.add.reduceat(diffs.take(order), starts)
    keep = sums != 0
    pick = order.take(starts[keep])
    out_cols = tuple(c.take(pick) for c in cols)
    if times is None:
        return out_cols, sums[keep]
    return out_cols, times.take(pick, axis=0), sums[keep]


def _consolidate_packed(cols, diffs, times, runs: bool = False):
    """:func:`consolidate` for int64 rows whose fields and diff fit together in 63 bits (the
    usual case: node ids, labels, small iteration coordinates, diffs of +-1): each row and its
    diff packed into one int64 (ranges shifted to their minimum), sorted as values (a
    vectorised sort of values is several times faster than a stable sort of indices, and no
    column is gathered through a permutation), then equal records summed and the record
    columns unpacked from the sorted values.  Same rows, same order as the general path;
    ``None`` when the rows do not fit (the caller takes the general path).  ``runs``: see
    :func:`sum_packed`."""
    keys = list(cols)
    if times is not None:
        keys.extend(times.T)
    if diffs.dtype != np.int64 or any(k.dtype != np.int64 for k in keys):
        return None
    ranges = packing_ranges([(int(k.min()), int(k.max())) for k in keys] +
                            [(int(diffs.min()), int(diffs.max()))])
    if ranges is None:
        return None
    # (passed on unnamed: sum_packed frees the packed rows as soon as it has read them)
    out_cols, out_times, sums = sum_packed(_packed_rows(keys + [diffs], ranges), ranges,
                                           len(cols), runs)
    if times is None:
        return out_cols, sums
    return out_cols, out_times, sums


def _packed_rows(fields, ranges) -> np.ndarray:
    """One int64 per row holding ``fields`` (most significant first), each shifted by its
    ``(lo, bits)`` of ``ranges``; built chunk by chunk (one chunk-sized temporary)."""
    n, chunk = len(fields[0]), tuning.CHUNK_ROWS
    packed = np.zeros(n, dtype=np.int64)
    tmp = np.empty(min(n, chunk), dtype=np.int64)
    for a in range(0, n, chunk):
        b = min(a + chunk, n)
        seg, t = packed[a:b], tmp[:b - a]
        for k, (lo, bits) in zip(fields, ranges):
            if bits:
                seg <<= bits
                np.subtract(k[a:b], lo, out=t)
                seg |= t
    return packed


def packing_ranges(bounds):
    """``(lo, bits)`` per field for fields with the given ``(min, max)`` (the last one the
    diff), or ``None`` when they do not fit in 63 bits together."""
    ranges, total = [], 0
    for lo, hi in bounds:
        bits = (hi - lo).bit_length()
        total += bits
        if total > 63:
            return None
        ranges.append((lo, bits))
    return ranges


def _group_starts(packed, shift):
    """Indices where ``packed >> shift`` (sorted) changes, the first row included; ``None``
    when every row does (all rows distinct: no row-sized index array is made)."""
    n, chunk = len(packed), tuning.CHUNK_ROWS
    parts = []
    every = True  # so far every row starts a group: the full chunks are kept as ranges
    buf = np.empty(min(n, chunk) + 1, dtype=np.int64)
    change = np.empty(min(n, chunk), dtype=bool)
    for a in range(0, n, chunk):
        b = min(a + chunk, n)
        lo = a - 1 if a else 0  # the row before the chunk decides its first row
        g = buf[:b - lo]
        np.right_shift(packed[lo:b], shift, out=g)
        c = change[:b - a]
        if a:
            np.not_equal(g[1:], g[:-1], out=c)
        else:
            c[0] = True
            np.not_equal(g[1:], g[:-1], out=c[1:])
        found = np.flatnonzero(c)
        if every and len(found) == b - a:
            parts.append((a, b))
            continue
        every = False
        if a:
            found += a
        parts.append(found)
    if every:
        return None
    parts = [np.arange(*p) if isinstance(p, tuple) else p for p in parts]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def sum_packed(packed, ranges, ncols, runs: bool = False):
    """Consolidate rows packed one per int64 with ``ranges`` (see :func:`packing_ranges`;
    fields first to last, most significant first, the diff last): ``(cols, times, diffs)``
    sorted by record then time, zero sums dropped; ``times`` is ``None`` when the fields are
    only the ``ncols`` columns.  Consumes ``packed`` (sorted in place, then reused for a
    result field: pass it unnamed, so that it is freed here once read).

    ``runs``: the rows are a few sorted runs (a concatenation of consolidated batches, a
    trace's batches): a stable sort (timsort) then merges them in about linear time, two runs
    of 3.4M rows each in 0.04 s against 0.48 s for numpy's default sort; on rows in no order
    it is a little slower (0.48 against 0.42 s for 6.8M).  Otherwise, from
    :data:`~ddlab.engine.tuning.RADIX_SORT_ROWS` rows on, the compiled kernels' radix sort."""
    n = len(packed)
    dlo, dbits = ranges[-1]
    if runs or not tuning.FAST_PATHS or n < tuning.RADIX_SORT_ROWS or not kernels.active():
        packed.sort(kind="stable" if runs and tuning.FAST_PATHS else None)
    else:  # rows in no order: the compiled radix sort (linear; several times numpy's)
        kernels.sort_values(packed, sum(bits for _, bits in ranges))
    starts = _group_starts(packed, dbits)
    if starts is None:  # no two rows alike: the diffs are the sums, the records in place
        if dbits:
            sums = np.bitwise_and(packed, (1 << dbits) - 1)
            if dlo:
                sums += dlo
            packed >>= dbits
        else:
            sums = np.full(n, dlo, dtype=np.int64)
        group = packed
        del packed
        return _unpacked_fields(group, ranges, ncols, sums)
    group = packed.take(starts)
    if dbits:
        group >>= dbits
    if dbits:  # the diffs decoded in place, then summed per record
        np.bitwise_and(packed, (1 << dbits) - 1, out=packed)
        if dlo:
            packed += dlo
        sums = np.add.reduceat(packed, starts)
    else:  # every diff is dlo: the sums are the group sizes times dlo
        sums = np.empty(len(starts), dtype=np.int64)
        np.subtract(starts[1:], starts[:-1], out=sums[:-1])
        sums[-1] = n - starts[-1]
        if dlo != 1:
            sums *= dlo
    del packed, starts
    return _unpacked_fields(group, ranges, ncols, sums)


def _unpacked_fields(group, ranges, ncols, sums):
    """:func:`sum_packed`'s result from its summed records ``group`` (one packed int64 each,
    the diff's bits shifted out; consumed: its memory becomes the first field) and
    ``sums``."""
    keep = sums != 0
    if not keep.all():
        group, sums = group[keep], sums[keep]
    del keep
    fields = []
    last = len(ranges) - 2  # the first field's: what is left of group once the rest is out
    for j, (lo, bits) in zip(range(last, -1, -1), reversed(ranges[:-1])):
        if not bits:
            field = np.zeros(len(group), dtype=np.int64)
        elif j == 0:
            field = group
        else:
            field = group & ((1 << bits) - 1)
            group >>= bits
        if lo:
            field += lo
        fields.append(field)
    del group
    fields.reverse()
    if len(fields) == ncols:
        return tuple(fields), None, sums
    out_times = np.empty((len(sums), len(fields) - ncols), dtype=np.int64)
    for j, field in enumerate(fields[ncols:]):
        out_times[:, j] = field
    return tuple(fields[:ncols]), out_times, sums


def _consolidate_small(cols, diffs, times):
    """:func:`consolidate` for a few integer rows (same result, same order)."""
    keys = [c.tolist() for c in cols]
    if times is not None:
        keys.extend(times.T.tolist())
    sums: dict = {}
    first: dict = {}
    for i, (row, d) in enumerate(zip(zip(*keys), diffs.tolist())):
        if row in sums:
            sums[row] += d
        else:
            sums[row] = d
            first[row] = i
    kept = sorted(row for row, d in sums.items() if d)
    pick = np.array([first[row] for row in kept], dtype=np.intp)
    out_diffs = np.array([sums[row] for row in kept], dtype=np.int64)
    out_cols = tuple(c[pick] for c in cols)
    if times is None:
        return out_cols, out_diffs
    return out_cols, times[pick], out_diffs


def concat_batches(batches, where: str = "") -> Batch:
    """One batch holding the updates of several (same-kind) batches."""
    batches = [b for b in batches if len(b)]
    if not batches:
        return None
    if len(batches) == 1:
        return batches[0]
    kinds = unify_kinds([b.kinds for b in batches], where)
    cols = [np.concatenate([b.cols[j] for b in batches]) for j in range(len(kinds))]
    cols = [c.astype(np.float64) if k == "f" else c for c, k in zip(cols, kinds)]
    return Batch(cols, kinds, np.concatenate([b.diffs for b in batches]),
                 sorted_runs=all(b.consolidated for b in batches))


def unify_kinds(kind_lists, where: str) -> tuple:
    """The common kinds of several batches; ints widen to floats, anything else must match."""
    first = kind_lists[0]
    if all(k == first for k in kind_lists):
        return first
    arities = {len(k) for k in kind_lists}
    if len(arities) > 1:
        raise SchemaError(f"{where}: records of different arities meet here ({sorted(arities)}); "
                          "map them to one shape first")
    out = []
    for j, column in enumerate(zip(*kind_lists)):
        kinds = set(column)
        if len(kinds) == 1:
            out.append(column[0])
        elif kinds <= {"i", "f"}:
            out.append("f")
        else:
            names = " and ".join(sorted(KIND_NAMES[k] for k in kinds))
            raise SchemaError(f"{where}: column {j} holds {names} values in different updates; "
                              "one column must keep one type")
    return tuple(out)

