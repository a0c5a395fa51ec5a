"""The explorer's "why" panel: pick one of the window's largest components (and one of its
nodes) and see which input records put that node in it, from ``flow.why`` (the backward
tracing of Chothia et al., VLDB 2016: a ``min`` in a loop is explained by the path that carried
the winning label, not by the whole component).

An explanation is computed when a component is picked and again when the window settles
(Play stopped, or a moment without a move), never on every move while playing: between the
two it is marked stale and names the window it was computed for.  A component that is no
longer among the window's components says so.
"""
from __future__ import annotations

import html
import time

import ipywidgets as w
import pandas as pd

from .errors import error_html

__all__ = ["WhyPanel"]

_UNPICKED = ""    # the dropdown's "pick a component" entry (ipywidgets shows None as blank)
_NONE = ("pick a component", _UNPICKED)
_CSS = """<style>
.ddlab-why table{border-collapse:collapse;font-size:12px;margin:2px 0 6px 0}
.ddlab-why th,.ddlab-why td{padding:1px 6px;text-align:right;border-bottom:1px solid #eee}
.ddlab-why th{color:#555;font-weight:600}
.ddlab-why .muted{color:#777}
</style>"""


class WhyPanel:
    """``components``: the ``(node, component)`` Collection the components panel reads (why
    explains a collection, not a view); ``members``: its View.  ``rows``: edges shown."""

    def __init__(self, flow, components, members, *, noun: str = "component", rows: int = 25,
                 loop=lambda: None):
        self.flow, self.components, self.members = flow, components, members
        self.noun, self.rows, self.loop = noun, rows, loop
        self.pick = w.Dropdown(options=[_NONE], value=_UNPICKED, description="why is a node in",
                               style={"description_width": "initial"},
                               layout=w.Layout(width="250px"))
        self.node = w.Dropdown(options=[], description="node", disabled=True,
                               layout=w.Layout(width="150px"))
        self.output = w.HTML(layout=w.Layout(width="400px", max_height="360px",
                                             overflow="auto"))
        self.keys_button = w.Button(description="keys per iteration (this move)",
                                    tooltip="which keys' records changed at each iteration of "
                                            "the plotted loop in the last move (the lattice "
                                            "grid's last column; its cells' hover names the "
                                            "operators)", layout=w.Layout(width="250px"))
        self.keys_button.add_class("ddlab-why-keys")
        self.keys_output = w.HTML(layout=w.Layout(width="400px", max_height="300px",
                                                  overflow="auto"))
        self.widget = w.VBox([w.HBox([self.pick, self.node]), self.output, self.keys_button,
                              self.keys_output])
        self.widget.add_class("ddlab-why")
        self.explanation = None           # the last Explanation shown (None: none yet)
        self.shown_for: str | None = None  # the window it was computed on
        self.window = ""
        self._quiet = False
        self.activity = None             # the last flow.why_loop result shown
        self.last_error: BaseException | None = None   # the last failure (its traceback shown)
        self.keys_button.on_click(lambda _: self._safely_loop())
        self.pick.observe(self._on_pick, names="value")
        self.node.observe(self._on_node, names="value")

    # -- what the explorer calls ------------------------------------------------------------
    def offer(self, top_rows: list, window: str) -> None:
        """After a move: the components to pick from (``(component, size, ...)`` rows of the
        components panel, largest first); a shown explanation becomes stale."""
        self.window = window
        options = [_NONE] + [(f"{self.noun} {comp} ({size:,} nodes)", comp)
                             for comp, size, *_ in top_rows]
        chosen = self.pick.value
        if chosen != _UNPICKED and chosen not in [v for _, v in options]:
            options.append((f"{self.noun} {chosen} (not in the top list now)", chosen))
        if list(self.pick.options) != options:    # (a change is a message to the browser)
            self._quiet = True
            try:
                self.pick.options = options
                self.pick.value = chosen
            finally:
                self._quiet = False
        if self.activity is not None:     # another move: the last one's keys are not this one's
            self.activity, self.keys_output.value = None, ""
        if self.explanation is not None and self.shown_for != window:
            self.output.value = self._render(self.explanation, stale=True)

    def refresh(self) -> None:
        """When the window settles: explain the picked component again on this window."""
        if self.pick.value != _UNPICKED and self.shown_for != self.window:
            self._explain(self.pick.value, self.node.value, new_members=True)

    def explain_loop(self, loop: str | None = None):
        """The plotted loop's iterations in the last move: records in difference and the
        keys whose records changed at each (``flow.why_loop``); returns its LoopActivity."""
        loop = loop or self.loop()
        if loop is None:
            self.keys_output.value = "<div class='muted'>no loop is plotted</div>"
            return None
        start = time.perf_counter()
        activity = self.flow.why_loop(loop)[0]
        self.activity, self.last_error = activity, None
        self.keys_output.value = self._render_loop(activity, time.perf_counter() - start)
        return activity

    def _render_loop(self, a, seconds: float) -> str:
        rows = []
        for _, c, r, _k in a.iterations.itertuples(index=False):
            keys = a.keys_at.get(c, [])
            shown = ", ".join(html.escape(repr(k)) for k in keys[:8]) + (
                f" … {len(keys) - 8:,} more" if len(keys) > 8 else "")
            rows.append(f"<tr><td>{html.escape(str(c))}</td><td>{r:,}</td><td>{len(keys):,}</td>"
                        f"<td style='text-align:left'>{shown}</td></tr>")
        head = (f"<div><b>{html.escape(a.summary())}</b> <span class='muted'>"
                f"({seconds * 1000:.0f} ms; window {html.escape(self.window)})</span></div>")
        table = ("<table><tr><th>iteration</th><th>records in difference</th><th>keys</th>"
                 f"<th style='text-align:left'>which keys</th></tr>{''.join(rows)}</table>")
        return _CSS + head + table + "".join(f"<div class='muted'>{html.escape(n)}</div>"
                                             for n in a.notes)

    # -- reactions ----------------------------------------------------------------------------
    def _on_pick(self, change) -> None:
        if not self._quiet:
            self._safely(change["new"], None, new_members=True)

    def _on_node(self, change) -> None:
        if not self._quiet and change["new"] is not None:
            self._safely(self.pick.value, change["new"], new_members=False)

    def _safely_loop(self) -> None:
        try:
            self.explain_loop()
        except Exception as err:
            self.activity, self.last_error = None, err
            self.keys_output.value = error_html("why", err)

    def _safely(self, component, node, *, new_members: bool) -> None:
        """A widget callback: an error is one line in the panel with its traceback folded
        under it, never a traceback lost in the front end's log."""
        try:
            self._explain(component, node, new_members=new_members)
        except Exception as err:
            self.explanation, self.last_error = None, err
            self.output.value = error_html("why", err)

    # -- the work -----------------------------------------------------------------------------
    def members_of(self, component) -> list:
        """The component's nodes in the current window (sorted)."""
        frame = self.members.to_pandas()
        if not len(frame):
            return []
        nodes = frame[frame.iloc[:, 1] == component].iloc[:, 0]
        return sorted(nodes.tolist())

    def explain(self, component, node=None):
        """Explain ``(node, component)`` now (default node: the member farthest from the
        component's id in id order, a long path more often than not); returns the
        Explanation, or ``None`` when the component is not in this window."""
        return self._explain(component, node, new_members=True)

    def _explain(self, component, node, *, new_members: bool):
        if component is None or component == _UNPICKED:
            self.explanation, self.shown_for = None, None
            self.output.value = ""
            self._set_nodes([], None)
            return None
        members = self.members_of(component)
        if not members:
            self.explanation, self.shown_for = None, self.window
            self._set_nodes([], None)
            self.output.value = (f"<div class='muted'>{html.escape(self.noun)} {component} is "
                                 f"not among this window's components"
                                 f"{' (' + html.escape(self.window) + ')' if self.window else ''}"
                                 f".</div>")
            return None
        if node not in members:
            others = [m for m in members if m != component]
            node = others[-1] if others else members[0]
        if new_members:
            self._set_nodes(members, node)
        start = time.perf_counter()
        ex = self.flow.why(self.components, (node, component))
        self.explanation, self.shown_for, self.last_error = ex, self.window, None
        self.output.value = self._render(ex, time.perf_counter() - start)
        return ex

    def _set_nodes(self, members: list, node) -> None:
        self._quiet = True
        try:
            self.node.options = members[:500]
            self.node.value = node if node in members[:500] else None
            self.node.disabled = not members
        finally:
            self._quiet = False

    # -- rendering ----------------------------------------------------------------------------
    def _stale_note(self) -> str:
        return (f"<div style='color:#9a6700'>stale: computed on {html.escape(self.shown_for or '')};"
                f" recomputed for {html.escape(self.window)} when the window settles</div>")

    def _render(self, ex, seconds: float | None = None, stale: bool = False) -> str:
        node, component = ex.record
        head = (f"<div><b>why is node {html.escape(str(node))} in {html.escape(self.noun)} "
                f"{html.escape(str(component))}</b>"
                f"<span class='muted'> · window {html.escape(self.shown_for or '')}"
                f"{f' · {seconds * 1000:.0f} ms' if seconds is not None else ''}</span></div>")
        if stale:
            head = self._stale_note() + head
        if not ex.present:
            return _CSS + head + f"<div>{html.escape(ex.summary())}</div>"
        check = ("replaying the program from scratch on these records alone reproduces it"
                 if ex.verified else "not checked by a replay")
        parts = [_CSS, head, f"<div class='muted'>{ex.size:,} input record(s) suffice; {check}"
                       f" ({html.escape(ex.method)}).</div>"]
        for name, frame in ex.inputs.items():
            parts.append(f"<div>{html.escape(name)}: {len(frame):,}</div>")
            parts.append(_table(frame, self.rows))
        for note in ex.notes:
            parts.append(f"<div class='muted'>{html.escape(note)}</div>")
        return "".join(parts)


def _table(frame: pd.DataFrame, rows: int) -> str:
    shown = frame.drop(columns=[c for c in ("multiplicity",) if c in frame.columns]).head(rows)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in shown.itertuples(index=False))
    more = (f"<div class='muted'>… {len(frame) - rows:,} more</div>" if len(frame) > rows
            else "")
    return f"<table><tr>{head}</tr>{body}</table>{more}"
