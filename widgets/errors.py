"""How a widget reports a failure: one line saying what failed, with the traceback kept beside
it (folded), so a bug behind a panel can still be read and reported.

Why a module: the explorer's status line and the why panel report failures of callbacks that
run inside widget events, where an exception would otherwise end in the front end's log.
"""
from __future__ import annotations

import html
import traceback

__all__ = ["first_line", "traceback_text", "error_html"]

MINUS = "#cf222e"   # the explorer's colour for retractions and errors


def first_line(err: BaseException) -> str:
    """``"Type: first line of the message"``.

    >>> first_line(ValueError("bad row\\nmore detail"))
    'ValueError: bad row'
    """
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def traceback_text(err: BaseException) -> str:
    """The whole traceback, as Python prints it."""
    return "".join(traceback.format_exception(err))


def error_html(doing: str, err: BaseException) -> str:
    """One red line (``doing`` failed: the error's first line) and the traceback folded
    under it."""
    return (f"<div style='color:{MINUS}'>{html.escape(doing)} failed: "
            f"{html.escape(first_line(err))}</div>"
            f"<details><summary style='color:#777'>traceback</summary>"
            f"<pre style='font-size:11px;white-space:pre-wrap'>"
            f"{html.escape(traceback_text(err))}</pre></details>")
