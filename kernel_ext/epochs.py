"""Closing one epoch of the session's flow, and what it reports.

Why: an epoch of the session may move several window feeds and apply rows queued by
``%dd insert``; it is one ``flow.step()``.  The feeds stage their moves and own their
positions: if the engine rolls the epoch back, each feed's ``undo()`` puts it back (the
sources' move controller does both, as it does for the explorer).  The
result is an :class:`EpochLine` per epoch (changes per declared collection, the window).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ddlab.sources.moves import MoveController

from .messages import SessionError, first_line, plural
from .summaries import change_counts

__all__ = ["EpochLine", "StepResult", "step_once", "step_failed"]


@dataclass
class EpochLine:
    """What one epoch did: per declared collection ``(additions, retractions)``."""

    epoch: int
    seconds: float
    changes: dict            # name -> (plus, minus)
    window: dict | None = None   # {"position", "steps", "input", "span"} of the (first) feed
    report: Any = None       # the engine's StepReport

    def text(self) -> str:
        """``"epoch 3 | window 2/9 [2004-04-17, 2004-04-24) | cc +4 -1 | 2.1 ms"``."""
        parts = [f"epoch {self.epoch}"]
        if self.window:
            w = self.window
            parts.append(f"window {w['position']}/{w['steps'] - 1} {w['span']}"
                         if w["position"] >= 0 else "window empty")
        parts += [f"{n} +{p:,} -{m:,}" for n, (p, m) in self.changes.items()]
        parts.append(f"{self.seconds * 1000:.1f} ms")
        return " | ".join(parts)


@dataclass
class StepResult:
    """The epochs one command closed (``lines``) and a note (e.g. a window reached its end)."""

    lines: list[EpochLine]
    note: str = ""

    @property
    def epochs(self) -> int:
        return len(self.lines)


def step_once(state, moves: dict, seek: int | None = None) -> EpochLine:
    """One epoch: move the given feeds (name -> +1/-1) or seek all to ``seek``, then
    ``flow.step()``.  If the engine rolls the epoch back, every feed undoes its moves
    (:class:`~ddlab.sources.MoveController`)."""
    feeds = dict(state.feeds())
    mover = MoveController(state.flow, feeds)
    mover.fetch(moves)                 # the time below is the epoch's, not the fetch's
    start = time.perf_counter()
    report = mover.move(moves, seek)
    seconds = time.perf_counter() - start
    changes = {n: change_counts(h.view.changes()) for n, h in state.handles.items()}
    window = None
    if feeds:
        name, f = next(iter(feeds.items()))
        window = {"position": f.position, "steps": f.steps, "input": name, "span": ""}
        if f.position >= 0:
            start, end = f.window
            window.update(start=start, end=end, span=f.span())
    return EpochLine(report.epoch, seconds, changes, window, report)


def step_failed(err, done: list, epoch: int) -> SessionError:
    """The message for an epoch the engine rolled back after ``done`` good ones."""
    lost = getattr(err, "discarded_updates", None) or {}
    n = sum(len(v) for v in lost.values())
    before = f" after {plural(len(done), 'good epoch')}" if done else ""
    return SessionError(
        f"epoch {epoch} failed{before} and was rolled back: {first_line(err)}",
        f"Every collection reads as before it; its {plural(n, 'input update')} "
        f"{'were' if n != 1 else 'was'} discarded and the windows did not move.")
