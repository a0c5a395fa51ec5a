"""A panel of printed lines and tables that a control redraws: one ``ipywidgets.HTML``, so the
kernel holds what it shows and an exported notebook keeps it.

Why not ``ipywidgets.Output``: what a ``with out:`` block prints is captured by the front end,
not the kernel, so an exported notebook shows an empty box where the lessons' tables were
(:mod:`.snapshot`); and nbclient (``jupyter nbconvert --execute`` with
``--ExecutePreprocessor.store_widget_state=False``, the README's export recipe) stops with a
``KeyError`` on such a block.  A panel's value is plain HTML, which the widget's static
snapshot carries into the export.

>>> import pandas as pd
>>> panel = Panel()
>>> panel.show("after 2 epochs:", pd.DataFrame({"node": [1], "label": [0]}))
>>> "after 2 epochs:" in panel.value and "<table" in panel.value
True
"""
from __future__ import annotations

import html

import ipywidgets as w

__all__ = ["Panel", "Bold", "as_html"]


class Panel(w.HTML):
    """An HTML widget whose :meth:`show` replaces what it shows, as ``clear_output`` and
    ``print``/``display`` inside ``with out:`` did."""

    def show(self, *parts) -> None:
        """Show ``parts`` one under the other (see :func:`as_html` for what a part may be)."""
        self.value = "".join(as_html(part) for part in parts)


def as_html(part) -> str:
    """One part as HTML: a string is a printed line (escaped, monospaced), a :class:`Bold` a
    heading; a DataFrame or a Styler its table (a DataFrame's default 0, 1, ... index left
    out); a list its parts one under the other; a tuple its parts side by side."""
    if isinstance(part, Bold):                     # (before str: a Bold is a str)
        return f"<b>{html.escape(part)}</b>"
    if isinstance(part, str):
        return f"<pre style='margin:2px 0;white-space:pre-wrap'>{html.escape(part)}</pre>"
    if isinstance(part, tuple):
        cells = "".join(f"<div>{as_html(p)}</div>" for p in part)
        return f"<div style='display:flex;flex-flow:row wrap;gap:4px 24px;align-items:flex-start'>{cells}</div>"
    if isinstance(part, list):
        return "".join(as_html(p) for p in part)
    to_html = getattr(part, "to_html", None)
    if to_html is None:
        raise TypeError(f"a panel shows strings, tables (DataFrame, Styler) and tuples of them "
                        f"side by side, not {type(part).__name__}")
    if _is_frame(part) and part.index.name is None and _plain_range(part.index):
        return to_html(index=False)
    return to_html()


class Bold(str):
    """A heading over a table: ``("…", [Bold("as emitted"), frame])``."""


def _is_frame(part) -> bool:
    import pandas as pd

    return isinstance(part, pd.DataFrame)


def _plain_range(index) -> bool:
    import pandas as pd

    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
