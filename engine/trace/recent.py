"""A trace's Python-side state for small changes: its recent rows, and its cached histories.

Small inserts (a few rows, the common case once a program runs on single changes) are not
merged into the spine: they go to :class:`RecentRows`, an append-only matrix (with a per-key
index built lazily for Python readers), which becomes one sorted batch of the spine when it
fills up.  Reading a few keys' histories in
Python (:meth:`CachedHistories.histories`, the reduce's and join's Python paths) caches what
it read from the spine until the spine changes, so re-reading a key at the next interesting
time of the same update is a dictionary lookup.
"""
from __future__ import annotations

import numpy as np

from .. import kernels, tuning
from .batches import TraceBatch
from .layout import packed_matrix, take_columns
from .lookup import run_bounds


class RecentRows:
    """The rows of a trace's latest small inserts: the first ``len(self)`` columns of one
    int64 matrix ``(fields, capacity)``, in insertion order, each ``(key code, fields...,
    time..., diff)`` (the key code always first, also where the spine's layout stores it
    once; float fields as their int64 bits).  An insert writes its columns into the matrix (a
    few numpy assignments, no per-row Python); the compiled kernels scan the matrix as it is
    (:meth:`matrix`), and the Python views a few-key reader asks for (``rows``, ``by_key``:
    key code -> its rows as tuples) are built lazily, each row once.  Appending never moves a
    row already written, so a snapshot is the object and its length; a rollback truncates
    (:meth:`truncated`).  ``since`` is the epoch of the oldest row (the batch they become is
    compacted from there)."""

    __slots__ = ("_data", "_n", "since", "_batch", "_rows", "_by_key")

    def __init__(self):
        self._data = None
        self._n = 0
        self.since = None
        self._batch = None
        self._rows: list[tuple] = []
        self._by_key: dict = {}

    def __len__(self) -> int:
        return self._n

    def _room(self, fields: int, k: int) -> np.ndarray:
        """The matrix, grown (rows kept) to hold ``k`` more rows."""
        data, need = self._data, self._n + k
        if data is None or data.shape[1] < need:
            cap = max(need, tuning.RECENT_CAPACITY + tuning.SMALL_INSERT,
                      0 if data is None else 2 * data.shape[1])
            grown = np.empty((fields, cap), dtype=np.int64)
            if self._n:
                grown[:, :self._n] = data[:, :self._n]
            self._data = data = grown
        return data

    def append_columns(self, code, cols, t: tuple, diffs, epoch: int) -> None:
        """Add the updates of one batch at time ``t``: key codes, columns, diffs."""
        k = len(diffs)
        data = self._room(2 + len(cols) + len(t), k)
        n, end = self._n, self._n + k
        data[0, n:end] = code
        for j, c in enumerate(cols, 1):
            data[j, n:end] = c.view(np.int64) if c.dtype.kind == "f" else c
        first_time = 1 + len(cols)
        for j, coordinate in enumerate(t):
            data[first_time + j, n:end] = coordinate
        data[-1, n:end] = diffs
        self._appended(end, epoch)

    def _appended(self, n: int, epoch: int) -> None:
        self._n = n
        if self.since is None:
            self.since = epoch
        self._batch = None

    def buffer(self) -> tuple[np.ndarray | None, int]:
        """``(matrix, n)``: the rows are the first ``n`` columns of the matrix (the compiled
        kernels scan it in place; ``None`` before the first row)."""
        return self._data, self._n

    def _sync(self) -> None:
        """Extend the Python views by the rows appended since they were last read."""
        have = len(self._rows)
        if have < self._n:
            new = list(map(tuple, self._data[:, have:self._n].T.tolist()))
            self._rows.extend(new)
            index = self._by_key
            for row in new:
                found = index.get(row[0])
                if found is None:
                    index[row[0]] = [row]
                else:
                    found.append(row)

    @property
    def rows(self) -> list[tuple]:
        """The rows as tuples, in insertion order."""
        self._sync()
        return self._rows

    @property
    def by_key(self) -> dict:
        """Key code -> its rows as tuples."""
        self._sync()
        return self._by_key

    def truncated(self, n: int) -> "RecentRows":
        """This buffer as it was when it held ``n`` rows (after a rollback)."""
        if n == self._n:
            return self
        fresh = RecentRows()
        if n:
            fresh._data = self._data[:, :n].copy()
            fresh._n, fresh.since = n, self.since
        return fresh

    def batch(self, layout: tuple, since: int) -> TraceBatch:
        """The rows as one sorted spine batch of the trace's ``layout`` (cached until the
        next append)."""
        if self._batch is None:
            data = self._data[:, :self._n]
            if self._n > 1:
                data = kernels.sort_by_key(data) if kernels.active() else \
                    take_columns(data, np.argsort(data[0], kind="stable"))
            if layout and layout[0] is None:  # the key code is the first column: stored once
                data = data[1:]
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
        self._runs = None  # the spine's part of packed_runs()
        self._spine_rows = None  # rows in the spine (``len``), counted when asked

    def forget(self) -> None:
        """The spine changed: drop the cached histories (and its row count)."""
        self._runs = None
        self._spine_rows = None
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
