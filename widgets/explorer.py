"""The explorer: controls, results panel, iteration plot, lattice trace and latency plots in one
ipywidgets layout, driven by a :class:`~ddlab.sources.WindowFeed` (one epoch per move).

Why this shape: every move goes through :meth:`Explorer.move_to`, which brings the engine
from where it is straight to the latest target in one combined epoch (never a queue of stale
moves), then updates each panel once (one ``stream`` per plot source).  A move that fails (a
raising user function, a non-convergent loop) is rolled back by the engine; the feed returns
to its position, nothing is drawn, and the status line says what went wrong in one line.
"""
from __future__ import annotations

import html
import time
import traceback
from collections import OrderedDict

import ipywidgets as w

from ddlab.engine import Collection, DataflowError, View

from .controls import Controls
from .iterations import IterationPlot
from .latency import LatencyPlot
from .lattice import LatticePlot
from .program import ALGORITHMS, component_collections, graph_references
from .results import MINUS, PLUS, ResultsPanel

__all__ = ["Explorer", "explore", "explore_graph"]

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


class Explorer:
    """Slide a window and watch the results, the per-iteration differences, the lattice trace
    and the latency move.  Build it with :func:`explore`."""

    def __init__(self, feed, collections, *, components=None, top_labels=None, window=None,
                 references=None, loop="auto", noun: str | None = None, top: int = 10,
                 rows: int = 12, history: int = 20, lattice_epochs: int = 60,
                 lattice_cells: int = 4000, latency_epochs: int = 300, interval_ms: int = 400,
                 start: int | None = 0, reference_at_start: bool = True,
                 spark_stateless: bool = False):
        if not hasattr(feed, "seek") or not hasattr(feed, "flow"):
            raise TypeError(f"explore: feed must be a WindowFeed, not {type(feed).__name__}")
        self.feed, self.flow = feed, feed.flow
        if isinstance(collections, (Collection, View)):
            collections = {getattr(collections, "name", None) or collections.label: collections}
        if not isinstance(collections, dict) or not collections:
            raise TypeError("explore: collections must be a Collection, a View, or a non-empty "
                            "mapping name -> Collection/View")
        given = [(f"collection {n!r}", o) for n, o in collections.items()] + [
            (what, o) for what, o in (("components", components), ("top_labels", top_labels),
                                      ("window", window)) if o is not None]
        for what, obj in given:   # check everything before making any view
            if not isinstance(obj, (Collection, View)):
                raise TypeError(f"explore: {what} must be a Collection or a View, not "
                                f"{type(obj).__name__}")
            if isinstance(obj, Collection) and obj.flow is not self.flow:
                raise DataflowError(f"explore: {what} belongs to another Dataflow than the "
                                    f"feed's")
        self.views = {name: _as_view(obj, f"collection {name!r}")
                      for name, obj in collections.items()}
        comp_view = _as_view(components, "components") if components is not None else None
        top_view = _as_view(top_labels, "top_labels") if top_labels is not None else None
        self.window_view = _as_view(window, "window") if window is not None else None
        if isinstance(references, str):
            if noun is None and references in ALGORITHMS:
                noun = ALGORITHMS[references][1]
            references = graph_references(references, spark=spark_stateless)
        self.references_fn = references
        self.loops = self._upstream_loops(collections, components)
        if loop == "auto":
            loop = self._default_loop(self.loops)
        elif loop is not None and loop not in self.flow.loops():
            raise ValueError(f"explore: loop {loop!r} is not a loop of this flow; its loops are "
                             f"{self.flow.loops()}")
        self.loop = loop
        tables = dict(self.views)
        if comp_view is not None:
            tables.pop(next(iter(tables)))   # the first collection is what the panel sums up
        self.controls = Controls(feed.steps, feed.position, interval_ms=interval_ms)
        self.results = ResultsPanel(tables, components=comp_view, top_labels=top_view,
                                    noun=noun or "components", top=top, rows=rows)
        self.iterations = IterationPlot(self.loop, history=history)
        self.lattice = LatticePlot(self.loop, epochs=lattice_epochs, cells=lattice_cells)
        self.latency = LatencyPlot(epochs=latency_epochs)
        options = self.loops or ([loop] if loop else [])
        self.loop_select = w.Dropdown(options=options, value=loop if loop in options else None,
                                      description="loop", disabled=len(options) < 2,
                                      layout=w.Layout(width="220px"),
                                      style={"description_width": "initial"})
        self.loop_select.add_class("ddlab-loop")
        self.controls.box.children[1].children += (self.loop_select,)
        self._recent: list[tuple[int, int]] = []   # (epoch, position) of the last moves
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
        self.widget = w.VBox([
            title, self.controls.box, self.status,
            w.HBox([self.results.widget, self.iterations.widget],
                   layout=w.Layout(align_items="flex-start")),
            w.HBox([self.lattice.widget, self.latency.widget],
                   layout=w.Layout(align_items="flex-start")),
            accordion,
        ])
        self.widget.add_class("ddlab-explorer")
        self.moves = 0
        self.last_error: BaseException | None = None
        self.last_move: dict = {}
        self.reference_curves: OrderedDict = OrderedDict()
        self._target: int | None = None
        self._busy = False
        self._syncing = False
        c = self.controls
        c.slider.observe(self._on_slider, names="value")
        c.play.observe(self._on_play, names="value")
        c.jump.on_click(lambda _: self.move_to(c.jump_to.value))
        c.reference.on_click(lambda _: self.compute_references())
        self.loop_select.observe(lambda ch: self.set_loop(ch["new"]), names="value")
        if start is not None and self.feed.position < 0:
            self.move_to(start)
        else:
            self._sync_controls()
            if self.feed.position >= 0:
                self.results.update(self.feed.span())
        if reference_at_start and self.references_fn is not None and self.window_view is not None:
            self.compute_references()

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
        """Plot another loop (iteration curves and lattice), refilled from the kept stats."""
        if loop is None or loop == self.loop:
            return
        if loop not in self.flow.loops():
            raise ValueError(f"loop {loop!r} is not a loop of this flow: {self.flow.loops()}")
        self.loop = loop
        had_references = bool(len(self.iterations.references.data["xs"]))
        kept = set(self.flow.epoch_log()["epoch"])
        recent = [(e, p) for e, p in self._recent if e in kept]
        self.iterations.set_loop(loop, self.flow, [e for e, _ in recent[-self.iterations.history:]],
                                 [p for _, p in recent[-self.iterations.history:]])
        self.lattice.set_loop(loop, self.flow, [e for e, _ in recent[-self.lattice.epochs:]])
        if self.loop_select.value != loop and loop in self.loop_select.options:
            self.loop_select.value = loop
        self.reference_curves.clear()   # they were of the previous loop
        if had_references:
            self.compute_references()

    def compute_references(self) -> dict | None:
        """Compute the current window from scratch (incremental, prioritized, stateless) and
        draw those reference lines; cached per position."""
        if self.references_fn is None or self.window_view is None:
            self._error_line("no reference lines: give explore() references= and window=")
            return None
        pos = self.feed.position
        if pos not in self.reference_curves:
            frame = self.window_view.to_pandas()
            frame = frame.rename(columns={frame.columns[0]: "src", frame.columns[1]: "dst"})
            frame = frame[frame["multiplicity"] > 0]
            try:
                curves = self.references_fn(frame, self.loop)
            except Exception as err:  # a failing reference must not break the explorer
                self._error(err, "computing the reference lines")
                return None
            self.reference_curves[pos] = curves
            while len(self.reference_curves) > 32:
                self.reference_curves.popitem(last=False)
        curves = self.reference_curves[pos]
        self.iterations.set_references(curves, pos)
        return curves

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
        todo = [self.widget]
        while todo:
            widget = todo.pop()
            todo.extend(getattr(widget, "children", ()))
            widget.close()

    # -- internals ------------------------------------------------------------------------------
    def _upstream_loops(self, collections, components) -> list[str]:
        """Every loop the shown collections depend on, in the flow's order (outermost first)."""
        ops, _ = self.flow.graph()
        scope_of = dict(zip(ops["id"], ops["scope"]))
        label_to_op = {op.label: op for op in self.flow.operators}
        scopes = set()
        for obj in list(collections.values()) + [components]:
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
            self.move_to(change["new"])

    def _on_play(self, change) -> None:
        # a tick counts up; Stop (or a repeat) resets the counter, which is not a tick
        if self._syncing or self._busy or change["new"] <= change["old"]:
            return
        target = self.controls.next_target(self.feed.position)
        if target == self.feed.position:
            self.controls.play.playing = False
            return
        self.move_to(target)

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
        epoch = flow.epoch - 1
        pos = feed.position
        span = feed.span()
        previous = self.results.count if self.moves else None
        data = self.results.update(span)
        self.iterations.update(flow, epoch, pos)
        self.lattice.update(flow, epoch)
        total_s = time.perf_counter() - start
        self.latency.update(flow, epoch, pos, total_s)
        self._recent.append((epoch, pos))
        if len(self._recent) > 2 * max(self.iterations.history, self.lattice.epochs):
            del self._recent[:len(self._recent) // 2]
        self.moves += 1
        self.last_error = None
        tables = data["tables"]
        changes = []
        if "count" in data:
            delta = f" ({data['count'] - previous:+,d})" if previous is not None else ""
            changes.append(f"{data['count']:,} {html.escape(self.results.noun)}{delta}")
        for name, (n, _, ch) in tables.items():
            plus = int((ch["diff"] > 0).sum()) if len(ch) else 0
            minus = int((ch["diff"] < 0).sum()) if len(ch) else 0
            changes.append(f"{html.escape(name)} <span style='color:{PLUS}'>+{plus:,}</span>"
                           f" <span style='color:{MINUS}'>-{minus:,}</span>")
        self.last_move = {"position": pos, "epoch": epoch, "from": before,
                          "engine_s": engine_s, "total_s": total_s}
        self.status.value = (
            f"<span style='color:{PLUS}'>●</span> position {pos} {html.escape(span)} · "
            f"epoch {epoch} · moved {pos - before:+d} · " + " · ".join(changes) +
            f" · engine {engine_s * 1000:.1f} ms · total {total_s * 1000:.1f} ms")

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


def explore(feed, collections, **options) -> Explorer:
    """The explorer over ``feed`` (a :class:`~ddlab.sources.WindowFeed`) showing
    ``collections`` (a Collection or View, or a mapping name -> one).

    Options: ``components`` (``(node, component)``) and ``top_labels`` (``(component, count,
    label)``) for the components panel; ``window`` (a view of the windowed input) and
    ``references`` (``"scc"``/``"cc"`` or a function of the window's edges) for the
    from-scratch lines; ``loop`` (scope path; default the outermost loop upstream);
    ``top``, ``rows``, ``history``, ``lattice_epochs``, ``lattice_cells``, ``latency_epochs``,
    ``interval_ms``, ``start`` (first position when the feed is empty),
    ``spark_stateless`` (CC's stateless line from the Spark baseline: seconds per window, so
    off by default; the engine's recount otherwise).
    See :func:`~ddlab.widgets.component_collections` for the full panel in one call.

    >>> ex = explore(feed, {"scc": scc_view}, **panel.options())   # doctest: +SKIP
    >>> ex.slider.value = 10; ex.status.value                        # doctest: +SKIP
    """
    return Explorer(feed, collections, **options)


def explore_graph(batches, algorithm: str = "scc", *, labels="auto", name: str = "edges",
                  stats_epochs: int = 200, **options) -> Explorer:
    """Everything in one call: a new flow with an input fed by ``batches`` (a
    :class:`~ddlab.sources.WindowBatches`), the SCC or CC program with the components panel,
    and the explorer (its ``flow``, ``feed`` and ``program`` are attributes).  The flow keeps
    the statistics of the last ``stats_epochs`` epochs (the plots need the last few), so a long
    session's memory stays flat.

    >>> from ddlab.sources import load_dataset, window_batches        # doctest: +SKIP
    >>> ex = explore_graph(window_batches(load_dataset("collegemsg"), "7d", "1d"))  # doctest: +SKIP
    """
    import ddlab
    from ddlab.sources import WindowFeed

    flow = ddlab.Dataflow(f"explore {algorithm}", stats_epochs=stats_epochs)
    edges = flow.input(name, columns=list(batches.columns))
    program = component_collections(edges, algorithm, labels=labels)
    feed = WindowFeed(batches, edges, flow, step=False)
    opts = program.options()
    opts.update(options)
    ex = Explorer(feed, {algorithm: program.result}, **opts)
    ex.program = program
    return ex
