"""The explorer's status line: what the last move did and cost, beside what the same window
costs from scratch, in records and in seconds; or what went wrong, with the traceback folded
in an "error details" panel that is shown only while there is an error.

How the times are measured (wall clock, ``time.perf_counter``, in the kernel): a move's time
runs from the slider's (or Play's) request to the last panel redrawn, the engine's part being
the epoch alone; each from-scratch time is one run of that computation on the window's edges,
made when the window settled (building the fresh dataflow and loading the edges included):
the stateless line's numpy re-execution, the engine's incremental and prioritized runs, and
scipy's compiled components.
"""
from __future__ import annotations

import html
import re

import ipywidgets as w

from .errors import MINUS, first_line, traceback_text
from .references import REFERENCE_NAMES, SCIPY, References

__all__ = ["StatusLine", "milliseconds"]

PLUS = "#1a7f37"
_HOW = ("each from scratch run was made once, when the window settled, on this window's edges "
        "in this kernel (wall clock: building the dataflow and loading the edges included); "
        "the move's time runs from the request to the last panel redrawn, the engine's part "
        "is the epoch alone")


def milliseconds(seconds: float) -> str:
    """A duration as people compare them: ``0.8 ms``, ``12 ms``, ``3,400 ms``, ``12.5 s``.

    >>> milliseconds(0.0008), milliseconds(0.012), milliseconds(3.4), milliseconds(12.5)
    ('0.8 ms', '12 ms', '3,400 ms', '12.5 s')
    """
    ms = seconds * 1000
    if ms < 10:
        return f"{ms:.1f} ms"
    if seconds < 10:
        return f"{ms:,.0f} ms"
    return f"{seconds:.1f} s"


class StatusLine:
    """``widget``: the ``ddlab-status`` HTML line; ``panel``: the "error details" accordion
    (its ``details`` output holds the traceback), hidden while there is no error."""

    def __init__(self):
        self.widget = w.HTML(value="ready")
        self.widget.add_class("ddlab-status")
        self.details = w.Output()
        self.panel = w.Accordion(children=[self.details], titles=("error details",))
        self.panel.selected_index = None
        self.panel.add_class("ddlab-error-details")
        self._show_panel(False)

    @property
    def text(self) -> str:
        """The status line as plain text (one line per line of the widget)."""
        text = re.sub(r"<br\s*/?>", "\n", self.widget.value)
        return html.unescape(re.sub(r"<[^>]+>", "", text))

    def show_move(self, move: dict, *, references: References | None, loop: str | None,
                  compares: bool, pending: str, interval_ms: int) -> None:
        """The last move (``move``: the explorer's ``last_move``) and, when the explorer has
        a program to compare (``compares``), the same window from scratch (``references``,
        or ``pending`` says when they come)."""
        pos = move["position"]
        lines = [f"<span style='color:{PLUS}'>●</span> position {pos} · window "
                 f"{html.escape(move['window'])} · epoch {move['epoch']} · moved "
                 f"{pos - move['from']:+d}" + (f" · {move['changes']}" if move["changes"] else ""),
                 f"this move: {move['work']:,} records of work in "
                 f"{milliseconds(move['total_s'])} (engine {milliseconds(move['engine_s'])})"]
        if compares and loop is not None:
            lines.append(self._scratch(references, loop, pending))
        if move["merged_ticks"]:
            lines.append(f"<span style='color:#9a6700'>behind: {move['merged_ticks']} Play "
                         f"tick(s) arrived during the last move and were merged into this one "
                         f"(moves take longer than the {interval_ms} ms interval)</span>")
        self.widget.value = "<br>".join(lines)
        self._show_panel(False)

    @staticmethod
    def _scratch(refs: References | None, loop: str, pending: str) -> str:
        note = f" <span style='color:#777'>(loop {html.escape(loop)})</span>"
        if refs is None:
            return f"from scratch on this window: {pending}{note}"
        totals = refs.totals(loop)
        records = " / ".join(f"{totals[name]:,} {name}" for name in REFERENCE_NAMES)
        times = " / ".join(milliseconds(refs.timings[name]) for name in REFERENCE_NAMES)
        scipy = refs.timings.get(SCIPY)
        compiled = (f"; scipy's compiled {refs.algorithm_name}: {milliseconds(scipy)}"
                    if scipy is not None else "; scipy's compiled time: scipy is not installed")
        return (f"<span title='{html.escape(_HOW)}'>from scratch on this window: {records} "
                f"records in {times}{compiled}</span>{note}")

    def show_error(self, err: BaseException, doing: str, where: str) -> None:
        """``doing`` failed with ``err``: one red line (and ``where`` things stand), the
        traceback in the error details panel, which shows."""
        self.details.clear_output()
        self.details.append_stderr(traceback_text(err))
        self.show_problem(f"{doing} failed: {first_line(err)}; {where}")
        self._show_panel(True)

    def show_problem(self, text: str) -> None:
        """One red line (a request refused before anything ran: no traceback to show)."""
        self.widget.value = f"<span style='color:{MINUS}'>● {html.escape(text)}</span>"
        self._show_panel(False)

    def _show_panel(self, shown: bool) -> None:
        self.panel.layout.display = None if shown else "none"
        if not shown:
            self.panel.selected_index = None
