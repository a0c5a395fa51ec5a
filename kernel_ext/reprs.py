"""Rich display for ddlab objects, kept out of the engine (which knows nothing of Jupyter).

Two kinds of things live here:

* render functions for engine objects (``View``, ``Collection``, ``Dataflow``, ``StepReport``)
  and for ``ddlab.sources`` objects (``LoadReport``, ``WindowBatches``, ``WindowFeed``),
  registered with IPython's display formatter by ``load_ipython_extension``;
* small result objects the magics return (``ShowResult``, ``TraceResult``, ``GraphResult``,
  ...), each with ``_repr_html_`` and a plain-text ``__repr__`` plus the data as attributes
  (``.frame``, ``.svg``...), so a magic's value is both displayed and usable from Python.

Every rendering is bounded: a one-line summary with the counts and the current epoch, then
at most ``limit`` rows; additions are green and retractions red wherever diffs are shown.
Styles are inline (they survive notebook sanitizers and static renderers).
"""
from __future__ import annotations

import math
from html import escape

import numpy as np
import pandas as pd

__all__ = ["frame_html", "render_view", "render_view_text", "render_collection",
           "render_dataflow", "render_step_report", "ShowResult", "ChangesResult",
           "TraceResult", "StatsResult", "GraphResult", "StepSummary", "Declared",
           "StatusResult", "lattice_frame"]

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


def _plus(n: int) -> str:
    return PLUS.format(int(n)) if n else f'<span style="{MUTED}">+0</span>'


def _minus(n: int) -> str:
    return MINUS.format(int(n)) if n else f'<span style="{MUTED}">\u22120</span>'


def _cell(v) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, (float, np.floating)):
        return escape(f"{v:.6g}")
    return escape(str(v))


def frame_html(frame: pd.DataFrame, limit: int = 20, *, diff: str | None = None,
               counts: tuple = (), floats: dict | None = None) -> str:
    """An HTML table of the first ``limit`` rows; rows coloured by the sign of ``diff`` (or of
    a negative ``multiplicity``); ``counts`` columns get thousands separators."""
    floats = floats or {}
    shown = frame.head(limit)
    # numbers align right, text (and tuples such as times) left
    left = {c: shown[c].dtype.kind not in "iufb" for c in shown.columns}
    head = "".join(f'<th style="{TH}{LEFT if left[c] else ""}">{escape(str(c))}</th>'
                   for c in shown.columns)
    rows = []
    sign_col = diff if diff in shown.columns else (
        "multiplicity" if "multiplicity" in shown.columns else None)
    for rec in shown.itertuples(index=False):
        vals = list(rec)
        style = ""
        if sign_col is not None:
            s = vals[list(shown.columns).index(sign_col)]
            if s is not None and not (isinstance(s, float) and math.isnan(s)):
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
            elif c in floats and v is not None and not (isinstance(v, float) and math.isnan(v)):
                text = floats[c].format(v)
            else:
                text = _cell(v)
            cells.append(f'<td style="{TD}{LEFT if left[c] else ""};{style}">{text}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = ""
    if len(frame) > limit:
        more = (f'<div style="{MUTED}">showing {limit:,} of {len(frame):,} rows</div>')
    return (f'<table style="{TABLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            f"</tbody></table>{more}")


def _wrap(summary: str, body: str = "") -> str:
    return f'<div class="ddlab" style="{BOX}"><div style="{HEAD}">{summary}</div>{body}</div>'


def _text_table(frame: pd.DataFrame, limit: int) -> str:
    if not len(frame):
        return ""
    text = frame.head(limit).to_string(index=False)
    if len(frame) > limit:
        text += f"\n... showing {limit:,} of {len(frame):,} rows"
    return text


def _sorted(frame: pd.DataFrame, by: list | None = None) -> pd.DataFrame:
    cols = by or [c for c in frame.columns if c not in ("multiplicity", "diff", "time")]
    if not len(frame) or not cols or len(frame) > 200_000:
        return frame.reset_index(drop=True)
    try:
        return frame.sort_values(cols, kind="stable").reset_index(drop=True)
    except TypeError:  # mixed types in a column
        return frame.reset_index(drop=True)


# -- views and collections ------------------------------------------------------------------

def _view_summary(name: str, frame: pd.DataFrame, epoch: int, pending: int = 0) -> tuple:
    n = len(frame)
    total = int(frame["multiplicity"].sum()) if n else 0
    neg = int((frame["multiplicity"] < 0).sum()) if n else 0
    cols = [c for c in frame.columns if c != "multiplicity"]
    parts = [f"{n:,} record{'s' if n != 1 else ''}"]
    if total != n:
        parts.append(f"total multiplicity {total:,}")
    if neg:
        parts.append(f"{neg:,} negative")
    parts.append(f"after epoch {epoch - 1}" if epoch else "no epoch completed yet")
    if pending:
        parts.append(f"{pending:,} updates queued for the next step")
    if cols:
        parts.append("fields " + ", ".join(map(str, cols)))
    return parts, n


def render_view(view, name: str | None = None, limit: int = 20, sort: list | None = None,
                pending: int = 0) -> str:
    frame = _sorted(view.to_pandas(), sort)
    label = name or _view_label(view)
    parts, n = _view_summary(label, frame, view.epoch, pending)
    summary = f"<b>{escape(label)}</b> \u00b7 " + " \u00b7 ".join(escape(p) for p in parts)
    body = frame_html(frame, limit, counts=("multiplicity",)) if n else (
        f'<div style="{MUTED}">(empty)</div>')
    return _wrap(summary, body)


def render_view_text(view, name: str | None = None, limit: int = 20, sort=None,
                     pending: int = 0) -> str:
    frame = _sorted(view.to_pandas(), sort)
    label = name or _view_label(view)
    parts, _ = _view_summary(label, frame, view.epoch, pending)
    table = _text_table(frame, limit)
    return f"{label}: " + ", ".join(parts) + (("\n" + table) if table else "")


def _view_label(view) -> str:
    return view.label  # the engine's own label, e.g. "arrange#23"


def render_collection(coll, session=None, limit: int = 20) -> str:
    """A declared collection shows its contents; any other one a summary and a hint."""
    name = session.find(coll) if session is not None else None
    if name is not None:
        h = session.state.handles[name]
        return render_view(h.view, name, limit, pending=session.pending(name)
                           if name in session.inputs else 0)
    cols = f" \u00b7 fields {', '.join(coll.columns)}" if coll.columns else ""
    stale = session is not None and coll.flow is not session.flow and any(
        n for n in session.names)
    note = ("it belongs to an earlier dataflow of this session (rebuilt since): re-run the "
            "cell that made it" if stale else
            "not declared: declare it with <code>%%dd NAME</code> to follow its contents, "
            "or call <code>.view()</code> before stepping")
    return _wrap(f"<b>Collection</b> {escape(coll.op.label)} in {escape(coll.scope.path)}"
                 f"{escape(cols)} \u00b7 {escape(type(coll).__name__)}",
                 f'<div style="{MUTED}">{note}</div>')


def render_collection_text(coll, session=None, limit: int = 20) -> str:
    name = session.find(coll) if session is not None else None
    if name is not None:
        h = session.state.handles[name]
        return render_view_text(h.view, name, limit)
    return repr(coll)


def render_dataflow(flow, session=None) -> str:
    ops, _ = flow.graph()
    loops = sorted({s for s in ops["scope"] if s != "root"})
    summary = (f"<b>Dataflow</b> {escape(flow.name)} \u00b7 {len(flow.inputs)} input"
               f"{'s' if len(flow.inputs) != 1 else ''} \u00b7 {len(ops):,} operators \u00b7 "
               f"{len(loops)} loop scope{'s' if len(loops) != 1 else ''} \u00b7 "
               f"{flow.epoch} epoch{'s' if flow.epoch != 1 else ''} completed \u00b7 "
               f"{flow.retained_updates():,} updates retained")
    body = ""
    if session is not None and flow is session.flow and session.names:
        body = StatusResult(session)._table_html()
    elif loops:
        body = f'<div style="{MUTED}">loops: {escape(", ".join(loops))}</div>'
    return _wrap(summary, body)


def render_step_report(report) -> str:
    return _wrap(f"<b>epoch {report.epoch}</b> \u00b7 {report.input_updates:,} input updates "
                 f"\u00b7 {report.updates_processed:,} updates through "
                 f"{report.operator_runs:,} operator runs \u00b7 "
                 f"{report.seconds * 1000:.1f} ms \u00b7 {report.retained_updates:,} retained")


def render_load_report(report) -> str:
    bad = report.malformed_total
    summary = (f"<b>loaded</b> {escape(str(report.source))} \u00b7 {report.rows_read:,} rows "
               f"read \u00b7 {report.rows_loaded:,} loaded \u00b7 "
               + (f'<span style="{DEL}">{bad:,} malformed</span>' if bad else "0 malformed"))
    rows = []
    for reason, n in sorted(report.malformed.items()):
        rows.append(f"<div>{escape(reason)}: {n:,}</div>")
    for ex in report.examples:
        rows.append(f'<div style="{MUTED}">{escape(ex["file"])}: {escape(repr(ex["row"]))} '
                    f'({escape(ex["reason"])})</div>')
    return _wrap(summary, "".join(rows))


def render_window_batches(batches) -> str:
    return _wrap(escape(repr(batches)))


def render_window_feed(feed) -> str:
    return _wrap(escape(repr(feed)))


# -- magic results --------------------------------------------------------------------------

class _Result:
    """Base: ``_repr_html_`` plus a text ``__repr__``."""

    def _repr_html_(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __str__(self) -> str:
        return self.__repr__()


class ShowResult(_Result):
    """``%dd show NAME``: the current contents (``.frame``: every record with multiplicity)."""

    def __init__(self, name, frame, epoch, limit=20, pending=0, sort=None):
        self.name, self.epoch, self.limit, self.pending = name, epoch, limit, pending
        self.frame = _sorted(frame, sort)

    def _repr_html_(self):
        parts, n = _view_summary(self.name, self.frame, self.epoch, self.pending)
        body = frame_html(self.frame, self.limit, counts=("multiplicity",)) if n else (
            f'<div style="{MUTED}">(empty)</div>')
        return _wrap(f"<b>{escape(self.name)}</b> \u00b7 " +
                     " \u00b7 ".join(escape(p) for p in parts), body)

    def __repr__(self):
        parts, _ = _view_summary(self.name, self.frame, self.epoch, self.pending)
        table = _text_table(self.frame, self.limit)
        return f"{self.name}: " + ", ".join(parts) + (("\n" + table) if table else "")


def _change_counts(frame) -> tuple[int, int]:
    if not len(frame):
        return 0, 0
    d = frame["diff"]
    return int((d > 0).sum()), int((d < 0).sum())


class ChangesResult(_Result):
    """``%dd changes NAME``: the updates of the last epoch (``.frame`` with a ``diff``)."""

    def __init__(self, name, frame, epoch, limit=20):
        self.name, self.epoch, self.limit = name, epoch, limit
        if len(frame):
            cols = [c for c in frame.columns if c != "diff"]
            frame = frame.assign(_neg=frame["diff"] < 0).sort_values(
                ["_neg"] + cols, kind="stable").drop(columns="_neg").reset_index(drop=True)
        self.frame = frame
        self.additions, self.retractions = _change_counts(frame)

    def _sample(self) -> pd.DataFrame:
        """At most ``limit`` rows with both signs represented (additions first)."""
        frame, limit = self.frame, self.limit
        if len(frame) <= limit or not self.additions or not self.retractions:
            return frame
        take_minus = min(self.retractions, max(limit // 2, limit - self.additions))
        take_plus = limit - take_minus
        plus = frame[frame["diff"] > 0].head(take_plus)
        minus = frame[frame["diff"] < 0].head(take_minus)
        return pd.concat([plus, minus]).reset_index(drop=True)
    def _summary(self, html: bool) -> str:
        when = f"in epoch {self.epoch - 1}" if self.epoch else "(no epoch completed yet)"
        if html:
            return (f"<b>{escape(self.name)}</b> changes {when}: {_plus(self.additions)} "
                    f"addition{'s' if self.additions != 1 else ''}, {_minus(self.retractions)} "
                    f"retraction{'s' if self.retractions != 1 else ''}")
        return (f"{self.name} changes {when}: +{self.additions:,} additions, "
                f"-{self.retractions:,} retractions")

    def _repr_html_(self):
        sample = self._sample()
        body = frame_html(sample, self.limit, diff="diff", counts=("diff",)) if len(
            self.frame) else f'<div style="{MUTED}">(no changes)</div>'
        if len(self.frame) > len(sample):
            body += (f'<div style="{MUTED}">showing {len(sample):,} of {len(self.frame):,} '
                     f'changes (.frame has them all)</div>')
        return _wrap(self._summary(True), body)

    def __repr__(self):
        sample = self._sample()
        table = _text_table(sample, self.limit)
        if len(self.frame) > len(sample):
            table += f"\n... showing {len(sample):,} of {len(self.frame):,} changes"
        return self._summary(False) + (("\n" + table) if table else "")


def lattice_frame(stats: pd.DataFrame, loop: str) -> pd.DataFrame:
    """Updates emitted inside ``loop`` (and loops nested in it) per epoch x loop iteration:
    the lattice trace of the Naiad report's Figures 14-15.  Rows: iterations; columns: epochs."""
    inside = stats[(stats["scope"] == loop) | stats["scope"].str.startswith(loop + "/")]
    depth = loop.count("/")       # "root/cc" -> the loop's coordinate is time[1]
    if not len(inside):
        return pd.DataFrame()
    coord = inside["time"].map(lambda t: t[depth] if len(t) > depth else None)
    coord = coord.map(lambda c: c[1] if isinstance(c, tuple) else c)   # prioritized: iteration
    grid = (inside.assign(iteration=coord).groupby(["iteration", "epoch"])["out"].sum()
            .unstack("epoch", fill_value=0).sort_index())
    grid.index = grid.index.astype(int)
    return grid


def lattice_html(grid: pd.DataFrame, loop: str, max_epochs: int = 16) -> str:
    if grid.empty:
        return ""
    grid = grid[grid.columns[-max_epochs:]]
    top = max(1, int(grid.values.max()))
    head = "".join(f'<th style="{TH}">{int(e)}</th>' for e in grid.columns)
    rows = []
    for it, row in grid.iterrows():
        cells = []
        for v in row.tolist():
            a = math.log1p(v) / math.log1p(top) if v else 0.0
            color = "#fff" if a > 0.6 else "#24292f"
            cells.append(f'<td style="{TD};text-align:center;background:rgba(9,105,218,'
                         f'{a:.2f});color:{color}">{int(v):,}</td>' if v else
                         f'<td style="{TD};text-align:center;color:#d0d7de">\u00b7</td>')
        rows.append(f'<tr><th style="{TH}">{it}</th>{"".join(cells)}</tr>')
    return (f'<div style="margin-top:6px"><b>lattice</b> of loop {escape(loop)}: updates per '
            f'iteration (rows) and epoch (columns)</div><table style="{TABLE}"><thead><tr>'
            f'<th style="{TH}">iter \\ epoch</th>{head}</tr></thead><tbody>{"".join(rows)}'
            f"</tbody></table>")


class TraceResult(_Result):
    """``%dd trace NAME``: the arrangement's updates grouped by time (``.history``,
    ``.by_time``) and, for loops upstream, the epoch x iteration lattice (``.lattices``)."""

    def __init__(self, name, history, epoch, lattices=None, limit=20):
        self.name, self.epoch, self.limit = name, epoch, limit
        self.history = history
        self.lattices = lattices or {}
        if len(history):
            h = history.assign(_time=history["time"].map(tuple))
            g = h.groupby("_time")["diff"]
            self.by_time = pd.DataFrame({
                "time": list(g.size().index),
                "updates": g.size().to_numpy(),
                "additions": g.apply(lambda d: int((d > 0).sum())).to_numpy(),
                "retractions": g.apply(lambda d: int((d < 0).sum())).to_numpy(),
            })
        else:
            self.by_time = pd.DataFrame(columns=["time", "updates", "additions", "retractions"])

    def _summary(self) -> str:
        n, t = len(self.history), len(self.by_time)
        return (f"trace of {self.name}: {n:,} update{'s' if n != 1 else ''} at {t:,} "
                f"time{'s' if t != 1 else ''} after epoch {self.epoch - 1} (times before the "
                f"current epoch are compacted into it)")

    def _recent(self) -> pd.DataFrame:
        if not len(self.history):
            return self.history
        keyed = self.history.assign(_t=self.history["time"].map(tuple))
        return keyed.sort_values("_t", ascending=False, kind="stable").drop(
            columns="_t").reset_index(drop=True)

    def _repr_html_(self):
        body = frame_html(self.by_time, self.limit, counts=("updates", "additions",
                                                           "retractions"))
        if len(self.history):
            body += ('<div style="margin-top:6px"><b>updates</b>, latest time first</div>'
                     + frame_html(self._recent(), self.limit, diff="diff", counts=("diff",)))
        for loop, grid in self.lattices.items():
            body += lattice_html(grid, loop)
        return _wrap(escape(self._summary()), body)

    def __repr__(self):
        out = [self._summary(), _text_table(self.by_time, self.limit)]
        for loop, grid in self.lattices.items():
            if not grid.empty:
                out.append(f"lattice of loop {loop} (updates; rows iteration, columns epoch):")
                out.append(grid.to_string())
        return "\n".join(x for x in out if x)


class StatsResult(_Result):
    """``%dd stats``: per-operator (or per-iteration) statistics of one epoch or all
    (``.frame`` the grouped table, ``.raw`` the rows of ``flow.stats()``)."""

    def __init__(self, frame, raw, by, epoch_label, limit=20):
        self.frame, self.raw, self.by, self.epoch_label, self.limit = frame, raw, by, epoch_label, limit

    def _summary(self) -> str:
        ops = self.raw["operator"].nunique() if len(self.raw) else 0
        ms = float(self.raw["seconds"].sum()) * 1000 if len(self.raw) else 0.0
        return (f"stats {self.epoch_label} by {self.by}: {int(self.raw['in'].sum()) if len(self.raw) else 0:,} "
                f"updates in, {int(self.raw['out'].sum()) if len(self.raw) else 0:,} out, "
                f"{ops:,} operators, {len(self.raw):,} runs, {ms:.1f} ms")

    def _repr_html_(self):
        frame = self.frame
        body = ""
        if self.by == "iteration" and len(frame):
            top = max(1, int(frame["out"].max()))
            bars = [f'<div style="background:#0969da;height:9px;width:'
                    f'{max(1, int(120 * math.log1p(v) / math.log1p(top)))}px"></div>' if v else ""
                    for v in frame["out"].tolist()]
            body = _add_bars(frame_html(frame, self.limit, counts=("in", "out", "runs"),
                                        floats={"ms": "{:.2f}"}), bars, self.limit)
        elif len(frame):
            body = frame_html(frame, self.limit, counts=("in", "out", "runs"),
                              floats={"ms": "{:.2f}"})
        else:
            body = f'<div style="{MUTED}">(no operator ran)</div>'
        return _wrap(escape(self._summary()), body)

    def __repr__(self):
        return self._summary() + "\n" + _text_table(self.frame, self.limit)


def _add_bars(table: str, bars: list, limit: int) -> str:
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


class GraphResult(_Result):
    """``%dd graph``: the dataflow picture (``.svg``), with ``.operators`` and ``.edges``."""

    def __init__(self, svg, operators, edges, epoch, title=""):
        self.svg, self.operators, self.edges, self.epoch, self.title = svg, operators, edges, epoch, title

    def _summary(self) -> str:
        ops = self.operators[self.operators["kind"] != "loop"]
        loops = sorted({s for s in ops["scope"] if s != "root"})
        return (f"{self.title}: {len(ops):,} operators, {len(self.edges):,} edges, "
                f"{len(loops)} loop scope{'s' if len(loops) != 1 else ''}; edge labels: updates "
                f"carried in epoch {self.epoch} ({int(self.edges['updates'].sum()):,} in all)")

    def _repr_html_(self):
        return _wrap(escape(self._summary()),
                     f'<div style="max-height:720px;overflow:auto;border:1px solid #eaeef2">'
                     f"{self.svg}</div>")

    def __repr__(self):
        return self._summary()


class StepSummary(_Result):
    """``%dd step`` / ``insert`` / ``remove``: one line per epoch (``.lines``: EpochLines)."""

    MAX_LINES = 12

    def __init__(self, result):
        self.result = result
        self.lines = result.lines
        self.note = result.note

    @property
    def epochs(self) -> int:
        return len(self.lines)

    def _visible(self):
        lines = self.lines
        if len(lines) <= self.MAX_LINES:
            return lines, 0
        k = self.MAX_LINES // 2
        return lines[:k] + [None] + lines[-k:], len(lines) - 2 * k

    def _line_html(self, line) -> str:
        parts = [f"<b>epoch {line.epoch}</b>"]
        w = line.window
        if w:
            parts.append(f"window {w['position']}/{w['steps'] - 1} {escape(w['span'])}"
                         if w["position"] >= 0 else "window empty")
        for n, (p, m) in line.changes.items():
            parts.append(f"{escape(n)} {_plus(p)} {_minus(m)}")
        parts.append(f"{line.seconds * 1000:.1f} ms")
        return "<div>" + " \u00b7 ".join(parts) + "</div>"

    def _total(self) -> str:
        secs = sum(l.seconds for l in self.lines)
        return f"{len(self.lines)} epochs in {secs * 1000:.0f} ms"

    def _repr_html_(self):
        shown, hidden = self._visible()
        body = "".join(self._line_html(l) if l is not None else
                       f'<div style="{MUTED}">\u2026 {hidden} more epochs \u2026</div>'
                       for l in shown)
        if len(self.lines) > 1:
            body += f'<div style="{MUTED}">{self._total()}</div>'
        if self.note:
            body += f'<div style="{MUTED}">{escape(self.note)}</div>'
        if not self.lines:
            body = f'<div style="{MUTED}">{escape(self.note or "nothing to do")}</div>'
        return f'<div class="ddlab" style="{BOX}">{body}</div>'

    def __repr__(self):
        shown, hidden = self._visible()
        out = [l.text() if l is not None else f"... {hidden} more epochs ..." for l in shown]
        if len(self.lines) > 1:
            out.append(self._total())
        if self.note:
            out.append(self.note)
        return "\n".join(out) or "nothing to do"


class Declared(_Result):
    """What a declaration built: ``%dd input`` or ``%%dd NAME`` (``.first``: the first
    step's summary, ``.show``: the current contents)."""

    def __init__(self, name, lines_html, lines_text, first=None, show=None, changes=None):
        self.name = name
        self._html, self._text = lines_html, lines_text
        self.first, self.show, self.changes = first, show, changes

    def _repr_html_(self):
        body = "".join(f"<div>{l}</div>" for l in self._html[1:])
        if self.first is not None:
            body += self.first._repr_html_()
        if self.show is not None:
            body += self.show._repr_html_()
        return _wrap(self._html[0], body)

    def __repr__(self):
        out = list(self._text)
        if self.first is not None:
            out.append(repr(self.first))
        if self.show is not None:
            out.append(repr(self.show))
        return "\n".join(out)


class StatusResult(_Result):
    """``%dd status``: the session's flow and declarations (``.flow``, ``.session``)."""

    def __init__(self, session):
        self.session = session
        self.flow = session.flow

    def rows(self) -> pd.DataFrame:
        from .session import format_duration

        s = self.session
        out = []
        for name in s.names:
            h = s.state.handles[name]
            frame_len = len(h.view)
            if name in s.inputs:
                d = s.inputs[name]
                what = "input"
                source = d.source
                if d.windowed:
                    b = d.batches
                    pos = h.feed.position
                    w = f"; window {format_duration(b.width)} step {format_duration(b.step)}"
                    source += (f"{w}, position {pos}/{len(b) - 1}" if pos >= 0 else
                               f"{w}, empty (position -1)")
            else:
                what = "derived"
                source = s.derived[name].body.strip().splitlines()[-1][:80]
            pending = s.pending(name) if name in s.inputs else 0
            out.append((name, what, ", ".join(h.collection.columns or []), frame_len, pending,
                        source))
        return pd.DataFrame(out, columns=["name", "kind", "fields", "records", "queued",
                                          "source"])

    def _summary(self) -> str:
        f = self.flow
        done = (f"after epoch {f.epoch - 1} ({f.epoch} epoch{'s' if f.epoch != 1 else ''} "
                f"completed)" if f.epoch else "no epoch completed yet")
        return (f"ddlab session: {done}, "
                f"{len(f.operators):,} operators, {f.retained_updates():,} updates retained, "
                f"{len(self.session.names)} declared collection"
                f"{'s' if len(self.session.names) != 1 else ''}")

    def _table_html(self) -> str:
        rows = self.rows()
        return frame_html(rows, 100, counts=("records", "queued")) if len(rows) else ""

    def _repr_html_(self):
        body = self._table_html() or (f'<div style="{MUTED}">nothing declared yet: '
                                      f"<code>%dd input NAME --from SOURCE</code></div>")
        return _wrap(escape(self._summary()), body)

    def __repr__(self):
        rows = self.rows()
        return self._summary() + ("\n" + rows.to_string(index=False) if len(rows) else "")
