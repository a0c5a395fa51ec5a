"""A trace's Python-side state for small changes: its recent rows, and its cached histories.

Small inserts (a few rows, the common case once a program runs on single changes) do not
touch numpy: they go to :class:`RecentRows`, a Python list with a per-key index, which
becomes one sorted batch of the spine when it fills up.  Reading a few keys' histories in
Python (:meth:`CachedHistories.histories`, the reduce's and join's Python paths) caches what
it read from the spine until the spine changes, so re-reading a key at the next interesting
time of the same update is a dictionary lookup.
"""
from __future__ import annotations

import numpy as np

from .. import tuning
from .batches import TraceBatch
from .layout import packed_matrix, take_columns
from .lookup import run_bounds


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

    def batch(self, layout: tuple, since: int) -> TraceBatch:
        """The rows as one sorted spine batch of the trace's ``layout`` (cached until the
        next append)."""
        if self._batch is None:
            data = packed_matrix(self.rows, layout)
            if len(self.rows) > 1:
                data = take_columns(data, np.argsort(data[0], kind="stable"))
            self._batch = TraceBatch.from_packed(np.ascontiguousarray(data), layout, since)
        return self._batch

    def part(self, codes: np.ndarray, want_query: bool, layout: tuple):
        """``(packed matrix or None, query indices)`` of the rows of ``codes``: one
        dictionary lookup per code, no sorting."""
        recent = self.by_key
        rows, q = [], []
        for i, c in enumerate(codes.tolist()):
            found = recent.get(c)
            if found is not None:
                rows.extend(found)
                if want_query:
                    q.extend([i] * len(found))
        if not rows:
            return None, q
        return np.ascontiguousarray(packed_matrix(rows, layout)), q


class CachedHistories:
    """The Python-side reads of :class:`~.spine.Trace` (a mixin over its ``batches`` and
    ``recent``): a few keys' histories as tuples, the spine's part cached until the spine
    changes (:meth:`forget`)."""

    def __init__(self):
        self._cache: dict = {}  # key code -> its rows in self.batches
        self._cached_rows = 0

    def forget(self) -> None:
        """The spine changed: drop the cached histories."""
        if self._cache:
            self._cache = {}
            self._cached_rows = 0

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
            if self._cached_rows > tuning.CACHE_ROWS:
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
        n = len(codes)
        bounds = run_bounds(self.batches, np.array(codes, dtype=np.int64), codes[-1])
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
