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


class _Held:
    """The state of :func:`held` (one per process: only the main thread handles signals)."""
    depth = 0
    pending = False
    previous = None


def _note_held(signum, frame) -> None:
    _Held.pending = True


class held:
    """``with held():`` -- Ctrl-C waits until the block is done, then is raised (through the
    handler that was installed before, as it would have been).  Nesting is cheap (a counter).

    Why a Python handler rather than ``pthread_sigmask``: a mask holds the signal back from
    the main thread only, and in a Jupyter kernel (or any process with another thread alive)
    the kernel then delivers the process-directed SIGINT of the Stop button to that other
    thread; CPython still runs the handler in the main thread at its next bytecode, inside the
    block.  A handler that only notes the signal works whichever thread the kernel picks.
    Outside the main thread, or where Python's handler is not installed, it does nothing
    (no handler of ours would run there either)."""

    __slots__ = ("_mine",)

    def __enter__(self) -> "held":
        self._mine = False
        if _Held.depth:
            _Held.depth += 1
            self._mine = True
            return self
        if threading.current_thread() is not threading.main_thread():
            return self
        previous = _handlers.getsignal(signal.SIGINT)
        if previous is None or previous is signal.SIG_IGN or previous is signal.SIG_DFL:
            return self
        _Held.previous, _Held.pending = previous, False
        _handlers.signal(signal.SIGINT, _note_held)
        _Held.depth = 1
        self._mine = True
        return self

    def __exit__(self, *exc) -> None:
        if not self._mine:
            return
        _Held.depth -= 1
        if _Held.depth:
            return
        previous, _Held.previous = _Held.previous, None
        _handlers.signal(signal.SIGINT, previous)
        if _Held.pending:
            _Held.pending = False
            if exc[0] is None:  # (an exception on its way out goes first; the Ctrl-C is dropped)
                if callable(previous):
                    previous(signal.SIGINT, None)
                else:  # pragma: no cover - only callables are installed by held
                    raise KeyboardInterrupt
