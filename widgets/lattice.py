"""The lattice trace: an epoch x iteration grid (the Naiad report's Figures 14-15), each cell
shaded by the updates it carried, growing as the user slides; hover shows the counts by
operator and, when the flow runs on several workers, the updates each worker emitted there
(summing to the cell's).

Data: ``flow.lattice(loop, [epoch], by_operator=True)``; per worker, the move's
:class:`~.worker_split.WorkerSplit` (the same cells ``by_worker``).  Each move
streams that epoch's cells (one ``stream``), bounded by ``rollover`` cells so memory stays
flat; the x range follows the last ``epochs`` epochs, so older epochs scroll out.
"""
from __future__ import annotations


from ._deps import require_lab

require_lab()   # one clear line, not bokeh's ModuleNotFoundError

from bokeh.models import ColorBar, ColumnDataSource, DataRange1d, HoverTool, LogColorMapper  # noqa: E402
from bokeh.palettes import Viridis256  # noqa: E402
from bokeh.plotting import figure  # noqa: E402

from .batched_bokeh import BatchedBokehModel  # noqa: E402
from .worker_split import WorkerSplit, worker_text  # noqa: E402

__all__ = ["LatticePlot"]

#: Operators named in a cell's hover (the busiest first), so a move's payload stays small.
TOP_OPERATORS = 8


class LatticePlot:
    """The ``ddlab-lattice`` plot of one loop; ``workers``: the flow's (with more than one,
    each cell's hover also splits its updates by worker)."""

    def __init__(self, loop: str | None, *, epochs: int = 60, cells: int = 4000,
                 width: int = 480, height: int = 300, workers: int = 1):
        self.loop, self.epochs, self.cells, self.workers = loop, epochs, cells, workers
        self.columns = ("epoch", "iteration", "updates", "operators") + \
            (("workers",) if workers > 1 else ())
        self.source = ColumnDataSource(data={k: [] for k in self.columns})
        self.mapper = LogColorMapper(palette=list(reversed(Viridis256)), low=1, high=10)
        title = f"lattice trace: updates per (epoch, iteration) of {loop}" if loop else \
            "lattice trace (no loop upstream)"
        fig = figure(title=title, width=width, height=height, x_axis_label="epoch",
                     y_axis_label="iteration", tools="pan,wheel_zoom,reset,save",
                     x_range=DataRange1d(follow="end", follow_interval=epochs,
                                         range_padding=0, only_visible=True),
                     toolbar_location="right")
        rect = fig.rect("epoch", "iteration", width=0.95, height=0.95, source=self.source,
                        fill_color={"field": "updates", "transform": self.mapper},
                        line_color=None)
        fig.add_tools(HoverTool(renderers=[rect], tooltips=[
            ("epoch", "@epoch"), ("iteration", "@iteration"), ("updates", "@updates"),
            ("by operator", "@operators")] + ([("by worker", "@workers")] if workers > 1
                                               else [])))
        fig.add_layout(ColorBar(color_mapper=self.mapper, width=8, title="updates"), "right")
        fig.grid.visible = False
        fig.xaxis.ticker.min_interval = 1       # epochs are whole numbers
        self.figure = fig
        self.widget = BatchedBokehModel(fig)
        self.widget.add_class("ddlab-lattice")
        self.high = 10

    def rows(self, flow, epoch: int, split: WorkerSplit | None = None) -> dict:
        """This epoch's cells (``flow.lattice``'s, read without a DataFrame); with several
        workers each cell's updates by worker, from ``split`` (read here when not given)."""
        cells = {} if self.loop is None else \
            flow.statistics.lattice_cells(self.loop, [epoch], by_operator=True)
        if not cells:
            return {k: [] for k in self.columns}
        per: dict[int, list] = {}      # iteration -> [(updates, operator)]
        for (_, it, op), n in sorted(cells.items()):
            per.setdefault(it, []).append((n, op))
        its, ups, ops = [], [], []
        for it in sorted(per):
            cell = sorted(per[it], key=lambda r: -r[0])
            its.append(int(it))
            ups.append(sum(n for n, _ in cell))
            shown = [f"{o} {n:,}" for n, o in cell if n]
            more = f", … {len(shown) - TOP_OPERATORS} more" if len(shown) > TOP_OPERATORS else ""
            ops.append(", ".join(shown[:TOP_OPERATORS]) + more)
        # lists, not arrays: bokeh sends an array as a binary buffer, a message of its own
        rows = {"epoch": [int(epoch)] * len(its), "iteration": its, "updates": ups,
                "operators": ops}
        if self.workers > 1:
            by_worker = (split or WorkerSplit(flow, epoch)).loop_updates(self.loop)
            none = [0] * self.workers
            rows["workers"] = [worker_text(by_worker.get(it, none)) for it in its]
        return rows

    def set_loop(self, loop: str, flow, epochs) -> None:
        """Show another loop: refill the grid from the kept statistics of ``epochs``."""
        self.loop = loop
        self.figure.title.text = f"lattice trace: updates per (epoch, iteration) of {loop}"
        cells = [self.rows(flow, e) for e in epochs]
        data = {k: [v for c in cells for v in c[k]] for k in self.columns}
        self.source.data = data
        self.high = max([10, *data["updates"]])
        self.mapper.high = self.high

    def update(self, flow, epoch: int, split: WorkerSplit | None = None) -> None:
        rows = self.rows(flow, epoch, split)
        if rows["epoch"]:
            self.source.stream(rows, rollover=self.cells)
            top = max(rows["updates"])
            if top > self.high:
                self.high = top
                self.mapper.high = top
