"""What the magics return: small result objects, displayed and usable from Python.

Why: a magic's value is both shown (``_repr_html_``, a plain-text ``__repr__``) and kept
(``r = %dd show cc`` then ``r.frame``), so each result holds its data as attributes
(``.frame``, ``.svg``, ``.lines``...) and renders itself bounded: a one-line summary with the
counts and the epoch, then at most ``limit`` rows.
"""
from __future__ import annotations

from html import escape

import pandas as pd

from ..summaries import change_counts, trace_by_time
from .lattice import lattice_html
from .tables import (BOX, add_bars, frame_html, log_shade, minus, muted, plus,
                     sorted_frame, text_table, wrap)

__all__ = ["ShowResult", "ChangesResult", "TraceResult", "StatsResult", "GraphResult",
           "StepSummary", "Declared", "StatusResult", "ProgressResult"]


class _Result:
    """Base: ``_repr_html_`` plus a text ``__repr__``."""

    def _repr_html_(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __str__(self) -> str:
        return self.__repr__()


def _view_summary(frame: pd.DataFrame, epoch: int, pending: int = 0) -> list[str]:
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
    return parts


class ShowResult(_Result):
    """``%dd show NAME``: the current contents (``.frame``: every record with multiplicity)."""

    def __init__(self, name, frame, epoch, limit=20, pending=0, sort=None):
        self.name, self.epoch, self.limit, self.pending = name, epoch, limit, pending
        self.frame = sorted_frame(frame, sort)

    def _repr_html_(self):
        parts = _view_summary(self.frame, self.epoch, self.pending)
        body = frame_html(self.frame, self.limit, counts=("multiplicity",)) if len(
            self.frame) else muted("(empty)")
        return wrap(f"<b>{escape(self.name)}</b> \u00b7 " +
                    " \u00b7 ".join(escape(p) for p in parts), body)

    def __repr__(self):
        parts = _view_summary(self.frame, self.epoch, self.pending)
        table = text_table(self.frame, self.limit)
        return f"{self.name}: " + ", ".join(parts) + (("\n" + table) if table else "")


class ChangesResult(_Result):
    """``%dd changes NAME``: the updates of the last epoch (``.frame`` with a ``diff``)."""

    def __init__(self, name, frame, epoch, limit=20):
        self.name, self.epoch, self.limit = name, epoch, limit
        if len(frame):
            cols = [c for c in frame.columns if c != "diff"]
            frame = frame.assign(_neg=frame["diff"] < 0).sort_values(
                ["_neg"] + cols, kind="stable").drop(columns="_neg").reset_index(drop=True)
        self.frame = frame
        self.additions, self.retractions = change_counts(frame)

    def _sample(self) -> pd.DataFrame:
        """At most ``limit`` rows with both signs represented (additions first)."""
        frame, limit = self.frame, self.limit
        if len(frame) <= limit or not self.additions or not self.retractions:
            return frame
        take_minus = min(self.retractions, max(limit // 2, limit - self.additions))
        take_plus = limit - take_minus
        plus_rows = frame[frame["diff"] > 0].head(take_plus)
        minus_rows = frame[frame["diff"] < 0].head(take_minus)
        return pd.concat([plus_rows, minus_rows]).reset_index(drop=True)

    def _summary(self, html: bool) -> str:
        when = f"in epoch {self.epoch - 1}" if self.epoch else "(no epoch completed yet)"
        if html:
            return (f"<b>{escape(self.name)}</b> changes {when}: {plus(self.additions)} "
                    f"addition{'s' if self.additions != 1 else ''}, {minus(self.retractions)} "
                    f"retraction{'s' if self.retractions != 1 else ''}")
        return (f"{self.name} changes {when}: +{self.additions:,} additions, "
                f"-{self.retractions:,} retractions")

    def _repr_html_(self):
        sample = self._sample()
        body = frame_html(sample, self.limit, diff="diff", counts=("diff",)) if len(
            self.frame) else muted("(no changes)")
        if len(self.frame) > len(sample):
            body += muted(f"showing {len(sample):,} of {len(self.frame):,} changes (.frame "
                          f"has them all)")
        return wrap(self._summary(True), body)

    def __repr__(self):
        sample = self._sample()
        table = text_table(sample, self.limit)
        if len(self.frame) > len(sample):
            table += f"\n... showing {len(sample):,} of {len(self.frame):,} changes"
        return self._summary(False) + (("\n" + table) if table else "")


class TraceResult(_Result):
    """``%dd trace NAME``: the arrangement's updates grouped by time (``.history``,
    ``.by_time``) and, for loops upstream, the epoch x iteration lattice (``.lattices``:
    loop -> grid of :func:`~.lattice.lattice_grid`)."""

    def __init__(self, name, history, epoch, lattices=None, limit=20):
        self.name, self.epoch, self.limit = name, epoch, limit
        self.history = history
        self.lattices = lattices or {}
        self.by_time = trace_by_time(history)

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
        return wrap(escape(self._summary()), body)

    def __repr__(self):
        out = [self._summary(), text_table(self.by_time, self.limit)]
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
        raw = self.raw
        ops = raw["operator"].nunique() if len(raw) else 0
        ms = float(raw["seconds"].sum()) * 1000 if len(raw) else 0.0
        n_in = int(raw["in"].sum()) if len(raw) else 0
        n_out = int(raw["out"].sum()) if len(raw) else 0
        return (f"stats {self.epoch_label} by {self.by}: {n_in:,} updates in, {n_out:,} out, "
                f"{ops:,} operators, {len(raw):,} runs, {ms:.1f} ms")

    def _repr_html_(self):
        frame = self.frame
        if not len(frame):
            return wrap(escape(self._summary()), muted("(no operator ran)"))
        body = frame_html(frame, self.limit, counts=("in", "out", "runs"),
                          floats={"ms": "{:.2f}"})
        if self.by == "iteration":
            top = int(frame["out"].max())
            bars = [f'<div style="background:#0969da;height:9px;width:'
                    f'{max(1, int(120 * log_shade(v, top)))}px"></div>' if v else ""
                    for v in frame["out"].tolist()]
            body = add_bars(body, bars, self.limit)
        return wrap(escape(self._summary()), body)

    def __repr__(self):
        return self._summary() + "\n" + text_table(self.frame, self.limit)


class ProgressResult(_Result):
    """``%dd progress``: ``flow.progress()``'s rows (``.frame``), the pointstamps shown as
    ``time×count`` and the frontiers as lists of times."""

    def __init__(self, frame, title, limit=20):
        self.frame, self.title, self.limit = frame, title, limit

    def _shown(self) -> pd.DataFrame:
        f = self.frame
        return pd.DataFrame({
            "operator": f["label"], "scope": f["scope"], "worker": f["worker"],
            "pointstamps": [", ".join(f"{t}×{n}" for t, n in h.items()) or "none"
                            for h in f["holds"]],
            "frontier": [", ".join(map(str, fr)) or "(nothing can arrive)"
                         for fr in f["frontier"]]})

    def _summary(self) -> str:
        held = sum(sum(h.values()) for h in self.frame["holds"])
        workers = self.frame["worker"].nunique() if len(self.frame) else 0
        return (f"{self.title}: {held:,} pointstamps held at {len(self.frame):,} operators, "
                f"{workers} worker{'s' if workers != 1 else ''}")

    def _repr_html_(self):
        return wrap(escape(self._summary()), frame_html(self._shown(), self.limit))

    def __repr__(self):
        return self._summary() + "\n" + text_table(self._shown(), self.limit)


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
        return wrap(escape(self._summary()),
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
            parts.append(f"{escape(n)} {plus(p)} {minus(m)}")
        parts.append(f"{line.seconds * 1000:.1f} ms")
        return "<div>" + " \u00b7 ".join(parts) + "</div>"

    def _total(self) -> str:
        secs = sum(line.seconds for line in self.lines)
        return f"{len(self.lines)} epochs in {secs * 1000:.0f} ms"

    def _repr_html_(self):
        if not self.lines:
            body = muted(escape(self.note or "nothing to do"))
        else:
            shown, hidden = self._visible()
            body = "".join(self._line_html(line) if line is not None else
                           muted(f"\u2026 {hidden} more epochs \u2026") for line in shown)
            if len(self.lines) > 1:
                body += muted(self._total())
            if self.note:
                body += muted(escape(self.note))
        return f'<div class="ddlab" style="{BOX}">{body}</div>'

    def __repr__(self):
        shown, hidden = self._visible()
        out = [line.text() if line is not None else f"... {hidden} more epochs ..."
               for line in shown]
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
        body = "".join(f"<div>{line}</div>" for line in self._html[1:])
        if self.first is not None:
            body += self.first._repr_html_()
        if self.show is not None:
            body += self.show._repr_html_()
        return wrap(self._html[0], body)

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
        """One row per declared name: kind, fields, records, queued updates, source."""
        from ddlab.sources import format_duration

        s = self.session
        out = []
        for name in s.names:
            h = s.state.handles[name]
            if name in s.inputs:
                d = s.inputs[name]
                what, source = "input", d.source
                if h.feed is not None:
                    f = h.feed
                    w = (f"; window {format_duration(f.width)} step "
                         f"{format_duration(f.step_seconds)}")
                    source += (f"{w}, position {f.position}/{f.steps - 1}" if f.position >= 0
                               else f"{w}, empty (position -1)")
            else:
                what = "derived"
                source = s.derived[name].body.strip().splitlines()[-1][:80]
            pending = s.pending(name) if name in s.inputs else 0
            out.append((name, what, ", ".join(h.collection.columns or []), len(h.view), pending,
                        source))
        return pd.DataFrame(out, columns=["name", "kind", "fields", "records", "queued",
                                          "source"])

    def _summary(self) -> str:
        f = self.flow
        done = (f"after epoch {f.epoch - 1} ({f.epoch} epoch{'s' if f.epoch != 1 else ''} "
                f"completed)" if f.epoch else "no epoch completed yet")
        workers = (f", {f.workers} workers (processes; worker 0 is this kernel)"
                   if f.workers > 1 else "")
        return (f"ddlab session: {done}{workers}, "
                f"{len(f.operators):,} operators, {f.retained_updates():,} updates retained, "
                f"{len(self.session.names)} declared collection"
                f"{'s' if len(self.session.names) != 1 else ''}")

    def table_html(self) -> str:
        """The declarations table (empty string when nothing is declared)."""
        rows = self.rows()
        return frame_html(rows, 100, counts=("records", "queued")) if len(rows) else ""

    def _repr_html_(self):
        body = self.table_html() or muted("nothing declared yet: "
                                          "<code>%dd input NAME --from SOURCE</code>")
        return wrap(escape(self._summary()), body)

    def __repr__(self):
        rows = self.rows()
        return self._summary() + ("\n" + rows.to_string(index=False) if len(rows) else "")
