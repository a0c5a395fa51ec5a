"""What a reader (a join, a reduce, ``Collection.history``) may ask of a trace.

Both the trace (:class:`~.spine.Trace`) and an outer trace seen from inside loops
(:class:`~.entered.EnteredTrace`) implement all of it; a reader never needs to know which it
holds.  Key codes are those of :func:`~ddlab.engine.columns.key_code`; times are tuples of the
reader's depth.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .rows import Rows


@runtime_checkable
class TraceReader(Protocol):
    """The read side of a trace."""

    #: key columns (0: the whole record)
    nkey: int
    #: time coordinates of the reader's scope
    depth: int

    @property
    def kinds(self) -> tuple | None:
        """The records' column kinds (``None`` until the first update)."""

    @property
    def row_depth(self) -> int:
        """Time coordinates stored per row of :meth:`histories` (fewer than ``depth`` for an
        entered trace: the missing ones are zeros)."""

    def __len__(self) -> int:
        """Updates this trace owns (an entered view owns none)."""

    def gather(self, codes: np.ndarray) -> Rows:
        """Every update whose key code is in ``codes`` (sorted, unique)."""

    def gather_matches(self, codes: np.ndarray, check=None) -> tuple[np.ndarray, Rows]:
        """``(query index, rows)``: one entry per (query code, matching update) pair;
        ``check(n)`` sees the running number of pairs before they are gathered."""

    def accumulate_until(self, codes: np.ndarray, t: tuple):
        """``(cols, weights, later_codes, later_times)``: the updates of ``codes`` at times
        ``<= t`` consolidated, and the key codes and times of the others."""

    def histories(self, codes, limit: int) -> dict | None:
        """``{code: rows}`` as packed tuples for a few codes, or ``None`` beyond ``limit``."""

    def packed_runs(self) -> list[tuple]:
        """``(matrix, n, sorted, first)`` per run of packed rows, for the compiled kernels:
        the spine's batches (sorted by key code) and the recent rows (insertion order)."""

    def all_rows(self) -> Rows:
        """Every update, unconsolidated."""

    def rows_where(self, column: int, codes) -> Rows:
        """The updates whose field ``column`` holds one of ``codes`` (a lookup by a non-key
        field, by scanning)."""

    def compacted_rows(self) -> Rows:
        """Every update as compaction to the last completed epoch leaves it (what users
        read, e.g. ``Collection.history()``)."""
