"""The entered view: an outer trace read from inside nested loops, without copying it.

This is how a loop reads an arrangement built outside it (the ``enter`` of an arrangement):
the outer trace's rows with times ``(t, 0, ...)``.  An update at outer time ``s`` is at
``(s, 0, ...)`` inside, so it is ``<= t`` exactly when ``s`` is ``<=`` the prefix of ``t``
(iteration coordinates are never negative).
"""
from __future__ import annotations

from .rows import Rows, padded_times


class EnteredTrace:
    """An outer trace seen from inside ``extra`` nested loops: times gain zero coordinates.
    Implements :class:`~.reader.TraceReader` in full; the state stays the outer trace's."""

    def __init__(self, inner, extra: int):
        self.inner, self.extra = inner, extra
        self.nkey = inner.nkey
        self.depth = inner.depth + extra

    @property
    def kinds(self):
        return self.inner.kinds

    @property
    def row_depth(self) -> int:
        return self.inner.row_depth

    def __len__(self) -> int:
        return 0  # the state belongs to the outer trace

    def histories(self, codes, limit: int) -> dict | None:
        """The outer trace's rows: their times lack this trace's ``extra`` (zero)
        coordinates, which :attr:`row_depth` tells the reader."""
        return self.inner.histories(codes, limit)

    def packed_runs(self) -> list[tuple]:
        """The outer trace's runs (rows with :attr:`row_depth` time coordinates)."""
        return self.inner.packed_runs()

    def gather(self, codes) -> Rows:
        return self.inner.gather(codes).with_depth(self.depth)

    def gather_matches(self, codes, check=None):
        q, rows = self.inner.gather_matches(codes, check)
        return q, rows.with_depth(self.depth)

    def accumulate_until(self, codes, t: tuple):
        cols, weights, later_codes, later_times = self.inner.accumulate_until(
            codes, t[:self.inner.depth])
        return cols, weights, later_codes, [padded_times(times, self.depth) for times in later_times]

    def all_rows(self) -> Rows:
        return self.inner.all_rows().with_depth(self.depth)

    def rows_where(self, column: int, codes) -> Rows:
        return self.inner.rows_where(column, codes).with_depth(self.depth)

    def compacted_rows(self) -> Rows:
        return self.inner.compacted_rows().with_depth(self.depth)

