"""Progress for long operations (Spark's start, loads, windowing, the first computation on a
large input, many steps): ``ddlab.widgets.Progress``, public for notebooks and the magics.

In a Jupyter kernel a small ipywidgets row (a bar and a status text) appears under the cell and
is updated in place while the kernel works; widget updates reach the browser while the cell is
still running, so the row animates.  It is closed when the operation ends and its output
replaced by an empty one (so a saved notebook holds no dead widget): the magic's own result
then says what happened.  Operations shorter than ``min_seconds`` (0.3 s) never show it.
Outside a kernel (a terminal IPython, pytest's shell) nothing is shown.  A phase without a
known total shows an indeterminate bar and an elapsed-time counter that a small timer thread
refreshes twice a second.

No dependency beyond ipywidgets (already a ddlab requirement); ``tqdm`` is not needed.
"""
from __future__ import annotations

import threading
import time

__all__ = ["Progress", "NullProgress", "in_kernel"]


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where widgets render), False in a terminal or test shell."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


class NullProgress:
    """The same interface, doing nothing (terminals, tests, progress turned off)."""

    def phase(self, text: str, total: int | None = None) -> None:
        pass

    def advance(self, done: int, total: int | None = None, text: str | None = None) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Progress(NullProgress):
    """``with Progress("loading collegemsg") as p: p.phase("windowing"); p.advance(3, 10)``.

    ``force=True`` builds the widgets even outside a kernel (tests read ``.label.value`` and
    ``.bar.value``); ``min_seconds``: phases faster than this never show (no flicker).
    """

    def __init__(self, title: str, *, force: bool = False, min_seconds: float = 0.3):
        self.title = title
        self.enabled = force or in_kernel()
        self.min_seconds = min_seconds
        self.started = time.perf_counter()
        self.text = ""
        self.total: int | None = None
        self.done = 0
        self.box = self.bar = self.label = None
        self._shown = False
        self._handle = None
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self._lock = threading.Lock()
        if self.enabled:
            try:
                import ipywidgets as w
            except ImportError:  # pragma: no cover - ipywidgets is a dependency
                self.enabled = False
                return
            self.bar = w.IntProgress(value=0, min=0, max=1, bar_style="info",
                                     layout=w.Layout(width="240px"))
            self.label = w.HTML(value="")
            self.box = w.HBox([self.bar, self.label])
            self._timer = threading.Thread(target=self._tick, name="ddlab-progress", daemon=True)
            self._timer.start()

    # -- public API -------------------------------------------------------------------
    def phase(self, text: str, total: int | None = None) -> None:
        """Start a phase: ``total`` steps (a bar) or ``None`` (indeterminate, with a timer)."""
        with self._lock:
            self.text, self.total, self.done = text, total, 0
            self._render()

    def advance(self, done: int, total: int | None = None, text: str | None = None) -> None:
        with self._lock:
            self.done = done
            if total is not None:
                self.total = total
            if text is not None:
                self.text = text
            self._render()

    def close(self) -> None:
        self._stop.set()
        if self._timer is not None and self._timer.is_alive() and \
                self._timer is not threading.current_thread():
            self._timer.join(timeout=1.0)
        if self.box is not None:
            try:
                self.box.close()
                if self._handle is not None:
                    # leave an empty output, not a dead widget's "HBox(...)" text in the file
                    self._handle.update({"text/plain": ""}, raw=True)
            except Exception:  # pragma: no cover - a closed comm
                pass

    # -- internals --------------------------------------------------------------------
    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                self._render()

    def _render(self) -> None:
        if not self.enabled or self.bar is None:
            return
        elapsed = time.perf_counter() - self.started
        if not self._shown:
            if elapsed < self.min_seconds:
                return
            self._shown = True
            if in_kernel():
                from IPython.display import display

                self._handle = display(self.box, display_id=True)
        if self.total:
            self.bar.max = max(1, self.total)
            self.bar.value = min(self.done, self.total)
            self.bar.bar_style = "info"
            count = f" {self.done:,}/{self.total:,}"
        else:  # indeterminate: a full striped bar
            self.bar.max, self.bar.value = 1, 1
            self.bar.bar_style = "info"
            count = ""
        from html import escape

        self.label.value = (f"<span style='font-family:monospace'>&nbsp;{escape(self.title)}: "
                            f"{escape(self.text)}{count} &middot; {elapsed:.1f} s</span>")
