"""The building blocks every ddlab display shares: inline styles, bounded tables, the box.

Why: views, changes, traces, stats and the session status all show a one-line summary and
at most ``limit`` rows, additions green and retractions red; one table function and one
set of styles keep them alike.  Styles are inline (they survive notebook sanitizers and
static renderers).
"""
from __future__ import annotations

import math
from html import escape

import numpy as np
import pandas as pd

__all__ = ["frame_html", "text_table", "wrap", "sorted_frame", "add_bars", "plus", "minus",
           "muted", "log_shade", "BOX", "TH", "TD", "TABLE", "ADD", "DEL", "MUTED"]

BOX = ("font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;"
       "line-height:1.45")
HEAD = "margin:2px 0 4px 0"
TABLE = "border-collapse:collapse;margin:2px 0;font-size:inherit"
TH = ("padding:1px 10px;text-align:right;border-bottom:1px solid #d0d7de;font-weight:600;"
      "background:#f6f8fa")
TD = "padding:1px 10px;text-align:right;border-bottom:1px solid #eaeef2"
LEFT = ";text-align:left"
ADD = "color:#1a7f37;background:#e6ffec"
DEL = "color:#cf222e;background:#ffebe9"
MUTED = "color:#57606a"
PLUS = f'<span style="{ADD};padding:0 3px">+{{:,}}</span>'
MINUS = f'<span style="{DEL};padding:0 3px">\u2212{{:,}}</span>'


def plus(n: int) -> str:
    """``+n`` in green (muted when zero)."""
    return PLUS.format(int(n)) if n else f'<span style="{MUTED}">+0</span>'


def minus(n: int) -> str:
    """``-n`` in red (muted when zero)."""
    return MINUS.format(int(n)) if n else f'<span style="{MUTED}">\u22120</span>'


def muted(text: str) -> str:
    """A grey line of already-escaped text."""
    return f'<div style="{MUTED}">{text}</div>'


def _cell(v) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, (float, np.floating)):
        return escape(f"{v:.6g}")
    return escape(str(v))


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def frame_html(frame: pd.DataFrame, limit: int = 20, *, diff: str | None = None,
               counts: tuple = (), floats: dict | None = None) -> str:
    """An HTML table of the first ``limit`` rows; rows coloured by the sign of ``diff`` (or of
    a negative ``multiplicity``); ``counts`` columns get thousands separators, ``floats``
    columns their format.

    >>> html = frame_html(pd.DataFrame({"x": [1, 2, 3], "diff": [1, -1, 1]}), 2, diff="diff")
    >>> html.count("<tr>"), "showing 2 of 3 rows" in html, DEL in html
    (3, True, True)
    """
    floats = floats or {}
    shown = frame.head(limit)
    # numbers align right, text (and tuples such as times) left
    left = {c: shown[c].dtype.kind not in "iufb" for c in shown.columns}
    head = "".join(f'<th style="{TH}{LEFT if left[c] else ""}">{escape(str(c))}</th>'
                   for c in shown.columns)
    rows = []
    sign_col = diff if diff in shown.columns else (
        "multiplicity" if "multiplicity" in shown.columns else None)
    sign_at = list(shown.columns).index(sign_col) if sign_col is not None else None
    for rec in shown.itertuples(index=False):
        vals = list(rec)
        style = ""
        if sign_at is not None and not _missing(vals[sign_at]):
            s = vals[sign_at]
            if s < 0:
                style = DEL
            elif s > 0 and sign_col == diff:
                style = ADD
        cells = []
        for c, v in zip(shown.columns, vals):
            if c in counts and isinstance(v, (int, np.integer)):
                text = f"{int(v):,}"
                if c == diff and v > 0:
                    text = "+" + text
                elif c == diff and v < 0:
                    text = "\u2212" + f"{-int(v):,}"
            elif c in floats and not _missing(v):
                text = floats[c].format(v)
            else:
                text = _cell(v)
            cells.append(f'<td style="{TD}{LEFT if left[c] else ""};{style}">{text}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = muted(f"showing {limit:,} of {len(frame):,} rows") if len(frame) > limit else ""
    return (f'<table style="{TABLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            f"</tbody></table>{more}")


def wrap(summary: str, body: str = "") -> str:
    """The ddlab box: a summary line (HTML) above a body (HTML)."""
    return f'<div class="ddlab" style="{BOX}"><div style="{HEAD}">{summary}</div>{body}</div>'


def text_table(frame: pd.DataFrame, limit: int) -> str:
    """The first ``limit`` rows as plain text, with a "showing" line when cut.

    >>> print(text_table(pd.DataFrame({"x": [1, 2, 3]}), 2))
     x
     1
     2
    ... showing 2 of 3 rows
    """
    if not len(frame):
        return ""
    text = frame.head(limit).to_string(index=False)
    if len(frame) > limit:
        text += f"\n... showing {limit:,} of {len(frame):,} rows"
    return text


def sorted_frame(frame: pd.DataFrame, by: list | None = None) -> pd.DataFrame:
    """Rows sorted by ``by`` (default: every field but multiplicity, diff and time); large or
    unsortable frames keep their order."""
    cols = by or [c for c in frame.columns if c not in ("multiplicity", "diff", "time")]
    if not len(frame) or not cols or len(frame) > 200_000:
        return frame.reset_index(drop=True)
    try:
        return frame.sort_values(cols, kind="stable").reset_index(drop=True)
    except TypeError:  # mixed types in a column
        return frame.reset_index(drop=True)


def add_bars(table: str, bars: list, limit: int) -> str:
    """Append a bar cell to each body row of a rendered table (bars are trusted markup)."""
    head_end = table.index("</tr></thead>")
    table = table[:head_end] + f'<th style="{TH}">out (log)</th>' + table[head_end:]
    parts = table.split("</tr>")
    # parts[0] is the header row; body rows follow
    out = [parts[0]]
    for i, chunk in enumerate(parts[1:]):
        if i < min(limit, len(bars)) and "<td" in chunk:
            chunk += f'<td style="{TD};text-align:left">{bars[i]}</td>'
        out.append(chunk)
    return "</tr>".join(out)


def log_shade(value: float, top: float) -> float:
    """0..1 on a log scale (so one huge cell does not wash out the others)."""
    return math.log1p(value) / math.log1p(max(1, top)) if value else 0.0
