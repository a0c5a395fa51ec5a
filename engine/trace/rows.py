"""Row sets: updates gathered from a trace for a reader (a join's matches, a reduce's
histories, a view's contents), in no particular order; views of one packed matrix (see
:mod:`.layout`) when they come straight from the spine."""
from __future__ import annotations

import numpy as np

from .layout import take_columns, unpack, wide


class Rows:
    """Updates gathered from a trace (not necessarily sorted): same fields as a TraceBatch,
    packed (``data``) when they come straight from trace batches."""

    __slots__ = ("keycode", "cols", "times", "diffs", "data", "floats")

    def __init__(self, keycode, cols, times, diffs):
        self.keycode, self.cols, self.times, self.diffs = keycode, list(cols), times, diffs
        self.data = self.floats = None

    @classmethod
    def from_packed(cls, data, floats) -> "Rows":
        data = wide(data)     # rows from a narrowed batch leave the trace as int64
        keycode, cols, times, diffs = unpack(data, floats)
        rows = cls(keycode, cols, times, diffs)
        rows.data, rows.floats = data, floats
        return rows

    def __len__(self) -> int:
        return len(self.diffs)

    def take(self, idx) -> "Rows":
        if self.data is not None:
            return Rows.from_packed(take_columns(self.data, idx), self.floats)
        return Rows(self.keycode[idx], [c[idx] for c in self.cols], self.times[idx], self.diffs[idx])

    def with_depth(self, depth: int) -> "Rows":
        """These rows with their times padded by zero coordinates to ``depth`` (an outer
        trace's rows as a loop nested in its scope sees them)."""
        return Rows(self.keycode, self.cols, padded_times(self.times, depth), self.diffs)

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


def padded_times(times: np.ndarray, depth: int) -> np.ndarray:
    """A time matrix with zero coordinates appended up to ``depth``."""
    out = np.zeros((len(times), depth), dtype=np.int64)
    out[:, : times.shape[1]] = times
    return out
