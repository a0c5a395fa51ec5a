"""What ``%dd why``, ``why-loop`` and ``why-cost`` return: the engine's explanations
(``ddlab.engine.why``), shown as HTML and text and kept for Python (``.explanation``,
``.activities``, ``.cost`` hold the engine objects).

Why separate from ``results``: the three views share a vocabulary (derivation trees, input
tables, this move beside the previous one) that the other results do not.
"""
from __future__ import annotations

from html import escape

import pandas as pd

from .tables import ADD, MUTED, frame_html, minus, muted, plus, wrap

__all__ = ["WhyResult", "WhyLoopResult", "WhyCostResult", "tree_html"]


def _who(node) -> str:
    label = escape(node["label"])
    return f"<b>{escape(node['name'])}</b> {label}" if node.get("name") else label


def _time_text(t) -> str:
    if not t:
        return ""
    parts = [f"priority {c[0]}, iteration {c[1]}" if isinstance(c, tuple) else
             f"iteration {c}" for c in t]
    return " at " + "; ".join(parts)


def tree_html(nodes: list, max_depth: int = 14, max_children: int = 8) -> str:
    """A derivation (``Explanation.nodes()``) as nested, collapsible lists."""
    if not nodes:
        return ""
    by_id = {n["id"]: n for n in nodes}
    seen: set = set()

    def item(i, depth):
        n = by_id[i]
        recs = n["records"]
        what = escape(repr(recs[0])) if len(recs) == 1 else f"{len(recs)} records"
        note = f' <span style="{MUTED}">\u2190 {escape(n["note"])}</span>' if n["note"] and \
            n["kind"] != "input" else ""
        style = ADD if n["kind"] == "input" else ""
        head = (f'{_who(n)}{escape(_time_text(n["time"]))}: '
                f'<span style="{style}">{what}</span>{note}')
        if i in seen or depth >= max_depth:
            more = " (see above)" if i in seen and n["children"] else (
                " ..." if n["children"] else "")
            return f"<li>{head}{more}</li>"
        seen.add(i)
        kids = n["children"]
        inner = "".join(item(c, depth + 1) for c in kids[:max_children])
        if len(kids) > max_children:
            inner += f"<li>{muted(f'... {len(kids) - max_children} more')}</li>"
        if not inner:
            return f"<li>{head}</li>"
        return (f'<li><details open><summary>{head}</summary>'
                f'<ul style="margin:0;padding-left:18px">{inner}</ul></details></li>')

    return f'<ul style="margin:2px 0;padding-left:14px;list-style:none">{item(0, 0)}</ul>'


class _Result:
    def __str__(self) -> str:
        return self.__repr__()


class WhyResult(_Result):
    """``%dd why NAME RECORD``: ``.explanation`` (the engine's), ``.inputs`` (frames)."""

    def __init__(self, name, explanation, limit=20, others=()):
        self.name, self.explanation, self.limit = name, explanation, limit
        self.others = list(others)   # further records matching a key prefix, not explained
        self.inputs = explanation.inputs

    def _body(self, ex) -> str:
        parts = []
        for name, frame in ex.inputs.items():
            parts.append(f"<div>input <b>{escape(name)}</b>: {len(frame):,} record(s)</div>")
            parts.append(frame_html(frame, self.limit, counts=("multiplicity",)))
        tree = tree_html(ex.nodes())
        if tree:
            parts.append(f"<div style=\"margin-top:4px\">derivation</div>{tree}")
        return "".join(parts)

    def _repr_html_(self) -> str:
        ex = self.explanation
        body = self._body(ex) if ex.present else ""
        if ex.previous is not None:
            body += f"<div style=\"margin-top:6px\">{escape(ex.previous.summary())}</div>"
            body += self._body(ex.previous)
            for name, frame in ex.removed_by.items():
                body += (f"<div style=\"margin-top:4px\">removed by these changes of "
                         f"<b>{escape(name)}</b></div>")
                body += frame_html(frame, self.limit, diff="diff", counts=("diff",))
        for note in ex.notes:
            body += muted(escape(note))
        if self.others:
            body += muted(escape(f"{len(self.others)} more record(s) match: "
                                 f"{', '.join(map(repr, self.others[:5]))}"
                                 + (" ..." if len(self.others) > 5 else "")))
        summary = escape(ex.summary()).replace(escape(ex.collection), f"<b>{escape(self.name)}</b>",
                                               1)
        return wrap(f"why {summary} <span style=\"{MUTED}\">({ex.took()})</span>",
                    body)

    def __repr__(self) -> str:
        return repr(self.explanation).replace(self.explanation.collection, self.name, 1)


def _bar(value, top, width=120) -> str:
    w = 0 if not top else max(1, int(width * value / top)) if value else 0
    return f'<span style="display:inline-block;height:9px;width:{w}px;background:#8c6bb1"></span>'


class WhyLoopResult(_Result):
    """``%dd why-loop [NAME]``: ``.activities`` (one ``LoopActivity`` per loop)."""

    def __init__(self, activities, limit=20):
        self.activities, self.limit = list(activities), limit

    def _repr_html_(self) -> str:
        if not self.activities:
            return wrap("why-loop: no loop upstream")
        blocks = []
        for a in self.activities:
            it = a.iterations
            top = int(it["records"].max()) if len(it) else 0
            rows = "".join(
                f"<tr><td style=\"text-align:right;padding:0 8px\">{p}</td>"
                f"<td style=\"text-align:right;padding:0 8px\">{escape(str(c))}</td>"
                f"<td style=\"text-align:right;padding:0 8px\">{r:,}</td>"
                f"<td style=\"text-align:right;padding:0 8px\">{k:,}</td><td>{_bar(r, top)}</td>"
                f"</tr>" for p, c, r, k in it.head(self.limit).itertuples(index=False))
            th = "<th style=\"padding:0 8px;text-align:right\">"
            table = ("<table style=\"border-collapse:collapse\"><tr>" + th + "iteration</th>"
                     + th + "time</th>" + th + "records in difference</th>" + th + "keys</th>"
                     "<th></th>"
                     f"</tr>{rows}</table>")
            keys = a.top_keys.copy()
            keys["values"] = [", ".join(f"{c}: {v}" for c, v in seq[:6]) +
                              (" ..." if len(seq) > 6 else "") for seq in keys["values"]]
            blocks.append(f"<div style=\"margin-top:4px\">{escape(a.summary())}</div>"
                          + table + "<div>keys that kept changing longest</div>"
                          + frame_html(keys, self.limit)
                          + "".join(muted(escape(n)) for n in a.notes))
        return wrap(f"why-loop: epoch {self.activities[0].epoch}", "".join(blocks))

    def __repr__(self) -> str:
        return "\n\n".join(repr(a) for a in self.activities) or "why-loop: no loop upstream"


class WhyCostResult(_Result):
    """``%dd why-cost``: ``.cost`` (the engine's ``MoveCost``)."""

    def __init__(self, cost, limit=20):
        self.cost, self.limit = cost, limit

    def _table(self, frame: pd.DataFrame, key: str) -> str:
        cols = [key, "runs", "in", "out", "ms", "growth"]
        if self.cost.previous is not None:
            cols += ["previous ms", "previous in", "previous growth"]
        shown = frame[cols].copy()
        return frame_html(shown, self.limit, counts=("runs", "in", "out", "growth",
                                                     "previous in", "previous growth"),
                          floats={"ms": "{:.2f}", "previous ms": "{:.2f}"})

    def _repr_html_(self) -> str:
        c = self.cost
        check = ("rows add up to the step's measured totals" if c.adds_up() else
                 "rows do NOT add up to the step's totals")
        body = [muted(escape(check)), "<div>by declaration</div>",
                self._table(c.by_declaration, "declaration"),
                "<div style=\"margin-top:4px\">by operator (costliest first)</div>",
                self._table(c.by_operator, "label")]
        for e, frames in c.inputs.items():
            for name, frame in frames.items():
                adds = int((frame["diff"] > 0).sum())
                dels = int((frame["diff"] < 0).sum())
                body.append(f"<div style=\"margin-top:4px\">input changes of <b>{escape(name)}"
                            f"</b> in epoch {e}: {plus(adds)} {minus(dels)}</div>")
                body.append(frame_html(frame, min(self.limit, 10), diff="diff",
                                       counts=("diff",)))
        return wrap(f"why-cost: {escape(c.summary())}", "".join(body))

    def __repr__(self) -> str:
        return repr(self.cost)

