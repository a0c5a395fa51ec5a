"""The results panel: components with their size and top label (what entered and left the top
list on this move highlighted), or a bounded live table with additions and retractions.

Everything is read from views (``to_pandas``, ``changes``); the panel keeps only the previous
move's top list, so going back to a window renders the same panel as before.
"""
from __future__ import annotations

import html

import ipywidgets as w
import numpy as np
import pandas as pd

__all__ = ["ResultsPanel", "component_summary", "PLUS", "MINUS"]

PLUS, MINUS = "#1a7f37", "#cf222e"   # additions green, retractions red (as in the reprs)

_CSS = """<style>
.ddlab-results table{border-collapse:collapse;font-size:12px;margin:2px 0 6px 0}
.ddlab-results th,.ddlab-results td{padding:1px 6px;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
.ddlab-results th{color:#555;font-weight:600}
.ddlab-results tr.in td{background:#dafbe1}
.ddlab-results tr.out td{color:#cf222e;text-decoration:line-through}
.ddlab-results .muted{color:#777}
</style>"""


def component_summary(components: pd.DataFrame, top_labels: pd.DataFrame | None, top: int,
                      label_totals: pd.DataFrame | None = None) -> tuple[int, int, pd.DataFrame]:
    """``(number of components, nodes in them, the ``top`` largest)`` from the components view
    ``(node, component, multiplicity)``, the top-labels view ``(component, count, label,
    multiplicity)`` and the label totals ``(component, total, multiplicity)`` (each a
    DataFrame or a view's ``to_arrays()``); the largest come with ``size``, ``label``,
    ``count`` and ``total`` (the component's labelled records: the top label's share is
    count / total) columns, ties by component id."""
    count, nodes, rows = _top_rows(components, top_labels, top, label_totals)
    return count, nodes, pd.DataFrame(rows, columns=TOP_COLUMNS)


#: The columns of :func:`component_summary`'s top list (the fields of each panel row).
TOP_COLUMNS = ["component", "size", "label", "count", "total"]


def _top_rows(components, top_labels, top: int, label_totals) -> tuple[int, int, list]:
    """:func:`component_summary` with the top list as row tuples: numpy and lists, no
    DataFrame (the panel runs this on every move)."""
    comp = _column(components, 1) if _rows(components) else np.zeros(0, np.int64)
    ids, sizes = np.unique(comp, return_counts=True)
    order = np.lexsort((ids, -sizes))[:top]          # largest first, then smallest id
    top_ids = ids[order].tolist()
    n = len(top_ids)
    counts, labels, totals_of = [None] * n, [None] * n, [None] * n
    if top_labels is not None and _rows(top_labels) and n:
        where = {c: i for i, c in enumerate(top_ids)}
        for c, k, lab in zip(_column(top_labels, 0).tolist(), _column(top_labels, 1).tolist(),
                             _column(top_labels, 2).tolist()):
            i = where.get(c)
            if i is not None and counts[i] is None:
                counts[i], labels[i] = k, lab
        if label_totals is not None and _rows(label_totals):
            totals = dict(zip(_column(label_totals, 0).tolist(),
                              _column(label_totals, 1).tolist()))
            for i, c in enumerate(top_ids):
                if counts[i] is not None and totals.get(c):
                    totals_of[i] = int(totals[c])
    rows = list(zip(top_ids, sizes[order].tolist(), labels, counts, totals_of))
    return len(ids), int(len(comp)), rows


def _column(table, j: int) -> np.ndarray:
    """Field ``j`` of a DataFrame or of a view's ``to_arrays()`` dict."""
    if isinstance(table, dict):
        return np.asarray(list(table.values())[j])
    return table.iloc[:, j].to_numpy()


def _rows(table) -> int:
    if isinstance(table, dict):
        return len(next(iter(table.values()))) if table else 0
    return len(table)


class ResultsPanel:
    """The ``ddlab-results`` HTML widget and what it renders."""

    def __init__(self, views: dict, *, components=None, top_labels=None, label_totals=None,
                 noun: str = "components", label_name: str = "label",
                 no_labels: str = "this data has no labels", top: int = 10, rows: int = 12):
        self.views = dict(views)
        self.components, self.top_labels, self.label_totals = components, top_labels, label_totals
        self.noun, self.label_name, self.no_labels = noun, label_name, no_labels
        self.top, self.rows = top, rows
        self.widget = w.HTML(layout=w.Layout(width="400px", max_height="520px",
                                             overflow="auto"))
        self.widget.add_class("ddlab-results")
        self.current: list | None = None   # the top list shown now: (component, size, label, count)
        self.count = 0

    # -- reading ---------------------------------------------------------------------------
    def read(self) -> dict:
        """What the panel shows for the flow's current state (no widget change): ``count``,
        ``nodes``, ``top`` (:func:`component_summary`'s DataFrame) and ``tables``."""
        out = self._read()
        if "top_rows" in out:
            out["top"] = pd.DataFrame(out.pop("top_rows"), columns=TOP_COLUMNS)
        return out

    def _read(self) -> dict:
        out = {"tables": {}}
        if self.components is not None:
            out["count"], out["nodes"], out["top_rows"] = self._component_summary()
        for name, view in self.views.items():
            out["tables"][name] = (len(view), view.to_pandas(limit=self.rows),
                                   view.changes())
        return out

    def _component_summary(self):
        """:func:`_top_rows` of the views, read as arrays (no DataFrame: every move)."""
        comps = self.components.to_arrays() or {}
        labels = self.top_labels.to_arrays() if self.top_labels is not None else None
        totals = self.label_totals.to_arrays() if self.label_totals is not None else None
        return _top_rows(comps, labels, self.top, totals)

    # -- rendering -------------------------------------------------------------------------
    def update(self, span: str = "") -> dict:
        """Re-read the views and render; returns what it read (as :meth:`read`, with the top
        list as row tuples under ``top_rows`` instead of a DataFrame under ``top``)."""
        data = self._read()
        parts = [_CSS]
        if self.components is not None:
            parts.append(self._components_html(data, span))
        for name, (n, sample, changes) in data["tables"].items():
            parts.append(_table_html(name, n, sample, changes, self.rows))
        self.widget.value = "".join(parts)
        return data

    def _components_html(self, data: dict, span: str) -> str:
        rows = data["top_rows"]
        before = self.current if self.current is not None else rows
        now = {r[0] for r in rows}
        entered = now - {r[0] for r in before}
        left = [r for r in before if r[0] not in now]
        self.current, self.count = rows, data["count"]
        has_labels = self.top_labels is not None
        head = (f"<div><b>{data['count']:,}</b> {html.escape(self.noun)} "
                f"<span class='muted'>({data['nodes']:,} nodes in them"
                f"{'; ' + html.escape(span) if span else ''})</span></div>")
        if not has_labels:
            head += (f"<div class='muted ddlab-no-labels'>top {html.escape(self.label_name)}: "
                     f"{html.escape(self.no_labels)}</div>")
        if not rows and not left:
            return head + "<div class='muted'>no components in this window</div>"
        name = html.escape(self.label_name)
        cols = "<th>#</th><th>component</th><th>size</th>" + (
            f"<th>top {name}</th><th>share</th>" if has_labels else "")
        body = []
        for i, row in enumerate(rows):
            cls = " class='in' title='entered the top list'" if row[0] in entered else ""
            body.append(f"<tr{cls}><td>{i + 1}</td>{self._cells(row, has_labels)}</tr>")
        for row in left:
            body.append(f"<tr class='out' title='left the top list'><td>–</td>"
                        f"{self._cells(row, has_labels)}</tr>")
        return head + _LEGEND + f"<table><tr>{cols}</tr>{''.join(body)}</table>"

    def changes_line(self, data: dict, previous: int | None) -> str:
        """One line of what this move changed (for the status line): the number of
        components (and its change from ``previous``), each table's additions and
        retractions; ``data`` is what :meth:`update` returned."""
        changes = []
        if "count" in data:
            delta = f" ({data['count'] - previous:+,d})" if previous is not None else ""
            changes.append(f"{data['count']:,} {html.escape(self.noun)}{delta}")
        for name, (_, _, ch) in data["tables"].items():
            plus = int((ch["diff"] > 0).sum()) if len(ch) else 0
            minus = int((ch["diff"] < 0).sum()) if len(ch) else 0
            changes.append(f"{html.escape(name)} <span style='color:{PLUS}'>+{plus:,}</span>"
                           f" <span style='color:{MINUS}'>-{minus:,}</span>")
        return " · ".join(changes)

    @staticmethod
    def _cells(row, has_labels: bool) -> str:
        comp, size, label, count, total = row
        cells = f"<td>{_fmt(comp)}</td><td>{size:,}</td>"
        if has_labels:
            if _missing(count):
                share = _fmt(None)
            elif not _missing(total) and total:
                share = f"{count / total:.0%} <span class='muted'>({int(count):,} of {int(total):,})</span>"
            else:
                share = f"{int(count):,}"
            cells += f"<td>{_fmt(label)}</td><td>{share}</td>"
        return cells


_LEGEND = ("<div class='muted'>largest first; <span style='background:#dafbe1'>new in the "
           "list</span>, <span style='color:#cf222e;text-decoration:line-through'>left it</span>"
           " on this move</div>")


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "<span class='muted'>–</span>"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return f"{value}"
    return html.escape(str(value))


def _table_html(name: str, n: int, sample: pd.DataFrame, changes: pd.DataFrame, rows: int) -> str:
    plus = int((changes["diff"] > 0).sum()) if len(changes) else 0
    minus = int((changes["diff"] < 0).sum()) if len(changes) else 0
    head = (f"<div><b>{html.escape(name)}</b>: {n:,} records; this move "
            f"<span style='color:{PLUS}'>+{plus:,}</span> "
            f"<span style='color:{MINUS}'>-{minus:,}</span></div>")
    parts = [head]
    if len(changes):
        shown = changes.head(rows)
        hdr = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
        body = []
        for rec in shown.itertuples(index=False):
            colour = PLUS if rec[-1] > 0 else MINUS
            sign = "+" if rec[-1] > 0 else ""
            cells = "".join(f"<td>{_fmt(v)}</td>" for v in rec[:-1])
            body.append(f"<tr style='color:{colour}'>{cells}<td>{sign}{rec[-1]}</td></tr>")
        more = f"<div class='muted'>… {len(changes) - rows:,} more changes</div>" \
            if len(changes) > rows else ""
        parts.append(f"<table><tr>{hdr}</tr>{''.join(body)}</table>{more}")
    if len(sample):
        hdr = "".join(f"<th>{html.escape(str(c))}</th>" for c in sample.columns)
        body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in rec) + "</tr>"
                       for rec in sample.itertuples(index=False))
        more = f"<div class='muted'>first {len(sample)} of {n:,}</div>" if n > len(sample) else ""
        parts.append(f"<div class='muted'>contents</div><table><tr>{hdr}</tr>{body}</table>{more}")
    return "".join(parts)
