"""Traces: the indexed, multi-versioned state behind arrangements.

A trace holds updates ``(record, time, diff)`` for one collection, indexed by the record's key
(its first ``nkey`` columns).  It is a *spine* of immutable batches, each sorted by key code,
merged geometrically (LSM style) as new batches arrive, so inserting costs amortised
``O(log n)`` per update and a lookup is one ``searchsorted`` per batch.  Every merge applies
logical compaction up to the dataflow's frontier (``t -> lub(t, frontier)``) and consolidates,
so the state stays proportional to the live data rather than to the number of epochs.

Small inserts (a few rows, the common case once a program runs on single changes) do not
touch numpy at all: they go to :class:`RecentRows`, a Python list with a per-key index, which
becomes one sorted batch of the spine when it fills up.  Reading a few keys' histories in Python
(:meth:`Trace.histories`, the reduce's and join's small paths) caches what it read from the
spine until the spine changes, so re-reading a key at the next interesting time of the same
update is a dictionary lookup.

Batches are never modified in place; a snapshot of a trace is a copy of its list of batches
and the length of its recent rows, which is what lets a failed epoch roll back for free.
"""
from __future__ import annotations

import numpy as np

from . import config, kernels
from . import batch as batch_mod
from .batch import Batch, consolidate, sum_packed
from .columns import key_code, KIND_NAMES
from .errors import SchemaError
from .lattice import advance, leq, leq_rows


def _pack(keycode, cols, times, diffs, order=None) -> tuple[np.ndarray, tuple]:
    """One ``(fields, n)`` int64 matrix: key code, columns (float bits for floats), time
    coordinates, diff; each field a contiguous row.  Gathering rows is then one ``take`` and
    concatenating one call, whatever the record's arity (small lookups are dominated by the
    number of numpy calls, not by the bytes moved).  ``order`` permutes the rows on the way
    in (one copy, field by field, instead of a copy and then a permuted copy).

    When the key code *is* the first column (one non-float key column: :func:`key_code`
    returns the column itself) it is stored once: the layout's first flag is then ``None``
    instead of ``False`` (a sixth less state, merging and gathering for a two-field record
    in a loop).  The returned layout tuple says which; :func:`_unpack` reads it."""
    floats = tuple(c.dtype.kind == "f" for c in cols)
    if len(cols) and keycode is cols[0] and not floats[0]:
        floats = (None,) + floats[1:]
        keycode = None
    n, depth = len(diffs), times.shape[1]
    data = np.empty((len(cols) + depth + (1 if keycode is None else 2), n), dtype=np.int64)
    fields = ([] if keycode is None else [keycode]) + \
        [c.view(np.int64) if f else c for c, f in zip(cols, floats)] + list(times.T) + [diffs]
    for j, field in enumerate(fields):
        if order is None:
            data[j] = field
        else:
            np.take(field, order, out=data[j], mode="clip")
    return data, floats


def _unpack(data: np.ndarray, floats: tuple):
    """Views ``(keycode, cols, times, diffs)`` of a packed matrix (no copies)."""
    arity = len(floats)
    first = 0 if arity and floats[0] is None else 1  # key code stored as the first column
    cols = [data[first + j].view(np.float64) if floats[j] else data[first + j]
            for j in range(arity)]
    return data[0], cols, data[first + arity:-1].T, data[-1]


class TraceBatch:
    """Immutable run of updates sorted by ``keycode``: columns, an ``(n, d)`` time matrix, diffs
    (views of one packed matrix ``data``, see :func:`_pack`).

    ``since`` is the epoch whose frontier its times are compacted to: a batch with
    ``since`` equal to the current epoch needs no compaction, and two such batches cannot hold
    cancelling updates (a trace receives one batch per time), so they merge by key alone."""

    __slots__ = ("keycode", "cols", "times", "diffs", "since", "data", "floats", "upper",
                 "bounds", "key_index")

    def __init__(self, keycode, cols, times, diffs, since, packed=None):
        self.data, self.floats = packed if packed is not None else _pack(keycode, cols, times,
                                                                          diffs)
        self.keycode, cols, self.times, self.diffs = _unpack(self.data, self.floats)
        self.cols = tuple(cols)
        self.since = since
        self.upper = None  # the lub of its times, computed when a large lookup first asks
        self.bounds = None  # (min, max) of its columns and diffs, likewise
        self.key_index = None  # see key_ranges

    @classmethod
    def from_packed(cls, data, floats, since) -> "TraceBatch":
        return cls(None, None, None, None, since, packed=(data, floats))

    def __len__(self) -> int:
        return len(self.diffs)

    def take(self, idx) -> "Rows":
        return Rows.from_packed(take_columns(self.data, idx), self.floats)


def take_columns(data: np.ndarray, idx) -> np.ndarray:
    """``data[:, idx]`` for a packed matrix; ``np.take`` along the rows' axis is several
    times faster than 2-d fancy indexing for integer indices."""
    if isinstance(idx, slice):
        return data[:, idx]
    idx = np.asarray(idx)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    return np.take(data, idx, axis=1)


class Rows:
    """Updates gathered from a trace (not necessarily sorted): same fields as a TraceBatch,
    packed (``data``) when they come straight from trace batches."""

    __slots__ = ("keycode", "cols", "times", "diffs", "data", "floats")

    def __init__(self, keycode, cols, times, diffs):
        self.keycode, self.cols, self.times, self.diffs = keycode, list(cols), times, diffs
        self.data = self.floats = None

    @classmethod
    def from_packed(cls, data, floats) -> "Rows":
        keycode, cols, times, diffs = _unpack(data, floats)
        rows = cls(keycode, cols, times, diffs)
        rows.data, rows.floats = data, floats
        return rows

    def __len__(self) -> int:
        return len(self.diffs)

    def take(self, idx) -> "Rows":
        if self.data is not None:
            return Rows.from_packed(take_columns(self.data, idx), self.floats)
        return Rows(self.keycode[idx], [c[idx] for c in self.cols], self.times[idx], self.diffs[idx])

    @staticmethod
    def concat(parts, arity, depth) -> "Rows":
        if not parts:
            z = np.zeros(0, dtype=np.int64)
            return Rows(z, [z] * arity, np.zeros((0, depth), dtype=np.int64), z)
        if len(parts) == 1:
            return parts[0]
        first = parts[0]
        if first.data is not None and all(p.data is not None and p.floats == first.floats
                                          and len(p.data) == len(first.data) for p in parts):
            return Rows.from_packed(np.concatenate([p.data for p in parts], axis=1),
                                    first.floats)
        return Rows(np.concatenate([p.keycode for p in parts]),
                    [np.concatenate([p.cols[j] for p in parts]) for j in range(arity)],
                    np.concatenate([p.times for p in parts]),
                    np.concatenate([p.diffs for p in parts]))


#: Merges of at least this many rows wait for larger inputs (:meth:`Trace._should_merge`)
LARGE_SPINE_ROWS = 8_000_000
MAX_SPINE_BATCHES = 4
#: Merges of at least this many rows take the large path (:meth:`Trace._merge`).
LARGE_MERGE_ROWS = 4096
#: Lookups of at most this many keys take the small path (:meth:`Trace._small_lookup`).
SMALL_QUERY = 16
#: Inserts of at most this many rows go to the trace's :class:`RecentRows` (no numpy) ...
SMALL_INSERT = 64
#: ... which become one batch of the spine once they hold this many rows.
RECENT_CAPACITY = 128
#: Lookups of at most this many keys read the recent rows key by key; larger ones sort them
#: into one batch (cached until the next insert).
RECENT_QUERY = 128
#: :meth:`Trace.histories` keeps at most this many spine rows cached in Python.
CACHE_ROWS = 65536
_INT64_MAX = np.iinfo(np.int64).max


def is_sorted(a: np.ndarray) -> bool:
    """Whether ``a`` is ascending (the general path always answers no and sorts)."""
    return config.fast_paths and (len(a) < 2 or bool((a[1:] >= a[:-1]).all()))


#: A batch of at least this many rows with at most a quarter as many distinct keys gets a
#: key index for large lookups (:func:`key_ranges`).
KEY_INDEX_ROWS = 65536


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
        if n >= KEY_INDEX_ROWS and config.fast_paths:
            kc = b.keycode
            change = np.empty(n, dtype=bool)
            change[0] = True
            np.not_equal(kc[1:], kc[:-1], out=change[1:])
            starts = np.flatnonzero(change)
            if 4 * len(starts) <= n:
                index = (kc.take(starts), np.append(starts, n))
        b.key_index = index
    if index is False:
        lo = b.keycode.searchsorted(codes, "left")
        return lo, b.keycode.searchsorted(codes, "right") - lo
    keys, bounds = index
    j = keys.searchsorted(codes)
    found = np.take(keys, j, mode="clip") == codes
    lo = bounds.take(j)
    counts = np.take(bounds, j + 1, mode="clip") - lo
    counts *= found
    return lo, counts


def key_rows(b: TraceBatch, codes: np.ndarray) -> np.ndarray:
    """Indices of the rows of batch ``b`` whose key is in ``codes`` (sorted, unique), in row
    order.  A batch with fewer rows than there are codes is scanned instead (each row's key
    looked up among the codes): fewer searches."""
    if len(b) < len(codes) and config.fast_paths:
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


def packed_rows(code, cols, times, diffs) -> list[tuple]:
    """Rows in the packed layout as Python tuples ``(code, fields..., time..., diff)``
    (float fields as their int64 bits, like :func:`_pack`)."""
    fields = [code.tolist()]
    fields += [(c.view(np.int64) if c.dtype.kind == "f" else c).tolist() for c in cols]
    fields += times.T.tolist()
    fields.append(diffs.tolist())
    return list(zip(*fields))


def packed_matrix(rows: list, layout: tuple) -> np.ndarray:
    """The packed matrix of ``layout`` holding rows of :func:`packed_rows` (which always
    start with the key code: dropped where the layout stores it as the first column)."""
    data = np.array(rows, dtype=np.int64).T
    return data[1:] if layout and layout[0] is None else data


class RecentRows:
    """The rows of a trace's latest small inserts, in Python: ``rows`` in insertion order
    and ``by_key`` (key code -> its rows).  Appending never copies, so a snapshot is the
    object and its length; a rollback truncates (:meth:`truncated`).  ``since`` is the epoch
    of the oldest row (the batch they become is compacted from there)."""

    __slots__ = ("rows", "by_key", "since", "_batch")

    def __init__(self):
        self.rows: list[tuple] = []
        self.by_key: dict = {}
        self.since = None
        self._batch = None

    def __len__(self) -> int:
        return len(self.rows)

    def append(self, rows: list[tuple], epoch: int) -> None:
        if self.since is None:
            self.since = epoch
        self.rows.extend(rows)
        index = self.by_key
        for row in rows:
            found = index.get(row[0])
            if found is None:
                index[row[0]] = [row]
            else:
                found.append(row)
        self._batch = None

    def truncated(self, n: int) -> "RecentRows":
        """This buffer as it was when it held ``n`` rows (after a rollback)."""
        if n == len(self.rows):
            return self
        fresh = RecentRows()
        if n:
            fresh.append(self.rows[:n], self.since)
        return fresh

    def batch(self, layout: tuple, since: int) -> "TraceBatch":
        """The rows as one sorted spine batch of the trace's ``layout`` (cached until the
        next append)."""
        if self._batch is None:
            data = packed_matrix(self.rows, layout)
            if len(self.rows) > 1:
                data = kernels.sort_by_key(data) if kernels.active() else \
                    take_columns(data, np.argsort(data[0], kind="stable"))
            self._batch = TraceBatch.from_packed(np.ascontiguousarray(data), layout, since)
        return self._batch


class Trace:
    """The spine of one arrangement.  ``clock`` supplies the compaction frontier's epoch."""

    def __init__(self, nkey: int, depth: int, clock, name: str = "trace"):
        self.nkey, self.depth, self.clock, self.name = nkey, depth, clock, name
        self.batches: list[TraceBatch] = []
        self.kinds: tuple | None = None
        self.recent = RecentRows()
        self._cache: dict = {}  # key code -> its rows in self.batches (see histories)
        self._cached_rows = 0

    @property
    def row_depth(self) -> int:
        """Time coordinates stored per row (an :class:`EnteredTrace` stores fewer)."""
        return self.depth

    @property
    def layout(self) -> tuple:
        """The layout tuple of this trace's packed batches (see :func:`_pack`): float flags
        per column, the first ``None`` when the key code is the first column, stored once."""
        kinds = self.kinds or ()
        floats = tuple(k == "f" for k in kinds)
        if floats and not floats[0] and (self.nkey == 1 or (not self.nkey and len(kinds) == 1)):
            return (None,) + floats[1:]
        return floats

    # -- size and rollback -------------------------------------------------------------
    def __len__(self) -> int:
        return sum(len(b) for b in self.batches) + len(self.recent)

    def snapshot(self):
        return (list(self.batches), self.kinds, self.recent, len(self.recent))

    def restore(self, snap) -> None:
        self.batches, self.kinds = list(snap[0]), snap[1]
        self.recent = snap[2].truncated(snap[3])
        self._forget()

    def _forget(self) -> None:
        """The spine changed: drop the cached histories."""
        if self._cache:
            self._cache = {}
            self._cached_rows = 0

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
        code = key_code(batch.cols, batch.kinds, self.nkey)
        times = np.broadcast_to(np.asarray(t, dtype=np.int64), (len(batch), self.depth))
        if len(batch) <= SMALL_INSERT and config.fast_paths:
            self.insert_rows(packed_rows(code, batch.cols, times, batch.diffs))
            return
        order = None if is_sorted(code) else np.argsort(code, kind="stable")
        data, floats = _pack(code, batch.cols, times, batch.diffs, order)
        self.batches.append(TraceBatch.from_packed(data, floats, self.clock.epoch))
        self._maintain()

    def insert_rows(self, rows: list[tuple]) -> None:
        """Add a few updates already in the packed layout (:func:`packed_rows`); the trace's
        kinds must be set.  They wait in :attr:`recent` until it fills up."""
        recent = self.recent
        recent.append(rows, self.clock.epoch)
        if len(recent) >= RECENT_CAPACITY:
            self.batches.append(recent.batch(self.layout, recent.since))
            self.recent = RecentRows()
            self._maintain()

    def _maintain(self) -> None:
        self._forget()
        b = self.batches
        while len(b) >= 2 and self._should_merge(b):
            right = b.pop()
            left = b.pop()
            merged = self._merge([left, right])
            if merged is not None:
                b.append(merged)

    @staticmethod
    def _should_merge(b) -> bool:
        """Whether the two newest batches merge: when the older is at most twice the newer
        (sizes then shrink geometrically: O(log n) batches).  A merge of at least
        :data:`LARGE_SPINE_ROWS` rows waits until the newer is twice the older or the spine
        has more than :data:`MAX_SPINE_BATCHES` batches: within one epoch a loop's inputs
        often double from one time to the next, and merging each into everything before
        rewrites the whole trace every time (a few more batches cost a few more searches)."""
        left, right = len(b[-2]), len(b[-1])
        if left + right < LARGE_SPINE_ROWS or not config.fast_paths:
            return left <= 2 * right
        return 2 * left <= right or len(b) > MAX_SPINE_BATCHES

    def _merge(self, parts, force: bool = False) -> TraceBatch | None:
        epoch = self.clock.epoch
        if (not force and config.fast_paths and all(p.since == epoch for p in parts)
                and all(p.floats == parts[0].floats for p in parts)):
            # nothing to compact and nothing that can cancel: merge the sorted runs by key
            total = sum(len(p) for p in parts)
            if total < LARGE_MERGE_ROWS:
                if len(parts) == 2 and kernels.active():
                    return TraceBatch.from_packed(kernels.merge_by_key(parts[0].data,
                                                                       parts[1].data),
                                                  parts[0].floats, epoch)
                data = np.concatenate([p.data for p in parts], axis=1)
                order = np.argsort(data[0], kind="stable")
                return TraceBatch.from_packed(take_columns(data, order), parts[0].floats, epoch)
            # large: every part's rows go straight to their merged positions, field by field
            # (the inverse of the stable order; no concatenated copy of any field)
            order = np.argsort(np.concatenate([p.keycode for p in parts]), kind="stable")
            position = np.empty(total, dtype=np.intp)
            position[order] = np.arange(total)
            del order
            data = np.empty((len(parts[0].data), total), dtype=np.int64)
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
        cols = [np.concatenate([p.cols[j] for p in parts]) for j in range(len(parts[0].cols))]
        times = np.concatenate([p.times for p in parts])
        diffs = np.concatenate([p.diffs for p in parts])
        frontier = (epoch,) + (0,) * (self.depth - 1)
        cols, times, diffs = consolidate(cols, diffs, advance(times, frontier), runs=True)
        if not len(diffs):
            return None
        code = key_code(cols, self.kinds, self.nkey)
        order = None if is_sorted(code) else np.argsort(code, kind="stable")
        data, floats = _pack(code, cols, times, diffs, order)
        return TraceBatch.from_packed(data, floats, epoch)

    def compact(self) -> None:
        """Merge every batch (and the recent rows) into one, compacted to the current
        frontier."""
        parts = self._spine()
        self.recent = RecentRows()
        self._forget()
        if parts:
            merged = self._merge(parts, force=True)
            self.batches = [merged] if merged is not None else []

    # -- reading -----------------------------------------------------------------------
    def gather(self, codes: np.ndarray) -> Rows:
        """All updates whose key code is in ``codes`` (sorted, unique)."""
        if len(codes) <= SMALL_QUERY and config.fast_paths:
            return self._packed(self._small_lookup(codes, False)[0])
        parts = []
        for b in self._spine(len(codes)):
            idx = key_rows(b, codes)
            if len(idx):
                parts.append((b, idx))
        rows = self._collect(parts)
        if self._recent_by_key(len(codes)):
            recent, _ = self._recent_part(codes, False)
            if recent is not None:
                rows = Rows.concat([rows, Rows.from_packed(recent, self.layout)],
                                   len(self.kinds), self.depth)
        return rows

    def _spine(self, queries: int | None = None) -> list:
        """The batches a lookup of ``queries`` keys searches: the spine, plus the recent rows
        as one sorted batch unless they are looked up one key at a time."""
        if not len(self.recent) or self._recent_by_key(queries):
            return self.batches
        return self.batches + [self.recent.batch(self.layout, self.recent.since)]

    def _recent_by_key(self, queries: int | None) -> bool:
        """Whether a lookup of ``queries`` keys reads the recent rows through their index
        (:meth:`_recent_part`) rather than as one sorted batch."""
        return (queries is not None and queries <= RECENT_QUERY and config.fast_paths
                and bool(self.recent.by_key))

    def _recent_part(self, codes: np.ndarray, want_query: bool):
        """``(packed matrix or None, query indices)`` of the recent rows of ``codes``: one
        dictionary lookup per code, no sorting of the recent rows."""
        recent = self.recent.by_key
        rows, q = [], []
        for i, c in enumerate(codes.tolist()):
            found = recent.get(c)
            if found is not None:
                rows.extend(found)
                if want_query:
                    q.extend([i] * len(found))
        if not rows:
            return None, q
        return np.ascontiguousarray(packed_matrix(rows, self.layout)), q

    def histories(self, codes, limit: int) -> dict | None:
        """``{code: [row, ...]}`` for a few key codes (Python ints): every update of each key,
        as tuples in the packed layout ``(code, fields..., time..., diff)`` (float fields as
        their int64 bits), or ``None`` when that would be more than ``limit`` rows (large
        histories are cheaper in numpy).  What is read from the spine stays cached until the
        spine changes (a reduce reads the same keys again at the later times of one update);
        the recent rows are a dictionary lookup anyway."""
        cache = self._cache
        missing = [c for c in codes if c not in cache]
        if missing and self.batches:
            if self._cached_rows > CACHE_ROWS:
                cache.clear()
                self._cached_rows = 0
                missing = list(codes)
            found = self._read_spine(sorted(missing), limit)
            if found is None:
                return None
            cache.update(found)
        else:
            for c in missing:
                cache[c] = ()
        recent = self.recent.by_key
        if not recent:
            out = {c: cache[c] for c in codes}
        else:
            out = {c: cache[c] + tuple(recent[c]) if c in recent else cache[c] for c in codes}
        if sum(map(len, out.values())) > limit:
            return None
        return out

    def _read_spine(self, codes: list, limit: int) -> dict | None:
        """The spine's rows of ``codes`` (sorted) as ``{code: tuple of rows}``, or ``None``
        when there are more than ``limit``."""
        query = np.array(codes, dtype=np.int64)
        n = len(codes)
        if codes[-1] == _INT64_MAX:  # c + 1 would wrap: two searches instead
            bounds = [np.concatenate([b.keycode.searchsorted(query, "left"),
                                      b.keycode.searchsorted(query, "right")]).tolist()
                      for b in self.batches]
        else:
            probe = np.concatenate([query, query + 1])
            bounds = [b.keycode.searchsorted(probe).tolist() for b in self.batches]
        picks, total = [], 0
        for b, ends in zip(self.batches, bounds):
            idx = []
            for i in range(n):
                lo, hi = ends[i], ends[n + i]
                if hi > lo:
                    idx.extend(range(lo, hi))
            if idx:
                total += len(idx)
                picks.append((b, idx))
        if total > limit:
            return None
        found = {c: [] for c in codes}
        for b, idx in picks:
            rows = np.take(b.data, idx, axis=1).T.tolist()
            if b.floats and b.floats[0] is None:  # the key code is the first field
                for row in rows:
                    found[row[0]].append((row[0], *row))
            else:
                for row in rows:
                    found[row[0]].append(tuple(row))
        self._cached_rows += total
        return {c: tuple(rows) for c, rows in found.items()}

    def _small_lookup(self, codes: np.ndarray, want_query: bool):
        """For a few query codes: ``(packed matrices, query indices)``, one matrix per spine
        batch with matches and one for the recent rows.  One ``searchsorted`` per batch finds
        both ends of every key's run (the run of ``c`` ends where ``c + 1`` would start); the
        ranges are expanded in Python, which for a handful of keys costs less than numpy
        calls."""
        n = len(codes)
        if n and int(codes.max()) == _INT64_MAX:  # c + 1 would wrap: two searches instead
            bounds = [np.concatenate([b.keycode.searchsorted(codes, "left"),
                                      b.keycode.searchsorted(codes, "right")])
                      for b in self.batches]
        else:
            probe = np.concatenate([codes, codes + 1])
            bounds = [b.keycode.searchsorted(probe) for b in self.batches]
        parts, queries = [], []
        for b, bound in zip(self.batches, bounds):
            ends = bound.tolist()
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
        if self.recent.by_key:
            data, q = self._recent_part(codes, want_query)
            if data is not None:
                parts.append(data)
                queries.append(q)
        return parts, queries

    def _packed(self, parts) -> Rows:
        """Rows from packed matrices of this trace's layout."""
        if not parts:
            return Rows.concat([], len(self.kinds or ()), self.depth)
        data = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        return Rows.from_packed(data, self.layout)

    def _collect(self, picks) -> Rows:
        """Rows at the given indices of the given batches, copied once into one packed matrix
        (the batches of one trace share their layout: its kinds never change)."""
        if not picks:
            return Rows.concat([], len(self.kinds or ()), self.depth)
        if len(picks) == 1:
            b, idx = picks[0]
            return b.take(idx)
        first = picks[0][0]
        total = sum(len(idx) for _, idx in picks)
        if total < 4096:  # small: one concatenate of the picked columns
            data = np.concatenate([take_columns(b.data, idx) for b, idx in picks], axis=1)
            return Rows.from_packed(data, first.floats)
        # large: gather straight into the result, field by field (no temporary copies; the
        # indices come from searchsorted over the batch, so 'clip' never clips)
        data = np.empty((len(first.data), total), dtype=np.int64)
        pos = 0
        for b, idx in picks:
            end = pos + len(idx)
            for j in range(len(data)):
                np.take(b.data[j], idx, out=data[j, pos:end], mode="clip")
            pos = end
        return Rows.from_packed(data, first.floats)

    def gather_until(self, codes: np.ndarray, t: tuple):
        """For a reduce over many keys: ``(cols, diffs, later_codes, later_times)``, the
        columns and diffs of the updates whose key code is in ``codes`` (sorted, unique) and
        whose time is ``<= t``, and the key codes and times of the others (lists of arrays).

        Only the fields a reduce reads are gathered (not the times, not a separate key code),
        straight into one array per field; a batch whose times' lub is ``<= t`` (the usual
        case: a trace holds no time beyond the one being processed) is not filtered."""
        picks, later_codes, later_times = self._picks_until(codes, t)
        cols, diffs = self._gather_fields(picks)
        return cols, diffs, later_codes, later_times

    def accumulate_until(self, codes: np.ndarray, t: tuple):
        """:meth:`gather_until` with the rows consolidated: ``(cols, weights, later_codes,
        later_times)``, the columns sorted by record.

        When the columns are integers whose ranges (cached per batch) fit in 63 bits with the
        diffs, every picked row is packed straight from the batches into one int64 and the
        packed values are consolidated (:func:`~ddlab.engine.batch.sum_packed`): no gathered
        column is ever materialised."""
        picks, later_codes, later_times = self._picks_until(codes, t)
        ranges = self._packing_ranges(picks)
        if ranges is None:
            cols, diffs = self._gather_fields(picks)
            cols, weights = consolidate(cols, diffs, runs=True)
            return cols, weights, later_codes, later_times
        total = sum(len(idx) for _, idx in picks)
        packed = np.zeros(total, dtype=np.int64)
        scratch = np.empty(min(total, batch_mod.CHUNK_ROWS), dtype=np.int64)
        pos = 0
        for b, idx in picks:
            fields = [(f, lo, bits) for f, (lo, bits) in zip(b.cols + (b.diffs,), ranges)]
            for a in range(0, len(idx), batch_mod.CHUNK_ROWS):  # chunks stay in cache
                part = idx[a:a + batch_mod.CHUNK_ROWS]
                seg, tmp = packed[pos:pos + len(part)], scratch[:len(part)]
                for field, lo, bits in fields:
                    if bits:
                        np.take(field, part, out=tmp, mode="clip")
                        if lo:
                            tmp -= lo
                        seg <<= bits
                        seg |= tmp
                pos += len(part)
        cols, _, weights = sum_packed(packed, ranges, len(self.kinds))
        return list(cols), weights, later_codes, later_times

    def _packing_ranges(self, picks):
        """Packing ranges (:func:`~ddlab.engine.batch.packing_ranges`) covering the columns
        and diffs of the picked batches (each batch's minima and maxima computed once), or
        ``None``: a float column, too wide, or fewer rows than a packed consolidation pays."""
        if sum(len(idx) for _, idx in picks) < max(1, batch_mod.PACKED_ROWS):
            return None
        bounds = None
        for b, _ in picks:
            if b.bounds is None:
                fields = b.cols + (b.diffs,)
                if any(f.dtype != np.int64 for f in fields):
                    return None
                b.bounds = tuple((int(f.min()), int(f.max())) for f in fields)
            bounds = b.bounds if bounds is None else tuple(
                (min(lo, lo2), max(hi, hi2)) for (lo, hi), (lo2, hi2) in zip(bounds, b.bounds))
        return batch_mod.packing_ranges(bounds)

    def _picks_until(self, codes, t):
        """``(picks, later_codes, later_times)``: ``(batch, row indices)`` of the rows with a
        key in ``codes`` and a time ``<= t``; key codes and times of the rows not ``<= t``."""
        picks, later_codes, later_times = [], [], []
        for b in self._spine():
            idx = key_rows(b, codes)
            if not len(idx):
                continue
            if b.upper is None:
                b.upper = tuple(int(c.max()) for c in b.times.T)
            if not leq(b.upper, t):
                times = np.take(b.times, idx, axis=0)
                now = leq_rows(times, t)
                if not now.all():
                    later_codes.append(b.keycode.take(idx[~now]))
                    later_times.append(times[~now])
                    idx = idx[now]
            if len(idx):
                picks.append((b, idx))
        return picks, later_codes, later_times

    def _gather_fields(self, picks):
        """``(cols, diffs)`` of the picked rows, one array per field."""
        arity = len(self.kinds)
        total = sum(len(idx) for _, idx in picks)
        if picks:
            dtypes = [c.dtype for c in picks[0][0].cols]
        else:
            dtypes = [np.float64 if k == "f" else np.int64 for k in self.kinds]
        cols = [np.empty(total, dtype=d) for d in dtypes]
        diffs = np.empty(total, dtype=np.int64)
        pos = 0
        for b, idx in picks:
            end = pos + len(idx)
            for j in range(arity):
                np.take(b.cols[j], idx, out=cols[j][pos:end], mode="clip")
            np.take(b.diffs, idx, out=diffs[pos:end], mode="clip")
            pos = end
        return cols, diffs

    def gather_matches(self, codes: np.ndarray, check=None):
        """For each query code (any order, repeats allowed): the matching updates.

        Returns ``(query_index, rows)`` with one entry per (query, matching update) pair.
        ``check(n)``, when given, sees the running number of pairs before they are gathered
        (the runaway-epoch budget raises there, before memory is spent).
        """
        if len(codes) <= SMALL_QUERY and config.fast_paths:
            parts, queries = self._small_lookup(codes, True)
            return np.array([i for q in queries for i in q], dtype=np.int64), \
                self._packed(parts)
        qparts, parts = [], []
        total = 0
        for b in self._spine(len(codes)):
            lo, counts = key_ranges(b, codes)
            if check is not None:
                total += int(counts.sum())
                check(total)
            idx = expand_ranges(lo, counts)
            if len(idx):
                qparts.append(np.repeat(np.arange(len(codes)), counts))
                parts.append(b.take(idx))
        if self._recent_by_key(len(codes)):
            data, q = self._recent_part(codes, True)
            if data is not None:
                if check is not None:
                    check(total + len(q))
                qparts.append(np.array(q, dtype=np.int64))
                parts.append(Rows.from_packed(data, self.layout))
        rows = Rows.concat(parts, len(self.kinds or ()), self.depth)
        q = np.concatenate(qparts) if qparts else np.zeros(0, dtype=np.int64)
        return q, rows

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


class EnteredTrace:
    """An outer trace seen from inside ``extra`` nested loops: times gain zero coordinates.

    This is how a loop reads an arrangement built outside it without copying it (the
    ``enter`` of an arrangement just presents ``(t, 0)`` times)."""

    def __init__(self, inner: Trace | "EnteredTrace", extra: int):
        self.inner, self.extra = inner, extra
        self.nkey = inner.nkey
        self.depth = inner.depth + extra

    @property
    def kinds(self):
        return self.inner.kinds

    def check_kinds(self, kinds, where):
        self.inner.check_kinds(kinds, where)

    def __len__(self) -> int:
        return 0  # the state belongs to the outer trace

    @property
    def row_depth(self) -> int:
        return self.inner.row_depth

    def histories(self, codes, limit: int) -> dict | None:
        """The outer trace's rows: their times lack this trace's ``extra`` (zero)
        coordinates, which :attr:`row_depth` tells the reader."""
        return self.inner.histories(codes, limit)

    def _extend(self, rows: Rows) -> Rows:
        times = np.zeros((len(rows), self.depth), dtype=np.int64)
        times[:, : rows.times.shape[1]] = rows.times
        return Rows(rows.keycode, rows.cols, times, rows.diffs)

    def gather(self, codes):
        return self._extend(self.inner.gather(codes))

    def gather_matches(self, codes, check=None):
        q, rows = self.inner.gather_matches(codes, check)
        return q, self._extend(rows)

    def all_rows(self) -> Rows:
        return self._extend(self.inner.all_rows())

    def rows_where(self, column: int, codes) -> Rows:
        return self._extend(self.inner.rows_where(column, codes))
