"""The explorer: controls, results panel, iteration plot, lattice trace and latency plots in one
ipywidgets layout, driven by a :class:`~ddlab.sources.WindowFeed` (one epoch per move).

Why this shape: every move goes through :meth:`Explorer.move_to`, which brings the engine
from where it is straight to the latest target in one combined epoch (never a queue of stale
moves), then updates each panel once (one ``stream`` per plot source).  A move that fails (a
raising user function, a non-convergent loop) is rolled back by the engine; the feed returns
to its position, nothing is drawn, and the status line says what went wrong in one line.

The reference lines are always of the window the current move landed on: computing them
costs several moves, so they are computed when the window settles (no move for
``settle_ms``, or Play stopped) and kept per position; until then the plot and the status
line say they are pending, and lines of another window are never shown.
"""
from __future__ import annotations

import asyncio
import html
import re
import time
import traceback
from collections import OrderedDict

from ._deps import require_lab

require_lab()

import ipywidgets as w  # noqa: E402

from ddlab.engine import Collection, DataflowError, View  # noqa: E402

from .batched_bokeh import batched  # noqa: E402
from .controls import Controls  # noqa: E402
from .iterations import IterationPlot  # noqa: E402
from .latency import LatencyPlot  # noqa: E402
from .lattice import LatticePlot  # noqa: E402
from .options import ExplorerOptions  # noqa: E402
from .program import ComponentCollections, component_collections  # noqa: E402
from .references import REFERENCE_NAMES, References, window_references  # noqa: E402
from .results import MINUS, PLUS, ResultsPanel  # noqa: E402
from .why_panel import WhyPanel  # noqa: E402

__all__ = ["Explorer", "explore", "explore_graph"]

#: reference lines kept per window position (a revisited window shows them at once)
_KEPT_REFERENCES = 64
_BOKEH_LOADED = False


def _ensure_bokehjs() -> None:
    """Load BokehJS inline (no network) once per kernel, so a notebook needs no set-up cell."""
    global _BOKEH_LOADED
    if _BOKEH_LOADED:
        return
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a core dependency
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return  # not in a kernel: nothing would render BokehJS anyway
    from bokeh.io import output_notebook
    from bokeh.resources import INLINE

    output_notebook(INLINE, hide_banner=True)
    _BOKEH_LOADED = True


def _as_view(obj, what: str):
    """A View for ``obj`` (a View, or a Collection given a view now)."""
    if isinstance(obj, View):
        return obj
    if isinstance(obj, Collection):
        try:
            return obj.view(name=f"explorer view of {obj.name}")
        except DataflowError as err:
            raise DataflowError(
                f"explore: {what} is a Collection without a view and the flow has already "
                f"stepped ({err}). Pass its View instead (make it with .view() before the "
                f"first step).") from err
    raise TypeError(f"explore: {what} must be a Collection or a View, not {type(obj).__name__}")


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def _running_loop():
    """The kernel's event loop when called from inside it (a cell, a widget message), else
    ``None`` (a script or a test: the reference lines wait for :meth:`Explorer.settle`)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Explorer:
    """Slide a window and watch the results, the per-iteration differences (beside the same
    window from scratch), the lattice trace and the latency move.  Build it with
    :func:`explore` or :func:`explore_graph`.

    ``collections``: name -> Collection or View shown (the first is what the components
    panel sums up when there is one); ``program``: the :class:`ComponentCollections` of the
    components panel and the reference lines; ``loop``: the loop plotted (``"auto"``: the
    label propagation upstream); ``options``: :class:`ExplorerOptions`.
    """

    def __init__(self, feed, collections, *, program: ComponentCollections | None = None,
                 loop: str | None = "auto", options: ExplorerOptions | None = None):
        self.options = options if options is not None else ExplorerOptions()
        self.feed, self.flow = self._check_feed(feed)
        collections = self._named(collections)
        self.program = program
        self._check_flows(collections, program)
        self.views = {name: _as_view(obj, f"collection {name!r}")
                      for name, obj in collections.items()}
        panel = {role: _as_view(obj, role) for role, obj in
                 (program.parts().items() if program is not None else ())}
        self.window_view = panel.get("window")
        self.algorithm = program.algorithm if program is not None else None
        self.loops = self._upstream_loops(list(collections.values()) + [panel.get("components")])
        self.loop = self._chosen_loop(loop)
        self._build(panel)
        self._wire()
        self.moves = 0
        self.last_error: BaseException | None = None
        self.last_move: dict = {}
        self.references: OrderedDict[int, References] = OrderedDict()
        self._recent: list[tuple[int, int]] = []   # (epoch, position) of the last moves
        self._target: int | None = None
        self._busy = self._syncing = False
        self._settle_handle = None
        self._merged_ticks = 0
        self._start()

    # -- construction -------------------------------------------------------------------------
    @staticmethod
    def _check_feed(feed):
        if not hasattr(feed, "seek") or not hasattr(feed, "flow"):
            raise TypeError(f"explore: feed must be a WindowFeed, not {type(feed).__name__}")
        return feed, feed.flow

    @staticmethod
    def _named(collections) -> dict:
        if isinstance(collections, (Collection, View)):
            collections = {getattr(collections, "name", None) or collections.label: collections}
        if not isinstance(collections, dict) or not collections:
            raise TypeError("explore: collections must be a Collection, a View, or a non-empty "
                            "mapping name -> Collection/View")
        return collections

    def _check_flows(self, collections: dict, program) -> None:
        """Everything is checked before any view is made (a refused explorer adds nothing)."""
        given = [(f"collection {n!r}", o) for n, o in collections.items()]
        if program is not None:
            given += list(program.parts().items())
        for what, obj in given:
            if not isinstance(obj, (Collection, View)):
                raise TypeError(f"explore: {what} must be a Collection or a View, not "
                                f"{type(obj).__name__}")
            if isinstance(obj, Collection) and obj.flow is not self.flow:
                raise DataflowError(f"explore: {what} belongs to another Dataflow than the "
                                    f"feed's")

    def _chosen_loop(self, loop):
        if loop == "auto":
            return self._default_loop(self.loops)
        if loop is not None and loop not in self.flow.loops():
            raise ValueError(f"explore: loop {loop!r} is not a loop of this flow; its loops are "
                             f"{self.flow.loops()}")
        return loop

    def _build(self, panel: dict) -> None:
        """The panels and their layout."""
        o, program = self.options, self.program
        tables = dict(self.views)
        if panel.get("components") is not None:
            tables.pop(next(iter(tables)))   # the first collection is what the panel sums up
        self.controls = Controls(self.feed.steps, self.feed.position, interval_ms=o.interval_ms)
        self.results = ResultsPanel(
            tables, components=panel.get("components"), top_labels=panel.get("top_labels"),
            label_totals=panel.get("label_totals"),
            noun=program.noun if program is not None else "components",
            label_name=program.label_name if program is not None else "label",
            no_labels=program.no_labels if program is not None else "", top=o.top, rows=o.rows)
        comps = program.components if program is not None else None
        self.why = (WhyPanel(self.flow, comps, panel["components"], noun=self.results.noun[:-1]
                             if self.results.noun.endswith("s") else self.results.noun,
                             loop=lambda: self.loop)
                    if isinstance(comps, Collection) else None)
        self.iterations = IterationPlot(self.loop, history=o.history)
        self.lattice = LatticePlot(self.loop, epochs=o.lattice_epochs, cells=o.lattice_cells)
        self.latency = LatencyPlot(epochs=o.latency_epochs)
        choices = self.loops or ([self.loop] if self.loop else [])
        self.loop_select = w.Dropdown(options=choices,
                                      value=self.loop if self.loop in choices else None,
                                      description="loop", disabled=len(choices) < 2,
                                      layout=w.Layout(width="220px"),
                                      style={"description_width": "initial"})
        self.loop_select.add_class("ddlab-loop")
        self.controls.box.children[1].children += (self.loop_select,)
        self.status = w.HTML(value="ready")
        self.status.add_class("ddlab-status")
        self.details = w.Output()
        accordion = w.Accordion(children=[self.details], titles=("error details",))
        accordion.selected_index = None
        self.sources = {"iterations": self.iterations.current,
                        "iterations_history": self.iterations.past,
                        "references": self.iterations.references,
                        "lattice": self.lattice.source, "latency": self.latency.source}
        title = w.HTML(f"<b>ddlab explorer</b> <span style='color:#777'>{self.feed.steps:,} "
                       f"window positions; loop {html.escape(self.loop or 'none')}</span>")
        top = w.Layout(align_items="flex-start", flex_flow="row wrap")
        self.widget = w.VBox([title, self.controls.box, self.status,
                              w.HBox([w.VBox([self.results.widget] + ([self.why.widget]
                                                                       if self.why else [])),
                                      self.iterations.widget], layout=top),
                              w.HBox([self.lattice.widget, self.latency.widget], layout=top),
                              accordion])
        self.widget.add_class("ddlab-explorer")

    def _wire(self) -> None:
        c = self.controls
        c.slider.observe(self._on_slider, names="value")
        c.play.observe(self._on_play, names="value")
        c.play.observe(self._on_playing, names="playing")
        c.jump.on_click(lambda _: self.move_to(c.jump_to.value))
        c.reference.on_click(lambda _: self.settle())
        self.loop_select.observe(lambda ch: self.set_loop(ch["new"]), names="value")

    def _start(self) -> None:
        start = self.options.start
        if start is not None and self.feed.position < 0:
            self.move_to(start)
        else:
            self._sync_controls()
            if self.feed.position >= 0:
                self.results.update(self.feed.span())
                self._offer_why()
        if self.options.references_at_start and self.feed.position >= 0:
            self.settle()

    # -- public controls (the widgets of :class:`~ddlab.widgets.controls.Controls`) ---------
    slider = property(lambda self: self.controls.slider, doc="The window-position slider.")
    play = property(lambda self: self.controls.play, doc="Play / Stop: one move per tick.")
    speed = property(lambda self: self.controls.speed, doc="Milliseconds between Play ticks.")
    step_size = property(lambda self: self.controls.step_size, doc="Positions per Play tick.")
    direction = property(lambda self: self.controls.direction, doc="Forward (1) or back (-1).")
    jump = property(lambda self: self.controls.jump, doc="Go to ``jump_to`` in one epoch.")

    @property
    def position(self) -> int:
        return self.feed.position

    @property
    def status_text(self) -> str:
        """The status line as plain text (one line per line of the widget)."""
        text = re.sub(r"<br\s*/?>", "\n", self.status.value)
        return html.unescape(re.sub(r"<[^>]+>", "", text))

    def move_to(self, k: int) -> int:
        """Move the window to position ``k`` in one epoch (what the slider, Play and jump
        call).  While a move is running, a new target only replaces the pending one, so the
        explorer goes straight to the latest.  Returns the position reached."""
        k = int(k)
        if not -1 <= k < self.feed.steps:
            self._error_line(f"position {k} is out of range -1..{self.feed.steps - 1}")
            self._sync_controls()
            return self.feed.position
        self._target = k
        if self._busy:
            return self.feed.position
        self._busy = True
        try:
            while self._target is not None:
                target, self._target = self._target, None
                if target != self.feed.position and not self._move(target):
                    self._target = None
        finally:
            self._busy = False
        self._sync_controls()
        return self.feed.position

    def sync(self) -> None:
        """Catch up with an epoch closed elsewhere (``%dd step`` moving the same feed, rows
        inserted by hand): show the flow's last epoch and the feed's position."""
        last = self.flow.epoch - 1
        if last >= 0 and last != self.last_move.get("epoch"):
            log = self.flow.epoch_log(last=1)
            engine_s = float(log["seconds"].iloc[-1]) if len(log) else 0.0
            self._show(self.last_move.get("position", self.feed.position),
                       time.perf_counter() - engine_s, engine_s)
        self._sync_controls()

    def forward(self, n: int = 1) -> int:
        return self.move_to(min(self.feed.position + n, self.feed.steps - 1))

    def backward(self, n: int = 1) -> int:
        return self.move_to(max(self.feed.position - n, -1))

    def set_loop(self, loop: str) -> None:
        """Plot another loop (iteration curves and lattice), refilled from the kept stats;
        the reference lines follow (the kept ones hold every loop)."""
        if loop is None or loop == self.loop:
            return
        if loop not in self.flow.loops():
            raise ValueError(f"loop {loop!r} is not a loop of this flow: {self.flow.loops()}")
        self.loop = loop
        kept = set(self.flow.epoch_log()["epoch"])
        recent = [(e, p) for e, p in self._recent if e in kept]
        past = recent[-self.iterations.history:]
        self.iterations.set_loop(loop, self.flow, [(e, p, self.feed.span(p)) for e, p in past])
        self.lattice.set_loop(loop, self.flow, [e for e, _ in recent[-self.lattice.epochs:]])
        if self.loop_select.value != loop and loop in self.loop_select.options:
            self.loop_select.value = loop
        if self.last_move:   # this move's work, counted on the loop now shown
            self.last_move["work"] = sum(self.iterations.curve(self.flow,
                                                               self.last_move["epoch"]))
        self._draw_references()
        self._render_status()

    def settle(self) -> References | None:
        """Compute the window the current move landed on from scratch (stateless,
        incremental, prioritized) and draw those reference lines (what the explorer does when
        the window settles; kept per position).  ``None`` when there is nothing to compare."""
        pos = self.feed.position
        self._refresh_why()
        if self.algorithm is None or self.window_view is None or pos < 0:
            return None
        refs = self.references.get(pos)
        if refs is None:
            frame = self.window_view.to_pandas()
            frame = frame[frame["multiplicity"] > 0]
            edges = frame.iloc[:, :2].set_axis(["src", "dst"], axis=1)
            try:
                refs = window_references(edges, self.algorithm, position=pos,
                                         window=self.feed.span(pos))
            except Exception as err:  # a failing reference must not break the explorer
                self._error(err, "computing the reference lines")
                return None
            self.references[pos] = refs
            while len(self.references) > _KEPT_REFERENCES:
                self.references.popitem(last=False)
        self.references.move_to_end(pos)
        self._draw_references()
        self._render_status()
        return refs

    def _offer_why(self) -> None:
        if self.why is not None:
            self.why.offer(self.results.current or [], self.feed.span())

    def _refresh_why(self) -> None:
        if self.why is not None:
            try:
                self.why.refresh()
            except Exception as err:  # an explanation must not break the explorer
                self._error(err, "explaining the picked component")

    def compute_references(self) -> References | None:
        """Alias of :meth:`settle` (what the "from scratch" button does)."""
        return self.settle()

    def current_references(self) -> References | None:
        """The reference lines shown now: those of the current position, or ``None``."""
        return self.references.get(self.feed.position)

    # -- display --------------------------------------------------------------------------------
    def _ipython_display_(self):
        from IPython.display import display

        _ensure_bokehjs()
        self._refresh_plots()
        display(self.widget)

    def _repr_mimebundle_(self, **kwargs):
        _ensure_bokehjs()
        self._refresh_plots()
        return self.widget._repr_mimebundle_(**kwargs)

    def _refresh_plots(self) -> None:
        """A BokehModel's front end applies patches only once a view exists, so the moves
        made before the explorer is shown (the first window, at least) would be missing:
        re-serialize each plot's document into its render bundle before displaying."""
        for plot, model in ((self.iterations, self.iterations.figure),
                            (self.lattice, self.lattice.figure),
                            (self.latency, self.latency.layout)):
            plot.widget.update_from_model(model)

    def close(self) -> None:
        """Close every widget of the layout (front-end views go away, comms are released)."""
        if self._settle_handle is not None:
            self._settle_handle.cancel()
        todo = [self.widget]
        while todo:
            widget = todo.pop()
            todo.extend(getattr(widget, "children", ()))
            widget.close()

    # -- internals ------------------------------------------------------------------------------
    def _upstream_loops(self, objs) -> list[str]:
        """Every loop the shown collections depend on, in the flow's order (outermost first)."""
        ops, _ = self.flow.graph()
        scope_of = dict(zip(ops["id"], ops["scope"]))
        label_to_op = {op.label: op for op in self.flow.operators}
        scopes = set()
        for obj in objs:
            if obj is None:
                continue
            op = obj if isinstance(obj, Collection) else label_to_op.get(obj.label)
            if op is not None:
                scopes |= {scope_of[i] for i in self.flow.upstream(op)}
        return [path for path in self.flow.loops()
                if any(s == path or s.startswith(path + "/") for s in scopes)]

    @staticmethod
    def _default_loop(loops: list[str]) -> str | None:
        """The first loop; if it holds nested loops (SCC), its first nested one: the label
        propagation whose per-iteration work is the CIDR paper's Figure 1."""
        if not loops:
            return None
        inner = [p for p in loops if p.startswith(loops[0] + "/")]
        return inner[0] if inner else loops[0]

    def _on_slider(self, change) -> None:
        if not self._syncing:
            self._merged_ticks = 0
            self.move_to(change["new"])

    def _on_play(self, change) -> None:
        # Play counts ticks; Stop (or a repeat) resets the counter, which is not a tick.  While
        # a move runs, the front end sends only the latest count: ticks that arrive together
        # are merged into one move to where they all would have taken the window.
        if self._syncing or change["new"] <= change["old"]:
            return
        ticks = change["new"] - change["old"]
        target = self.controls.next_target(self.feed.position, ticks)
        if target == self.feed.position:
            self.controls.play.playing = False
            return
        self._merged_ticks = ticks - 1
        self.move_to(target)

    def _on_playing(self, change) -> None:
        if not change["new"]:
            self._schedule_settle(0)   # Play stopped: the window has settled

    def _move(self, target: int) -> bool:
        feed, flow = self.feed, self.flow
        start = time.perf_counter()
        before = feed.position
        try:
            feed.seek(target, combine=True)
            if not feed.auto_step:
                flow.step()
        except Exception as err:
            if not feed.auto_step:
                feed.undo()
            self._error(err, f"moving from position {before} to {target}")
            self.controls.play.playing = False
            return False
        self._show(before, start, time.perf_counter() - start)
        return True

    def _show(self, before: int, start: float, engine_s: float) -> None:
        """Update every panel and plot for the flow's last epoch (one stream per source)."""
        feed, flow = self.feed, self.flow
        epoch, pos = flow.epoch - 1, feed.position
        span = feed.span()
        previous = self.results.count if self.moves else None
        data = self.results.update(span)
        self._offer_why()
        # one patch message per plot for the whole move
        with batched(self.iterations.widget, self.lattice.widget, self.latency.widget):
            work = self.iterations.update(flow, epoch, pos, span)
            self._draw_references()
            self.lattice.update(flow, epoch)
            total_s = time.perf_counter() - start
            self.latency.update(flow, epoch, pos, total_s)
        self._recent.append((epoch, pos))
        if len(self._recent) > 2 * max(self.iterations.history, self.lattice.epochs):
            del self._recent[:len(self._recent) // 2]
        self.moves += 1
        self.last_error = None
        self.last_move = {"position": pos, "epoch": epoch, "from": before, "window": span,
                          "engine_s": engine_s, "total_s": total_s, "work": sum(work),
                          "merged_ticks": self._merged_ticks,
                          "changes": self._changes(data, previous)}
        self._merged_ticks = 0
        self._render_status()
        self._schedule_settle(self.options.settle_ms)

    def _changes(self, data: dict, previous) -> str:
        changes = []
        if "count" in data:
            delta = f" ({data['count'] - previous:+,d})" if previous is not None else ""
            changes.append(f"{data['count']:,} {html.escape(self.results.noun)}{delta}")
        for name, (_, _, ch) in data["tables"].items():
            plus = int((ch["diff"] > 0).sum()) if len(ch) else 0
            minus = int((ch["diff"] < 0).sum()) if len(ch) else 0
            changes.append(f"{html.escape(name)} <span style='color:{PLUS}'>+{plus:,}</span>"
                           f" <span style='color:{MINUS}'>-{minus:,}</span>")
        return " · ".join(changes)

    def _draw_references(self) -> None:
        """The reference lines of the current window if they are known, else none (with a
        note saying when they come)."""
        if self.algorithm is None or self.window_view is None or self.loop is None:
            self.iterations.clear_references("")
            return
        pos = self.feed.position
        refs = self.references.get(pos)
        if refs is None:
            self.iterations.clear_references(
                f"window {self.feed.span(pos)}; from scratch: {self._pending()}")
            return
        self.iterations.set_references({name: refs.curve(name, self.loop)
                                        for name in REFERENCE_NAMES}, pos, refs.window)

    def _pending(self) -> str:
        settle = self.options.settle_ms
        return ("computed when the window settles (Play stopped or "
                f"{settle / 1000:g} s without a move)" if settle is not None
                else "press “from scratch”")

    def _render_status(self) -> None:
        m = self.last_move
        if not m:
            return
        pos = m["position"]
        line = (f"<span style='color:{PLUS}'>●</span> position {pos} · window "
                f"{html.escape(m['window'])} · epoch {m['epoch']} · moved {pos - m['from']:+d}"
                + (f" · {m['changes']}" if m["changes"] else ""))
        work = (f"this move: {m['work']:,} records of work, {m['total_s'] * 1000:.0f} ms "
                f"(engine {m['engine_s'] * 1000:.0f} ms)")
        refs = self.references.get(pos)
        if self.algorithm is None or self.loop is None:
            scratch = ""
        elif refs is None:
            scratch = f"; from scratch on this window: {self._pending()}"
        else:
            totals = refs.totals(self.loop)
            scratch = ("; from scratch on this window: " + " / ".join(
                f"{totals[name]:,} {name}" for name in REFERENCE_NAMES) + " records")
        loop = f" <span style='color:#777'>(loop {html.escape(self.loop)})</span>" if self.loop \
            else ""
        lines = [line, work + scratch + loop]
        if m["merged_ticks"]:
            lines.append(f"<span style='color:#9a6700'>behind: {m['merged_ticks']} Play "
                         f"tick(s) arrived during the last move and were merged into this one "
                         f"(moves take longer than the {self.controls.play.interval} ms "
                         f"interval)</span>")
        self.status.value = "<br>".join(lines)

    def _schedule_settle(self, delay_ms: int | None) -> None:
        """Compute the references after ``delay_ms`` without a move (in a kernel)."""
        if delay_ms is None or self.options.settle_ms is None or self.algorithm is None:
            return
        loop = _running_loop()
        if loop is None:
            return
        if self._settle_handle is not None:
            self._settle_handle.cancel()
        self._settle_handle = loop.call_later(delay_ms / 1000, self._settle_if_quiet,
                                              self.moves)

    def _settle_if_quiet(self, moves: int) -> None:
        self._settle_handle = None
        if moves != self.moves or self._busy or self.controls.play.playing:
            return   # the window moved on (or is playing): not settled
        try:
            self.settle()
        except Exception as err:  # pragma: no cover - settle reports its own errors
            self._error(err, "computing the reference lines")

    def _sync_controls(self) -> None:
        pos = self.feed.position
        self._syncing = True
        try:
            if pos >= 0 and self.controls.slider.value != pos:
                self.controls.slider.value = pos
            self.controls.show_position(pos, self.feed.span())
        finally:
            self._syncing = False

    def _error(self, err: BaseException, doing: str) -> None:
        self.last_error = err
        self.details.clear_output()
        self.details.append_stderr("".join(traceback.format_exception(err)))
        self._error_line(f"{doing} failed: {_first_line(err)}; still at position "
                         f"{self.feed.position}, epoch {self.flow.epoch - 1}")

    def _error_line(self, text: str) -> None:
        self.status.value = f"<span style='color:{MINUS}'>● {html.escape(text)}</span>"

    def __repr__(self) -> str:
        return (f"<Explorer at position {self.feed.position}/{self.feed.steps - 1}, "
                f"{self.moves} moves, loop {self.loop}>")


_PANEL_PARTS = ("components", "top_labels", "label_totals", "window")


def explore(feed, collections, *, program: ComponentCollections | None = None,
            references: str | None = None, noun: str | None = None, label_name: str = "label",
            loop: str | None = "auto", options: ExplorerOptions | None = None,
            **kwargs) -> Explorer:
    """The explorer over ``feed`` (a :class:`~ddlab.sources.WindowFeed`) showing
    ``collections`` (a Collection or View, or a mapping name -> one).

    The components panel and the reference lines read ``program`` (what
    :func:`~ddlab.widgets.component_collections` declared), or its parts given one by one:
    ``components`` (``(node, component)``), ``top_labels`` (``(component, count, label)``),
    ``label_totals`` (``(component, total)``), ``window`` (a view of the windowed input) and
    ``references`` (``"scc"``/``"cc"``: the program the reference lines recompute).  ``loop``:
    the loop plotted (default: the label propagation upstream).  Any other keyword is an
    :class:`ExplorerOptions` field (``interval_ms``, ``settle_ms``, ``start``, ``top``, ...).

    >>> ex = explore(feed, {"scc": scc}, program=component_collections(edges, result=scc))  # doctest: +SKIP
    >>> ex.slider.value = 10; ex.settle(); ex.status.value                               # doctest: +SKIP
    """
    parts = {role: kwargs.pop(role) for role in _PANEL_PARTS if role in kwargs}
    options = (options or ExplorerOptions()).updated(**kwargs)
    if program is not None and (parts or references is not None):
        raise TypeError("explore: give program= or its parts (components=, top_labels=, "
                        "label_totals=, window=, references=), not both")
    if program is None and (parts or references is not None):
        program = ComponentCollections(references, noun=noun, label_name=label_name, **parts)
    elif program is not None and noun is not None:
        program.noun = noun
    return Explorer(feed, collections, program=program, loop=loop, options=options)


def explore_graph(batches, algorithm: str = "scc", *, labels="auto", name: str = "edges",
                  stats_epochs: int = 200, label_name: str = "label",
                  no_labels: str = "this data has no labels", **options) -> Explorer:
    """Everything in one call: a new flow with an input fed by ``batches`` (window batches
    from :func:`~ddlab.sources.window_batches`), the SCC or CC program with the components
    panel, and the explorer (its ``flow``, ``feed`` and ``program`` are attributes).  The
    flow keeps the statistics of the last ``stats_epochs`` epochs (the plots need the last
    few), so a long session's memory stays flat.  ``options``: :class:`ExplorerOptions`
    fields.

    >>> from ddlab.sources import load_dataset, window_batches        # doctest: +SKIP
    >>> ex = explore_graph(window_batches(load_dataset("collegemsg"), "7d", "1h"))  # doctest: +SKIP
    """
    import ddlab
    from ddlab.sources import WindowFeed

    flow = ddlab.Dataflow(f"explore {algorithm}", stats_epochs=stats_epochs)
    edges = flow.input(name, columns=list(batches.columns))
    program = component_collections(edges, algorithm, labels=labels, label_name=label_name,
                                    no_labels=no_labels)
    feed = WindowFeed(batches, edges, flow, step=False)
    return Explorer(feed, {algorithm: program.result}, program=program,
                    options=ExplorerOptions().updated(**options))
