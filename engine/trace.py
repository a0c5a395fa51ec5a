"""Traces: the indexed, multi-versioned state behind arrangements.

A trace holds updates ``(record, time, diff)`` for one collection, indexed by the record's key
(its first ``nkey`` columns).  It is a *spine* of immutable batches, each sorted by key code,
merged geometrically (LSM style) as new batches arrive, so inserting costs amortised
``O(log n)`` per update and a lookup is one ``searchsorted`` per batch.  Every merge applies
logical compaction up to the dataflow's frontier (``t -> lub(t, frontier)``) and consolidates,
so the state stays proportional to the live data rather than to the number of epochs.

Batches are never modified in place; a snapshot of a trace is a copy of its list of batches,
which is what lets a failed epoch roll back for free.
"""
from __future__ import annotations

import numpy as np

from . import config
from .batch import Batch, consolidate
from .columns import key_code, KIND_NAMES
from .errors import SchemaError
from .lattice import advance


class TraceBatch:
    """Immutable run of updates sorted by ``keycode``: columns, an ``(n, d)`` time matrix, diffs.

    ``since`` is the epoch whose frontier its times are compacted to: a batch with
    ``since`` equal to the current epoch needs no compaction, and two such batches cannot hold
    cancelling updates (a trace receives one batch per time), so they merge by key alone."""

    __slots__ = ("keycode", "cols", "times", "diffs", "since")

    def __init__(self, keycode, cols, times, diffs, since):
        self.keycode, self.cols, self.times, self.diffs = keycode, tuple(cols), times, diffs
        self.since = since

    def __len__(self) -> int:
        return len(self.diffs)

    def take(self, idx) -> "Rows":
        return Rows(self.keycode[idx], [c[idx] for c in self.cols], self.times[idx], self.diffs[idx])


class Rows:
    """Updates gathered from a trace (not necessarily sorted): same fields as a TraceBatch."""

    __slots__ = ("keycode", "cols", "times", "diffs")

    def __init__(self, keycode, cols, times, diffs):
        self.keycode, self.cols, self.times, self.diffs = keycode, list(cols), times, diffs

    def __len__(self) -> int:
        return len(self.diffs)

    def take(self, idx) -> "Rows":
        return Rows(self.keycode[idx], [c[idx] for c in self.cols], self.times[idx], self.diffs[idx])

    @staticmethod
    def concat(parts, arity, depth) -> "Rows":
        if not parts:
            z = np.zeros(0, dtype=np.int64)
            return Rows(z, [z] * arity, np.zeros((0, depth), dtype=np.int64), z)
        if len(parts) == 1:
            return parts[0]
        return Rows(np.concatenate([p.keycode for p in parts]),
                    [np.concatenate([p.cols[j] for p in parts]) for j in range(arity)],
                    np.concatenate([p.times for p in parts]),
                    np.concatenate([p.diffs for p in parts]))


def is_sorted(a: np.ndarray) -> bool:
    """Whether ``a`` is ascending (the general path always answers no and sorts)."""
    return config.fast_paths and (len(a) < 2 or bool((a[1:] >= a[:-1]).all()))


def expand_ranges(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices ``lo[i], ..., lo[i] + counts[i] - 1`` for every ``i``, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    if counts.max() == 1:  # at most one row per key: no ranges to expand
        return lo if total == len(counts) else lo[counts > 0]
    ends = np.cumsum(counts)
    return np.repeat(lo - (ends - counts), counts) + np.arange(total)


class Trace:
    """The spine of one arrangement.  ``clock`` supplies the compaction frontier's epoch."""

    def __init__(self, nkey: int, depth: int, clock, name: str = "trace"):
        self.nkey, self.depth, self.clock, self.name = nkey, depth, clock, name
        self.batches: list[TraceBatch] = []
        self.kinds: tuple | None = None

    # -- size and rollback -------------------------------------------------------------
    def __len__(self) -> int:
        return sum(len(b) for b in self.batches)

    def snapshot(self):
        return (list(self.batches), self.kinds)

    def restore(self, snap) -> None:
        self.batches, self.kinds = list(snap[0]), snap[1]

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
        times = np.empty((len(batch), self.depth), dtype=np.int64)
        times[:] = t
        epoch = self.clock.epoch
        if is_sorted(code):
            self.batches.append(TraceBatch(code, batch.cols, times, batch.diffs, epoch))
        else:
            order = np.argsort(code, kind="stable")
            self.batches.append(TraceBatch(code[order], [c[order] for c in batch.cols], times,
                                           batch.diffs[order], epoch))
        self._maintain()

    def _maintain(self) -> None:
        b = self.batches
        while len(b) >= 2 and len(b[-2]) <= 2 * len(b[-1]):
            right = b.pop()
            left = b.pop()
            merged = self._merge([left, right])
            if merged is not None:
                b.append(merged)

    def _merge(self, parts, force: bool = False) -> TraceBatch | None:
        epoch = self.clock.epoch
        cols = [np.concatenate([p.cols[j] for p in parts]) for j in range(len(parts[0].cols))]
        times = np.concatenate([p.times for p in parts])
        diffs = np.concatenate([p.diffs for p in parts])
        if not force and config.fast_paths and all(p.since == epoch for p in parts):
            # nothing to compact and nothing that can cancel: merge the sorted runs by key
            code = np.concatenate([p.keycode for p in parts])
            order = np.argsort(code, kind="stable")
            return TraceBatch(code[order], [c[order] for c in cols], times[order], diffs[order],
                              epoch)
        frontier = (epoch,) + (0,) * (self.depth - 1)
        cols, times, diffs = consolidate(cols, diffs, advance(times, frontier), runs=True)
        if not len(diffs):
            return None
        code = key_code(cols, self.kinds, self.nkey)
        if is_sorted(code):
            return TraceBatch(code, cols, times, diffs, epoch)
        order = np.argsort(code, kind="stable")
        return TraceBatch(code[order], [c[order] for c in cols], times[order], diffs[order], epoch)

    def compact(self) -> None:
        """Merge every batch into one, compacted to the current frontier."""
        if self.batches:
            merged = self._merge(self.batches, force=True)
            self.batches = [merged] if merged is not None else []

    # -- reading -----------------------------------------------------------------------
    def gather(self, codes: np.ndarray) -> Rows:
        """All updates whose key code is in ``codes`` (sorted, unique)."""
        picks = []
        for b in self.batches:
            lo = b.keycode.searchsorted(codes, "left")
            hi = b.keycode.searchsorted(codes, "right")
            idx = expand_ranges(lo, hi - lo)
            if len(idx):
                picks.append((b, idx))
        return self._collect(picks)

    def _collect(self, picks) -> Rows:
        """Rows at the given indices of the given batches, copied once into fresh arrays."""
        if len(picks) == 1:
            b, idx = picks[0]
            return b.take(idx)
        arity = len(self.kinds or ())
        total = sum(len(idx) for _, idx in picks)
        if total < 4096:  # small: plain copies and one concatenate cost less
            return Rows.concat([b.take(idx) for b, idx in picks], arity, self.depth)
        first = picks[0][0]
        keycode = np.empty(total, dtype=np.int64)
        cols = [np.empty(total, dtype=c.dtype) for c in first.cols]
        times = np.empty((total, self.depth), dtype=np.int64)
        diffs = np.empty(total, dtype=np.int64)
        pos = 0
        for b, idx in picks:
            end = pos + len(idx)
            b.keycode.take(idx, out=keycode[pos:end])
            for j, c in enumerate(b.cols):
                if c.dtype == cols[j].dtype:
                    c.take(idx, out=cols[j][pos:end])
                else:
                    cols[j] = cols[j].astype(np.result_type(cols[j], c))
                    cols[j][pos:end] = c[idx]
            b.times.take(idx, axis=0, out=times[pos:end])
            b.diffs.take(idx, out=diffs[pos:end])
            pos = end
        return Rows(keycode, cols, times, diffs)

    def gather_matches(self, codes: np.ndarray, check=None):
        """For each query code (any order, repeats allowed): the matching updates.

        Returns ``(query_index, rows)`` with one entry per (query, matching update) pair.
        ``check(n)``, when given, sees the running number of pairs before they are gathered
        (the runaway-epoch budget raises there, before memory is spent).
        """
        qparts, parts = [], []
        total = 0
        for b in self.batches:
            lo = b.keycode.searchsorted(codes, "left")
            hi = b.keycode.searchsorted(codes, "right")
            counts = hi - lo
            if check is not None:
                total += int(counts.sum())
                check(total)
            idx = expand_ranges(lo, counts)
            if len(idx):
                qparts.append(np.repeat(np.arange(len(codes)), counts))
                parts.append(b.take(idx))
        rows = Rows.concat(parts, len(self.kinds or ()), self.depth)
        q = np.concatenate(qparts) if qparts else np.zeros(0, dtype=np.int64)
        return q, rows

    def all_rows(self) -> Rows:
        return Rows.concat([b.take(slice(None)) for b in self.batches], len(self.kinds or ()),
                           self.depth)


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
