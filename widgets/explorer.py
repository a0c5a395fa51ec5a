"""The explorer: controls, results panel, iteration plot, lattice trace and latency plots in one
ipywidgets layout, driven by a :class:`~ddlab.sources.WindowFeed` (one epoch per move).

Why this shape: every move goes through :meth:`Explorer.move_to`, which brings the engine
from where it is straight to the latest target in one combined epoch (never a queue of stale
moves), then updates each panel once (one ``stream`` per plot source).  A move that fails (a
raising user function, a non-convergent loop) is rolled back by the engine; the feed returns
to its position (:class:`~ddlab.sources.MoveController`), nothing is drawn, and the status
line says what went wrong in one line, the traceback folded under it.

The reference lines are always of the window the current move landed on: computing them
costs several moves, so they are computed when the window settles (no move for
``settle_ms``, or Play stopped) and kept per position; until then the plot and the status
line say they are pending, and lines of another window are never shown.

This module lays the parts out and passes each event to them: the move controller (moves
and the settle timer), the panels and plots (one module each), the status line, the
reference cache, the loop choice and the checks of what the explorer is given.
"""
from __future__ import annotations

import html
import time

from ._deps import require_lab

require_lab()

import ipywidgets as w  # noqa: E402

from ddlab.engine import Collection  # noqa: E402
from ddlab.sources.moves import MoveController  # noqa: E402

from .batched_bokeh import batched  # noqa: E402
from .bokehjs import ensure_bokehjs  # noqa: E402
from .controls import Controls  # noqa: E402
from .inputs import as_view, check_one_flow, checked_feed, chosen_loop, named_collections  # noqa: E402
from .iterations import IterationPlot  # noqa: E402
from .latency import LatencyPlot  # noqa: E402
from .lattice import LatticePlot  # noqa: E402
from .loops import default_loop, upstream_loops  # noqa: E402
from .options import ExplorerOptions  # noqa: E402
from .program import ComponentCollections, component_collections  # noqa: E402
from .references import REFERENCE_NAMES, ReferenceCache, References  # noqa: E402
from .results import ResultsPanel  # noqa: E402
from .snapshot import snapshot_html  # noqa: E402
from .status import StatusLine  # noqa: E402
from .why_panel import WhyPanel  # noqa: E402
from .worker_split import worker_split  # noqa: E402

__all__ = ["Explorer", "explore", "explore_graph"]

#: reference lines kept per window position (a revisited window shows them at once)
_KEPT_REFERENCES = 64


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
        #: whether :meth:`close` closes the flow too (the one :func:`explore_graph` built)
        self.owns_flow = False
        self.feed, self.flow = checked_feed(feed)
        collections = named_collections(collections)
        self.program = program
        check_one_flow(self.flow, collections, program)
        self.views = {name: as_view(obj, f"collection {name!r}")
                      for name, obj in collections.items()}
        panel = {role: as_view(obj, role) for role, obj in
                 (program.parts().items() if program is not None else ())}
        self.window_view = panel.get("window")
        self.algorithm = program.algorithm if program is not None else None
        self.loops = upstream_loops(self.flow, list(collections.values())
                                    + [panel.get("components")])
        self.loop = chosen_loop(self.flow, loop, default_loop(self.loops))
        self.mover = MoveController(self.flow, {"window": self.feed})
        self.references = ReferenceCache(self.algorithm or "scc", size=_KEPT_REFERENCES)
        self._build(panel)
        self._wire()
        self.moves = 0
        self.last_error: BaseException | None = None
        self.last_move: dict = {}
        self._recent: list[tuple[int, int]] = []   # (epoch, position) of the last moves
        self._target: int | None = None
        self._busy = self._syncing = False
        self._merged_ticks = 0
        self._start()

    # -- construction -------------------------------------------------------------------------
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
        workers = self.flow.workers
        self.lattice = LatticePlot(self.loop, epochs=o.lattice_epochs, cells=o.lattice_cells,
                                   workers=workers)
        self.latency = LatencyPlot(epochs=o.latency_epochs, workers=workers)
        choices = self.loops or ([self.loop] if self.loop else [])
        self.loop_select = w.Dropdown(options=choices,
                                      value=self.loop if self.loop in choices else None,
                                      description="loop", disabled=len(choices) < 2,
                                      layout=w.Layout(width="220px"),
                                      style={"description_width": "initial"})
        self.loop_select.add_class("ddlab-loop")
        self.controls.box.children[1].children += (self.loop_select,)
        self.status_line = StatusLine()
        self.sources = {"iterations": self.iterations.current,
                        "iterations_history": self.iterations.past,
                        "references": self.iterations.references,
                        "lattice": self.lattice.source, "latency": self.latency.source}
        on = f"; {workers} workers" if workers > 1 else ""
        title = w.HTML(f"<b>ddlab explorer</b> <span style='color:#777'>{self.feed.steps:,} "
                       f"window positions; loop {html.escape(self.loop or 'none')}{on}</span>")
        top = w.Layout(align_items="flex-start", flex_flow="row wrap")
        self.widget = w.VBox([title, self.controls.box, self.status_line.widget,
                              w.HBox([w.VBox([self.results.widget] + ([self.why.widget]
                                                                       if self.why else [])),
                                      self.iterations.widget], layout=top),
                              w.HBox([self.lattice.widget, self.latency.widget], layout=top),
                              self.status_line.panel])
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
    status = property(lambda self: self.status_line.widget, doc="The status line (HTML).")
    details = property(lambda self: self.status_line.details,
                       doc="The last error's traceback (the error details panel's output).")

    @property
    def position(self) -> int:
        return self.feed.position

    @property
    def status_text(self) -> str:
        """The status line as plain text (one line per line of the widget)."""
        return self.status_line.text

    def move_to(self, k: int) -> int:
        """Move the window to position ``k`` in one epoch (what the slider, Play and jump
        call).  While a move is running, a new target only replaces the pending one, so the
        explorer goes straight to the latest.  Returns the position reached."""
        k = int(k)
        if not -1 <= k < self.feed.steps:
            self.status_line.show_problem(f"position {k} is out of range "
                                          f"-1..{self.feed.steps - 1}")
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
        """Plot another loop: every line of the iteration plot and the lattice redrawn from
        the kept statistics on that loop; the reference lines follow (the kept ones hold
        every loop)."""
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
        incremental, prioritized, and scipy's compiled run, each timed) and draw those
        reference lines (what the explorer does when the window settles; kept per
        position).  ``None`` when there is nothing to compare."""
        pos = self.feed.position
        self._refresh_why()
        if self.algorithm is None or self.window_view is None or pos < 0:
            return None
        try:
            refs = self.references.of(pos, self.feed.span(pos), self.window_view)
        except Exception as err:  # a failing reference must not break the explorer
            self._error(err, "computing the reference lines")
            return None
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

        ensure_bokehjs()
        self._refresh_plots()
        display(self.widget)

    def _repr_mimebundle_(self, **kwargs):
        ensure_bokehjs()
        self._refresh_plots()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        static = snapshot_html(self.widget)
        if static is not None:
            bundle["text/html"] = static
        return bundle

    def _refresh_plots(self) -> None:
        """A BokehModel's front end applies patches only once a view exists, so the moves
        made before the explorer is shown (the first window, at least) would be missing:
        re-serialize each plot's document into its render bundle before displaying."""
        for plot, model in ((self.iterations, self.iterations.figure),
                            (self.lattice, self.lattice.figure),
                            (self.latency, self.latency.layout)):
            plot.widget.update_from_model(model)

    def close(self) -> None:
        """Close every widget of the layout (front-end views go away, comms are released)
        and cancel a pending settle; the flow :func:`explore_graph` built is closed too (its
        worker processes stop; a flow given by the caller is the caller's to close)."""
        self.mover.cancel_settle()
        todo = [self.widget]
        while todo:
            widget = todo.pop()
            todo.extend(getattr(widget, "children", ()))
            widget.close()
        if self.owns_flow:
            self.flow.close()

    # -- internals ------------------------------------------------------------------------------
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
        start = time.perf_counter()
        before = self.feed.position
        try:
            self.mover.move(seek=target)
        except Exception as err:
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
            split = worker_split(flow, epoch)   # None with one worker
            self.lattice.update(flow, epoch, split)
            total_s = time.perf_counter() - start
            self.latency.update(flow, epoch, pos, total_s, split)
        self._recent.append((epoch, pos))
        if len(self._recent) > 2 * max(self.iterations.history, self.lattice.epochs):
            del self._recent[:len(self._recent) // 2]
        self.moves += 1
        self.last_error = None
        self.last_move = {"position": pos, "epoch": epoch, "from": before, "window": span,
                          "engine_s": engine_s, "total_s": total_s, "work": sum(work),
                          "merged_ticks": self._merged_ticks,
                          "changes": self.results.changes_line(data, previous)}
        self._merged_ticks = 0
        self._render_status()
        self._schedule_settle(self.options.settle_ms)

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
        if self.last_move:
            self.status_line.show_move(
                self.last_move, references=self.references.get(self.last_move["position"]),
                loop=self.loop, compares=self.algorithm is not None, pending=self._pending(),
                interval_ms=self.controls.play.interval)

    def _schedule_settle(self, delay_ms: int | None) -> None:
        """Compute the references after ``delay_ms`` without a move (in a kernel)."""
        if delay_ms is None or self.options.settle_ms is None or self.algorithm is None:
            return
        self.mover.settle_after(delay_ms, self._settle_if_quiet)

    def _settle_if_quiet(self) -> None:
        if self._busy or self.controls.play.playing:
            return   # a move is running, or Play is: not settled
        self.settle()   # (settle reports its own errors)

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
        self.status_line.show_error(err, doing, f"still at position {self.feed.position}, "
                                                f"epoch {self.flow.epoch - 1}")

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
                  no_labels: str = "this data has no labels", workers: int | None = None,
                  **options) -> Explorer:
    """Everything in one call: a new flow with an input fed by ``batches`` (window batches
    from :func:`~ddlab.sources.window_batches`), the SCC or CC program with the components
    panel, and the explorer (its ``flow``, ``feed`` and ``program`` are attributes).  The
    flow keeps the statistics of the last ``stats_epochs`` epochs (the plots need the last
    few), so a long session's memory stays flat; it runs on ``workers`` processes (default:
    ``DDLAB_WORKERS``, else one; ``ex.close()`` stops them with the widgets).  ``options``:
    :class:`ExplorerOptions` fields.

    >>> from ddlab.sources import load_dataset, window_batches        # doctest: +SKIP
    >>> ex = explore_graph(window_batches(load_dataset("collegemsg"), "7d", "1h"))  # doctest: +SKIP
    """
    import ddlab
    from ddlab.sources import WindowFeed

    flow = ddlab.Dataflow(f"explore {algorithm}", stats_epochs=stats_epochs, workers=workers)
    edges = flow.input(name, columns=list(batches.columns))
    program = component_collections(edges, algorithm, labels=labels, label_name=label_name,
                                    no_labels=no_labels)
    feed = WindowFeed(batches, edges, flow, step=False)
    explorer = Explorer(feed, {algorithm: program.result}, program=program,
                        options=ExplorerOptions().updated(**options))
    explorer.owns_flow = True
    return explorer
