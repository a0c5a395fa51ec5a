"""The trace: one arrangement's spine of sorted batches, its recent rows, and how it is read.

A trace holds updates ``(record, time, diff)`` for one collection, indexed by the record's key
(its first ``nkey`` columns).  Its spine of immutable batches, each sorted by key code, is
merged geometrically (LSM style) as new batches arrive, so inserting costs amortised
``O(log n)`` per update and a lookup is one ``searchsorted`` per batch.  Every merge applies
logical compaction up to the dataflow's frontier (``t -> lub(t, frontier)``) and consolidates,
so the state stays proportional to the live data rather than to the number of epochs.

Batches are never modified in place; a snapshot of a trace is a copy of its list of batches
and the length of its recent rows, which is what lets a failed epoch roll back for free.
"""
from __future__ import annotations

import numpy as np

from .. import kernels, tuning
from ..batch import Batch, consolidate
from ..columns import KIND_NAMES, key_code
from ..errors import SchemaError
from ..lattice import advance
from . import lookup
from .batches import TraceBatch
from .layout import fits_narrow, is_sorted, narrowed, pack, take_columns, trimmed, wide
from .recent import CachedHistories, RecentRows
from .rows import Rows


class Trace(CachedHistories):
    """The spine of one arrangement.  ``clock`` supplies the compaction frontier's epoch.
    Implements :class:`~.reader.TraceReader`."""

    def __init__(self, nkey: int, depth: int, clock, name: str = "trace"):
        super().__init__()
        self.nkey, self.depth, self.clock, self.name = nkey, depth, clock, name
        self.batches: list[TraceBatch] = []
        self.kinds: tuple | None = None
        self.recent = RecentRows()

    @property
    def row_depth(self) -> int:
        """Time coordinates stored per row (an :class:`~.entered.EnteredTrace` stores fewer)."""
        return self.depth

    @property
    def layout(self) -> tuple:
        """The layout tuple of this trace's packed batches (see :func:`~.layout.pack`): float
        flags per column, the first ``None`` when the key code is the first column, stored
        once."""
        kinds = self.kinds or ()
        floats = tuple(k == "f" for k in kinds)
        if floats and not floats[0] and (self.nkey == 1 or (not self.nkey and len(kinds) == 1)):
            return (None,) + floats[1:]
        return floats

    # -- size and rollback -------------------------------------------------------------
    def __len__(self) -> int:
        rows = self._spine_rows
        if rows is None:  # (counted again only after the spine changed: read every step)
            rows = self._spine_rows = sum(len(b) for b in self.batches)
        return rows + len(self.recent)

    def snapshot(self):
        return (list(self.batches), self.kinds, self.recent, len(self.recent))

    def restore(self, snap) -> None:
        self.batches, self.kinds = list(snap[0]), snap[1]
        self.recent = snap[2].truncated(snap[3])
        self.forget()

    # -- writing -----------------------------------------------------------------------
    def check_kinds(self, kinds, where: str) -> None:
        if self.kinds is None or self.kinds == kinds:
            return
        if len(kinds) != len(self.kinds):
            raise SchemaError(f"{where}: records of {len(kinds)} fields meet records of "
                              f"{len(self.kinds)} fields")
        for j, (old, new) in enumerate(zip(self.kinds, kinds)):
            if old != new:
                raise SchemaError(
                    f"{where}: column {j} held {KIND_NAMES[old]} values and now gets "
                    f"{KIND_NAMES[new]} values; one column must keep one type")

    def insert(self, t: tuple, batch: Batch) -> None:
        """Add a batch of updates at time ``t``."""
        if not len(batch):
            return
        self.check_kinds(batch.kinds, self.name)
        self.kinds = batch.kinds
        work = getattr(self.clock, "work", None)
        if work is not None:
            work.trace_inserts += 1
        code = key_code(batch.cols, batch.kinds, self.nkey)
        if len(batch) <= tuning.SMALL_INSERT and tuning.FAST_PATHS:
            self.recent.append_columns(code, batch.cols, t, batch.diffs, self.clock.epoch)
            self._spill_recent()
            return
        times = np.broadcast_to(np.asarray(t, dtype=np.int64), (len(batch), self.depth))
        order = None if is_sorted(code) else np.argsort(code, kind="stable")
        data, floats = pack(code, batch.cols, times, batch.diffs, order, narrow=True)
        self.batches.append(TraceBatch.from_packed(data, floats, self.clock.epoch))
        del data, code, order, times  # (nothing row-sized of this insert outlives its merges)
        self._maintain()

    def _spill_recent(self) -> None:
        """Once the recent rows fill up, they become one sorted batch of the spine."""
        recent = self.recent
        if len(recent) >= tuning.RECENT_CAPACITY:
            self.batches.append(recent.batch(self.layout, recent.since))
            self.recent = RecentRows()
            self._maintain()

    def _maintain(self) -> None:
        self.forget()
        b = self.batches
        while len(b) >= 2 and self._should_merge(b):
            right = b.pop()
            left = b.pop()
            merged = self._merge([left, right])
            if merged is not None:
                b.append(merged)
        self._spine_rows = None

    @staticmethod
    def _should_merge(b) -> bool:
        """Whether the two newest batches merge: when the older is at most twice the newer
        (sizes then shrink geometrically: O(log n) batches).  A merge of at least
        :data:`~ddlab.engine.tuning.LARGE_SPINE_ROWS` rows waits until the newer is twice the
        older or the spine has more than :data:`~ddlab.engine.tuning.MAX_SPINE_BATCHES`
        batches: within one epoch a loop's inputs often double from one time to the next, and
        merging each into everything before rewrites the whole trace every time (a few more
        batches cost a few more searches).  Even then the batch-count bound merges only
        what the geometric rule would: a newer batch far smaller than the older one waits
        below it.  Forcing that merge rewrote a 24M-row batch for each 129-row spill of the
        recent rows (CC random-400k-3.4m plain: updates of seconds, its p99; NOTES.md)."""
        left, right = len(b[-2]), len(b[-1])
        geometric = left <= 2 * right
        if left + right < tuning.LARGE_SPINE_ROWS or not tuning.FAST_PATHS:
            return geometric
        return 2 * left <= right or (geometric and len(b) > tuning.MAX_SPINE_BATCHES)

    def _merge(self, parts, force: bool = False) -> TraceBatch | None:
        epoch = self.clock.epoch
        if (not force and tuning.FAST_PATHS and all(p.since == epoch for p in parts)
                and all(p.floats == parts[0].floats for p in parts)):
            return _merge_by_key(parts, epoch)
        if (len(parts) == 2 and tuning.FAST_PATHS and parts[0].floats == parts[1].floats
                and True not in parts[0].floats and kernels.active()):
            first = 0 if parts[0].floats and parts[0].floats[0] is None else 1
            data, m = kernels.merge_compact(parts[0].data, parts[1].data,
                                            first + len(parts[0].floats), epoch)
            return TraceBatch.from_packed(trimmed(data, m, parts[0].floats), parts[0].floats,
                                          epoch) if m else None
        # (int64 whatever the parts' width: narrowed parts hold int32 fields)
        cols = [np.concatenate([p.cols[j] for p in parts],
                               dtype=np.float64 if parts[0].cols[j].dtype.kind == "f"
                               else np.int64) for j in range(len(parts[0].cols))]
        times = np.concatenate([p.times for p in parts], dtype=np.int64)
        diffs = np.concatenate([p.diffs for p in parts], dtype=np.int64)
        frontier = (epoch,) + (0,) * (self.depth - 1)
        cols, times, diffs = consolidate(cols, diffs, advance(times, frontier), runs=True)
        if not len(diffs):
            return None
        code = key_code(cols, self.kinds, self.nkey)
        order = None if is_sorted(code) else np.argsort(code, kind="stable")
        data, floats = pack(code, cols, times, diffs, order, narrow=True)
        return TraceBatch.from_packed(data, floats, epoch)

    def compact(self) -> None:
        """Merge every batch (and the recent rows) into one, compacted to the current
        frontier."""
        parts = self._spine()
        self.recent = RecentRows()
        self.forget()
        if parts:
            merged = self._merge(parts, force=True)
            self.batches = [merged] if merged is not None else []
            self._spine_rows = None

    # -- reading (TraceReader) ---------------------------------------------------------
    def packed_runs(self) -> list[tuple]:
        """Every row as runs of packed matrices, for the compiled kernels: ``(matrix, n,
        sorted, first)`` per spine batch (sorted by key code, in row 0; the columns from row
        ``first``) and for the recent rows (the first ``n`` columns of their buffer, in
        insertion order, the key code in row 0 and the columns from row 1).  The spine's part
        is kept until the spine changes."""
        runs = self._runs
        if runs is None:
            layout = self.layout
            first = 0 if layout and layout[0] is None else 1
            runs = self._runs = [(b.data, len(b), True, first) for b in self.batches]
        data, n = self.recent.buffer()
        return runs + [(data, n, False, 1)] if n else runs

    def gather(self, codes: np.ndarray) -> Rows:
        """All updates whose key code is in ``codes`` (sorted, unique)."""
        if len(codes) <= tuning.SMALL_QUERY and tuning.FAST_PATHS:
            return self._packed(self._small_lookup(codes, False)[0])
        parts = []
        for b in self._spine(len(codes)):
            idx = lookup.key_rows(b, codes)
            if len(idx):
                parts.append((b, idx))
        rows = lookup.collect(parts) if parts else self._no_rows()
        if self._recent_by_key(len(codes)):
            recent, _ = self.recent.part(codes, False, self.layout)
            if recent is not None:
                rows = Rows.concat([rows, Rows.from_packed(recent, self.layout)],
                                   len(self.kinds), self.depth)
        return rows

    def gather_matches(self, codes: np.ndarray, check=None):
        """For each query code (any order, repeats allowed): the matching updates.

        Returns ``(query_index, rows)`` with one entry per (query, matching update) pair.
        ``check(n)``, when given, sees the running number of pairs before they are gathered
        (the runaway-epoch budget raises there, before memory is spent).
        """
        if len(codes) <= tuning.SMALL_QUERY and tuning.FAST_PATHS:
            parts, queries = self._small_lookup(codes, True)
            return np.array([i for q in queries for i in q], dtype=np.int64), \
                self._packed(parts)
        qparts, parts = [], []
        total = 0
        for b in self._spine(len(codes)):
            lo, counts = lookup.key_ranges(b, codes)
            if check is not None:
                total += int(counts.sum())
                check(total)
            idx = lookup.expand_ranges(lo, counts)
            if len(idx):
                qparts.append(np.repeat(np.arange(len(codes)), counts))
                parts.append(b.take(idx))
        if self._recent_by_key(len(codes)):
            data, q = self.recent.part(codes, True, self.layout)
            if data is not None:
                if check is not None:
                    check(total + len(q))
                qparts.append(np.array(q, dtype=np.int64))
                parts.append(Rows.from_packed(data, self.layout))
        rows = Rows.concat(parts, len(self.kinds or ()), self.depth)
        q = np.concatenate(qparts) if qparts else np.zeros(0, dtype=np.int64)
        return q, rows

    def accumulate_until(self, codes: np.ndarray, t: tuple):
        """For a reduce over many keys: ``(cols, weights, later_codes, later_times)``, the
        updates whose key code is in ``codes`` (sorted, unique) and whose time is ``<= t``,
        consolidated (columns sorted by record), and the key codes and times of the others
        (lists of arrays).

        When the columns are integers whose ranges (cached per batch) fit in 63 bits with the
        diffs, every picked row is packed straight from the batches into one int64 and the
        packed values are consolidated: no gathered column is ever materialised."""
        if self.kinds is None:  # nothing ever inserted (or every batch cancelled to nothing)
            return [], np.zeros(0, dtype=np.int64), [], []
        picks, later_codes, later_times = lookup.picks_until(self._spine(), codes, t)
        ranges = lookup.picked_ranges(picks)
        if ranges is None:
            cols, diffs = lookup.gather_fields(picks, self.kinds)
            cols, weights = consolidate(cols, diffs, runs=True)
            return cols, weights, later_codes, later_times
        cols, weights = lookup.accumulate(picks, ranges, len(self.kinds))
        return cols, weights, later_codes, later_times

    def all_rows(self) -> Rows:
        return Rows.concat([b.take(slice(None)) for b in self._spine()], len(self.kinds or ()),
                           self.depth)

    def rows_where(self, column: int, codes) -> Rows:
        """The updates whose field ``column`` holds one of ``codes`` (engine codes: ints,
        floats as floats, interned objects as their codes), found by scanning that column
        batch by batch: a lookup by a non-key field (who points at node 7?) without copying
        the trace.  Used by explanations (``engine.why``)."""
        arity = len(self.kinds or ())
        if not arity or not len(self):
            return Rows.concat([], arity, self.depth)
        codes = np.asarray(list(codes), dtype=np.float64 if self.kinds[column] == "f"
                           else np.int64)
        parts = []
        for b in self._spine():
            col = b.cols[column]
            hit = (col == codes[0]) if len(codes) == 1 else np.isin(col, codes)
            idx = np.flatnonzero(hit)
            if len(idx):
                parts.append(b.take(idx))
        return Rows.concat(parts, arity, self.depth)

    def compacted_rows(self) -> Rows:
        """Every update as logical compaction leaves it once the last completed epoch is the
        frontier (times before it read as it), sorted by record and time: what users read,
        whichever batches happen to be merged yet."""
        rows = self.all_rows()
        frontier = (max(self.clock.epoch - 1, 0),) + (0,) * (self.depth - 1)
        cols, times, diffs = consolidate(rows.cols, rows.diffs, advance(rows.times, frontier))
        return Rows(key_code(cols, self.kinds, self.nkey) if len(diffs) else diffs, cols,
                    times, diffs)

    # -- how the readers search ----------------------------------------------------------
    def _spine(self, queries: int | None = None) -> list:
        """The batches a lookup of ``queries`` keys searches: the spine, plus the recent rows
        as one sorted batch unless they are looked up one key at a time."""
        if not len(self.recent) or self._recent_by_key(queries):
            return self.batches
        return self.batches + [self.recent.batch(self.layout, self.recent.since)]

    def _recent_by_key(self, queries: int | None) -> bool:
        """Whether a lookup of ``queries`` keys reads the recent rows through their index
        (:meth:`RecentRows.part`) rather than as one sorted batch."""
        return (queries is not None and queries <= tuning.RECENT_QUERY and tuning.FAST_PATHS
                and len(self.recent) > 0)

    def _small_lookup(self, codes: np.ndarray, want_query: bool):
        """For a few query codes: ``(packed matrices, query indices)``, one matrix per spine
        batch with matches and one for the recent rows; the ranges found by
        :func:`~.lookup.run_bounds` are expanded in Python."""
        n = len(codes)
        bounds = lookup.run_bounds(self.batches, codes, int(codes.max()) if n else None)
        parts, queries = [], []
        for b, ends in zip(self.batches, bounds):
            idx, q = [], []
            for i in range(n):
                lo, hi = ends[i], ends[n + i]
                if hi > lo:
                    idx.extend(range(lo, hi))
                    if want_query:
                        q.extend([i] * (hi - lo))
            if idx:
                parts.append(np.take(b.data, idx, axis=1))
                queries.append(q)
        if len(self.recent):
            data, q = self.recent.part(codes, want_query, self.layout)
            if data is not None:
                parts.append(data)
                queries.append(q)
        return parts, queries

    def _packed(self, parts) -> Rows:
        """Rows from packed matrices of this trace's layout."""
        if not parts:
            return self._no_rows()
        data = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        return Rows.from_packed(data, self.layout)

    def _no_rows(self) -> Rows:
        return Rows.concat([], len(self.kinds or ()), self.depth)


def _merge_by_key(parts, epoch: int) -> TraceBatch:
    """Batches of the current epoch merged by key alone: nothing to compact and nothing that
    can cancel (a trace receives one batch per time)."""
    total = sum(len(p) for p in parts)
    if total < tuning.LARGE_MERGE_ROWS:
        if len(parts) == 2 and kernels.active():
            data = kernels.merge_by_key(wide(parts[0].data), wide(parts[1].data))
            return TraceBatch.from_packed(narrowed(data, parts[0].floats), parts[0].floats,
                                          epoch)
        data = np.concatenate([wide(p.data) for p in parts], axis=1)
        order = np.argsort(data[0], kind="stable")
        return TraceBatch.from_packed(narrowed(take_columns(data, order), parts[0].floats),
                                      parts[0].floats, epoch)
    # large: written straight in int32 when the result will be narrowed (no int64 copy)
    narrow = (total >= max(tuning.NARROW_ROWS, 1) and tuning.FAST_PATHS
              and True not in parts[0].floats and fits_narrow([p.data for p in parts]))
    data = np.empty((len(parts[0].data), total), dtype=np.int32 if narrow else np.int64)
    if len(parts) == 2 and kernels.active() and \
            parts[0].data.dtype == parts[1].data.dtype == data.dtype:
        # two sorted runs merged in one sequential pass (CC 3.4M from scratch: the scatter
        # below took 1.0 s of its merges)
        kernels.merge_by_key_into(parts[0].data, parts[1].data, data)
    else:
        # every part's rows go straight to their merged positions, field by field (the
        # inverse of the stable order; no concatenated copy of any field)
        order = np.argsort(np.concatenate([p.keycode for p in parts]), kind="stable")
        position = np.empty(total, dtype=np.intp)
        position[order] = np.arange(total)
        del order
        start = 0
        for p in parts:
            where = position[start:start + len(p)]
            for j in range(len(data)):
                data[j][where] = p.data[j]
            start += len(p)
    merged = TraceBatch.from_packed(data, parts[0].floats, epoch)
    # what large lookups cached on the parts holds for their union
    if all(p.upper is not None for p in parts):
        merged.upper = tuple(map(max, *(p.upper for p in parts)))
    if all(p.bounds is not None for p in parts):
        merged.bounds = tuple((min(b[0] for b in f), max(b[1] for b in f))
                              for f in zip(*(p.bounds for p in parts)))
    return merged
