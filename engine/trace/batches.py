"""Spine batches: the immutable, key-sorted runs a trace's spine is made of."""
from __future__ import annotations

from .layout import pack, take_columns, unpack
from .rows import Rows


class TraceBatch:
    """Immutable run of updates sorted by ``keycode``: columns, an ``(n, d)`` time matrix, diffs
    (views of one packed matrix ``data``, see :func:`~.layout.pack`; int32 views when the
    batch is narrowed, :func:`~.layout.narrowed`, which only the trace package reads).

    ``since`` is the epoch whose frontier its times are compacted to: a batch with
    ``since`` equal to the current epoch needs no compaction, and two such batches cannot hold
    cancelling updates (a trace receives one batch per time), so they merge by key alone.
    ``upper``, ``bounds`` and ``key_index`` are computed when a large lookup first needs them
    (the lub of its times, the ``(min, max)`` of its columns and diffs, see
    :func:`~.lookup.key_ranges`)."""

    __slots__ = ("keycode", "cols", "times", "diffs", "since", "data", "floats", "upper",
                 "bounds", "key_index")

    def __init__(self, keycode, cols, times, diffs, since, packed=None):
        self.data, self.floats = packed if packed is not None else pack(keycode, cols, times,
                                                                         diffs)
        self.keycode, cols, self.times, self.diffs = unpack(self.data, self.floats)
        self.cols = tuple(cols)
        self.since = since
        self.upper = None
        self.bounds = None
        self.key_index = None

    @classmethod
    def from_packed(cls, data, floats, since) -> "TraceBatch":
        return cls(None, None, None, None, since, packed=(data, floats))

    def __len__(self) -> int:
        return len(self.diffs)

    def take(self, idx) -> "Rows":
        return Rows.from_packed(take_columns(self.data, idx), self.floats)
