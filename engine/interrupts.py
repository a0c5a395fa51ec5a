"""Holding back Ctrl-C / Jupyter's stop button while an epoch commits.

Why: a rolled-back epoch is safe at any point (the inputs are the source of truth and every
operator restores its snapshot), and a committed one is safe; the few statements that turn the
first into the second (views take the epoch, statistics file it, ``flow.epoch`` advances,
subscribers' updates are staged with their epoch) must not be cut in half.  While they run a
SIGINT is only noted; it is raised as ``KeyboardInterrupt`` as soon as they are done.

Only the main thread can install signal handlers; elsewhere (and where Python's handler is
not installed) the guard does nothing, since no SIGINT can be delivered there either.
"""
from __future__ import annotations

import signal
import threading

# The C functions under ``signal``'s enum wrappers: every step installs a handler and restores
# the one before, and the wrappers' conversions (an exception raised and caught for a function
# handler) cost about 10 us of each step.
try:
    import _signal as _handlers
except ImportError:  # pragma: no cover - not CPython
    _handlers = signal


class DeferredInterrupts:
    """``start()`` notes SIGINTs instead of raising them; ``release()`` restores the handler
    and raises the noted interrupt (with ``note``) through it."""

    def __init__(self):
        self.pending = False
        self._previous = None
        self._active = False

    def _note(self, signum, frame) -> None:
        self.pending = True

    def start(self) -> "DeferredInterrupts":
        if self._active or threading.current_thread() is not threading.main_thread():
            return self
        previous = _handlers.getsignal(signal.SIGINT)
        if previous is None or previous in (signal.SIG_IGN,):
            return self  # installed from outside Python, or ignored: nothing to defer
        self._previous = previous
        _handlers.signal(signal.SIGINT, self._note)
        self._active = True
        return self

    def stop(self) -> bool:
        """Restore the previous handler; returns whether an interrupt came meanwhile."""
        if self._active:
            _handlers.signal(signal.SIGINT, self._previous)
            self._active = False
        return self.pending

    def release(self, note: str = "") -> None:
        """Restore the handler and deliver a noted interrupt the way it would have been."""
        if not self.stop():
            return
        self.pending = False
        handler = self._previous
        if handler is signal.default_int_handler or not callable(handler):
            err = KeyboardInterrupt()
            if note:
                err.add_note(note)
            raise err
        try:
            handler(signal.SIGINT, None)  # someone else's handler (IPython, a test runner)
        except BaseException as err:
            if note:
                err.add_note(note)
            raise
