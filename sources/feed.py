"""Drive an engine input with a sliding window: each window move is one epoch.

Why: the slider and the Play button think in window positions; the engine thinks in epochs of
input changes.  ``WindowFeed`` translates: moving from position ``k-1`` to ``k`` pushes batch
``k`` (``input.update(batch); flow.step()``), moving back pushes its negation.  It knows
only the engine's input API (``update`` with a ``diff`` column, ``step``), nothing of Spark.
"""
from __future__ import annotations

import time

import pandas as pd

from .windows import format_span

__all__ = ["WindowFeed", "negate", "combine"]


def negate(batch: pd.DataFrame) -> pd.DataFrame:
    """The batch that undoes ``batch`` (same records, opposite ``diff``)."""
    out = batch.copy()
    out["diff"] = -out["diff"]
    return out


def combine(batches: list[pd.DataFrame]) -> pd.DataFrame:
    """Sum several batches into one (per record), dropping records whose changes cancel out."""
    nonempty = [b for b in batches if len(b)]
    if not nonempty:
        if batches:
            return batches[0].iloc[0:0].copy()
        return pd.DataFrame({c: pd.Series(dtype="int64") for c in ("src", "dst", "diff")})
    whole = pd.concat(nonempty, ignore_index=True)
    keys = [c for c in whole.columns if c != "diff"]
    summed = whole.groupby(keys, sort=False, dropna=False)["diff"].sum().reset_index()
    return summed[summed["diff"] != 0].reset_index(drop=True)


_combine = combine  # seek() has a parameter of the same name


class WindowFeed:
    """Feeds an engine input from :class:`~ddlab.sources.windows.WindowBatches`.

    ``position`` is ``-1`` (empty input) before the first move.  ``forward(n)`` and
    ``backward(n)`` move by up to ``n`` positions (stopping at the ends), one epoch per
    position; ``seek(k)`` goes straight to ``k``, one epoch per position passed, or a single
    epoch with ``combine=True`` (what a slider wants when the user jumps far).

    ``step=False`` only stages each move's batch on the input and leaves closing the epoch to
    the caller (who may combine several feeds and other rows into one epoch).  If that epoch
    fails (the engine rolls it back and drops the staged rows), the caller calls :meth:`undo`
    and the feed is back where the engine is; once the epoch has committed there is nothing
    to undo.  So the feed alone owns its position.

    ``position`` (and ``epochs``) take up a feed whose input already holds that window's
    records, e.g. a dataflow rebuilt beside the old one that replayed its contents: nothing
    is pushed, the next move starts from there.

    >>> feed = WindowFeed(batches, edges, flow)          # doctest: +SKIP
    >>> feed.forward(3); feed.backward(1); feed.seek(40, combine=True)   # doctest: +SKIP
    """

    def __init__(self, batches, input, flow=None, *, step: bool = True, position: int = -1,
                 epochs: int = 0):
        self.auto_step = step
        if flow is None:
            flow = getattr(input, "flow", None) or getattr(input, "dataflow", None)
        if flow is None or not hasattr(flow, "step"):
            raise TypeError("WindowFeed needs the dataflow whose step() closes an epoch: "
                            "WindowFeed(batches, input, flow)")
        self.batches, self.input, self.flow = batches, input, flow
        if not -1 <= position < len(batches):
            raise ValueError(f"WindowFeed position={position} is out of range -1..{len(batches) - 1}")
        self.position = position
        self.epochs = epochs  # moves pushed (each closed its own epoch unless step=False)
        self.last_update_s = 0.0  # time in input.update for the last move
        self.last_step_s = 0.0  # time in flow.step for the last move
        self.last_changes = 0  # update rows pushed by the last move
        self._undo: tuple | None = None  # (position, epochs, flow epoch) before staged moves

    # -- where we are -------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return len(self.batches)

    @property
    def window(self) -> tuple[int, int] | None:
        """``(start, end)`` of the current window in unix seconds, ``None`` before the first move."""
        return None if self.position < 0 else self.batches.window(self.position)

    @property
    def start(self) -> int | None:
        return None if self.position < 0 else self.window[0]

    @property
    def end(self) -> int | None:
        return None if self.position < 0 else self.window[1]

    @property
    def at_end(self) -> bool:
        return self.position >= self.steps - 1

    @property
    def width(self) -> int:
        """The window's width in seconds."""
        return self.batches.width

    @property
    def step_seconds(self) -> int:
        """How far one position moves the window, in seconds."""
        return self.batches.step

    def span(self, k: int | None = None) -> str:
        """Position ``k``'s window (default: the current one) as people read it, e.g.
        ``[2004-04-15, 2004-04-22)``; ``"empty"`` for position -1."""
        k = self.position if k is None else k
        if k < 0:
            return "empty"
        start, end = self.batches.window(k)
        return format_span(start, end, self.batches.width)

    @property
    def staged(self) -> bool:
        """True while moves are staged on the input for an epoch that has not closed yet."""
        return self._undo is not None and self._undo[2] == self.flow.epoch

    def undo(self) -> int:
        """The epoch holding the staged moves was rolled back: return to the position before
        them (nothing to do once it committed).  Returns the position."""
        if self.staged:
            self.position, self.epochs = self._undo[0], self._undo[1]
        self._undo = None
        return self.position

    def fetch(self, direction: int) -> pd.DataFrame | None:
        """The batch a move of one position (``direction`` +1 or -1) would push, fetched now
        without moving; ``None`` at an end.  A caller staging several feeds in one epoch
        fetches them all first, so a failing fetch leaves nothing staged."""
        if direction > 0:
            return None if self.at_end else self.batches.batch(self.position + 1)
        return None if self.position < 0 else negate(self.batches.batch(self.position))

    # -- moving -----------------------------------------------------------------------------
    def _push(self, batch: pd.DataFrame):
        if not self.auto_step and not self.staged:
            self._undo = (self.position, self.epochs, self.flow.epoch)
        t0 = time.perf_counter()
        if len(batch):
            self.input.update(batch)
        t1 = time.perf_counter()
        result = self.flow.step() if self.auto_step else None
        t2 = time.perf_counter()
        self.last_update_s, self.last_step_s, self.last_changes = t1 - t0, t2 - t1, len(batch)
        self.epochs += 1
        return result

    def _move(self, target: int):
        """One epoch moving one position forward or backward."""
        if target == self.position + 1:
            result = self._push(self.batches.batch(target))
        elif target == self.position - 1:
            result = self._push(negate(self.batches.batch(self.position)))
        else:  # pragma: no cover - internal misuse
            raise AssertionError("moves are one position at a time")
        self.position = target
        return result

    def forward(self, n: int = 1) -> int:
        """Move up to ``n`` positions forward (one epoch each); returns the new position."""
        for _ in range(max(0, n)):
            if self.at_end:
                break
            self._move(self.position + 1)
        return self.position

    def backward(self, n: int = 1) -> int:
        """Move up to ``n`` positions backward, to ``-1`` (empty) at most; returns the new position."""
        for _ in range(max(0, n)):
            if self.position < 0:
                break
            self._move(self.position - 1)
        return self.position

    def seek(self, k: int, *, combine: bool = False) -> int:
        """Go to position ``k`` (``-1`` = empty): one epoch per position, or one in all with ``combine``."""
        if not -1 <= k < self.steps:
            raise ValueError(f"window position {k} out of range -1..{self.steps - 1}")
        if k == self.position:
            return k
        if not combine or abs(k - self.position) == 1:
            while self.position != k:
                self._move(self.position + (1 if k > self.position else -1))
            return k
        if k > self.position:
            parts = [self.batches.batch(j) for j in range(self.position + 1, k + 1)]
        else:
            parts = [negate(self.batches.batch(j)) for j in range(self.position, k, -1)]
        self._push(_combine(parts))
        self.position = k
        return k

    def __repr__(self) -> str:
        where = "empty" if self.position < 0 else f"position {self.position}/{self.steps - 1} {self.window}"
        return f"WindowFeed({where}, {self.epochs} epochs pushed)"
