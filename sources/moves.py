"""Moving window feeds: one epoch per move, all or nothing, and a timer for when they settle.

Why one place: the explorer (slider, Play, jump) and the magics (``%dd step``) both move one
or more :class:`~ddlab.sources.WindowFeed` s and close one epoch.  If the engine rolls that
epoch back (a raising user function, a loop that does not converge, Ctrl-C), every feed must
return to the position it had, or the feeds and the engine disagree from then on.  Work too
costly for every move (recomputing a window from scratch) waits until no move came for a while:
the settle timer, which needs a running event loop (a Jupyter kernel) and does nothing
elsewhere (a script calls the work itself).
"""
from __future__ import annotations

import asyncio

__all__ = ["MoveController", "running_loop"]


def running_loop():
    """The event loop running this code (a kernel cell or widget callback), else ``None``."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class MoveController:
    """Moves ``feeds`` (name -> WindowFeed of ``flow``) one epoch at a time.

    :meth:`move` stages every feed's move and closes one epoch; if anything fails, every feed
    undoes what it staged and the error propagates (the engine has rolled the epoch back).
    Feeds that close their own epochs (``step=True``) are moved alone: nothing can share their
    epochs.  :meth:`settle_after` calls back once no move came for a while.

    >>> mover = MoveController(flow, {"edges": feed})      # doctest: +SKIP
    >>> mover.move(seek=40)                                # one epoch to position 40  # doctest: +SKIP
    """

    def __init__(self, flow, feeds: dict):
        self.flow, self.feeds = flow, dict(feeds)
        stepping = [name for name, feed in self.feeds.items() if feed.auto_step]
        if stepping and len(self.feeds) > 1:
            raise ValueError(f"feed(s) {stepping} close their own epochs (step=True) and cannot "
                             f"share an epoch with {sorted(set(self.feeds) - set(stepping))}")
        self.moves = 0
        self._settle = None

    def move(self, moves: dict | None = None, seek: int | None = None):
        """One epoch: each named feed moves one position (``moves``: name -> +1 or -1), or
        every feed goes to ``seek`` (clamped to its last position) in one combined step.
        Returns the epoch's StepReport (``None`` for a feed that steps itself).  A pending
        settle is cancelled: the window moved on."""
        moves = moves or {}
        self.cancel_settle()
        self.fetch(moves)          # every batch first: a failing fetch stages nothing
        try:
            for name, direction in moves.items():
                feed = self.feeds[name]
                (feed.forward if direction > 0 else feed.backward)(1)
            if seek is not None:
                for feed in self.feeds.values():
                    feed.seek(min(seek, feed.steps - 1), combine=True)
            report = None if self._self_stepping() else self.flow.step()
        except BaseException:
            for feed in self.feeds.values():
                feed.undo()
            raise
        self.moves += 1
        return report

    def fetch(self, moves: dict) -> None:
        """Fetch the batches ``moves`` will push, without moving (a caller timing the epoch
        alone fetches first; the feeds' batches keep what was fetched)."""
        for name, direction in moves.items():
            self.feeds[name].fetch(direction)

    def _self_stepping(self) -> bool:
        return any(feed.auto_step for feed in self.feeds.values())

    # -- the settle timer ---------------------------------------------------------------------
    def settle_after(self, delay_ms: int, callback) -> bool:
        """Call ``callback()`` once ``delay_ms`` pass without a :meth:`move` or another
        :meth:`settle_after` (the last one wins).  Only inside a running event loop; returns
        whether it was scheduled."""
        self.cancel_settle()
        loop = running_loop()
        if loop is None:
            return False
        self._settle = loop.call_later(delay_ms / 1000, self._settled, callback)
        return True

    @property
    def settle_pending(self) -> bool:
        return self._settle is not None

    def cancel_settle(self) -> None:
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None

    def _settled(self, callback) -> None:
        self._settle = None
        callback()
