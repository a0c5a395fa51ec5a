"""Latency and state per epoch: engine time and end-to-end time of each move, and the updates
the engine retains after it (so compaction shows as a falling line): two small time series.
When the flow runs on several workers, each worker's busy time (the seconds of its operator
runs in the epoch) is drawn beside the engine's: how evenly the work was split, and how much
of the move was spent waiting for the others and agreeing on progress.

Data: the epoch's ``StepReport`` (``flow.statistics.report``: engine seconds, retained
updates; one row of ``flow.epoch_log``), the move's :class:`~.worker_split.WorkerSplit` for
the busy times, and the explorer's own clock for the end-to-end time (engine plus every panel
and plot update up to this plot's own stream).  One ``stream`` per move into the one source
both figures read.
"""
from __future__ import annotations

from ._deps import require_lab

require_lab()   # one clear line, not bokeh's ModuleNotFoundError

from bokeh.layouts import column  # noqa: E402
from bokeh.models import (ColumnDataSource, FixedTicker, HoverTool, NoOverlap,  # noqa: E402
                          NumeralTickFormatter)
from bokeh.plotting import figure  # noqa: E402

from .batched_bokeh import BatchedBokehModel  # noqa: E402
from .worker_split import WorkerSplit  # noqa: E402

__all__ = ["LatencyPlot", "MS_TICKS", "WORKER_COLOURS", "busy_column"]

#: The latency axis' ticks: 1-2-5 steps from 10 µs to about 3 hours, in milliseconds.
MS_TICKS = [m * 10.0 ** e for e in range(-2, 7) for m in (1, 2, 5)]
#: The workers' busy lines (Category10 without the end-to-end and engine lines' colours),
#: repeated beyond eight workers.
WORKER_COLOURS = ["#ff7f0e", "#2ca02c", "#d62728", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                  "#17becf"]


def busy_column(worker: int) -> str:
    """The source column of ``worker``'s busy milliseconds."""
    return f"busy_ms_{worker}"


class LatencyPlot:
    """The ``ddlab-latency`` plots; ``workers``: the flow's (with more than one, a busy line
    per worker)."""

    def __init__(self, *, epochs: int = 300, width: int = 480, height: int = 150,
                 workers: int = 1):
        self.epochs, self.workers = epochs, workers
        busy = [busy_column(w) for w in range(workers)] if workers > 1 else []
        self.source = ColumnDataSource(data={k: [] for k in ("epoch", "engine_ms", "total_ms",
                                                             "retained", "position", *busy)})
        time_fig = figure(title="latency per move (ms, log)", width=width, height=height,
                          x_axis_label=None, y_axis_label="ms", y_axis_type="log",
                          tools="pan,wheel_zoom,reset",
                          toolbar_location=None)
        time_fig.line("epoch", "total_ms", source=self.source, color="#9467bd",
                      legend_label="end to end", line_width=1.5)
        time_fig.line("epoch", "engine_ms", source=self.source, color="#1f77b4",
                      legend_label="engine", line_width=1.5)
        for w, field in enumerate(busy):
            time_fig.line("epoch", field, source=self.source, line_dash="dashed",
                          color=WORKER_COLOURS[w % len(WORKER_COLOURS)],
                          legend_label=f"worker {w} busy", line_width=1.2)
        time_fig.legend.location = "top_right"
        time_fig.legend.label_text_font_size = "8pt"
        time_fig.legend.background_fill_alpha = 0.5
        if busy:   # inside, four or more entries would hide the latest moves' lines
            self._legend_above(time_fig)
        time_fig.add_tools(HoverTool(tooltips=[("epoch", "@epoch"), ("position", "@position"),
                                               ("engine", "@engine_ms{0.0} ms"),
                                               ("end to end", "@total_ms{0.0} ms")]
                                     + [(f"worker {w} busy", f"@{c}{{0.0}} ms")
                                        for w, c in enumerate(busy)],
                                     mode="vline"))
        state_fig = figure(title="retained updates (state)", width=width, height=height,
                           x_axis_label="epoch", tools="pan,wheel_zoom,reset",
                           toolbar_location=None, x_range=time_fig.x_range)
        state_fig.line("epoch", "retained", source=self.source, color="#2ca02c", line_width=1.5)
        # 150 pixels hold a few labels: milliseconds at 1-2-5 steps and retained updates as
        # "200k", each axis dropping a label that would overlap its neighbour
        time_fig.yaxis.ticker = FixedTicker(ticks=MS_TICKS)
        time_fig.yaxis.formatter = NumeralTickFormatter(format="0,0.[00]")
        state_fig.yaxis.formatter = NumeralTickFormatter(format="0.[0]a")
        for fig in (time_fig, state_fig):
            fig.xaxis.ticker.min_interval = 1   # epochs are whole numbers
            for axis in (*fig.xaxis, *fig.yaxis):
                axis.major_label_policy = NoOverlap()
        self.figures = (time_fig, state_fig)
        self.layout = column(time_fig, state_fig)
        self.widget = BatchedBokehModel(self.layout)
        self.widget.add_class("ddlab-latency")

    @staticmethod
    def _legend_above(fig, per_row: int = 3) -> None:
        """Move ``fig``'s legend above the plot, ``per_row`` entries a row, the figure taller
        by its rows so the plot keeps its height."""
        legend = fig.legend[0]
        rows = -(-len(legend.items) // per_row)
        fig.center = [r for r in fig.center if r is not legend]
        legend.update(orientation="horizontal", nrows=rows, location="top_left",
                      glyph_height=12, label_height=12, padding=2, spacing=10, margin=2)
        fig.add_layout(legend, "above")
        fig.height += 16 * rows

    def row(self, flow, epoch: int, position: int, total_s: float,
            split: WorkerSplit | None = None) -> dict:
        """This move's point; with several workers, their busy times from ``split`` (read
        here when not given)."""
        report = flow.statistics.report(epoch)     # the epoch's StepReport (no DataFrame)
        if report is None:
            raise ValueError(f"the latency plot: epoch {epoch} is not among the flow's kept "
                             f"statistics (epochs {flow.statistics.epochs[:1]}..)")
        row = {"epoch": [epoch], "engine_ms": [float(report.seconds) * 1000.0],
               "total_ms": [total_s * 1000.0], "retained": [int(report.retained_updates)],
               "position": [position]}
        if self.workers > 1:
            busy = (split or WorkerSplit(flow, epoch)).busy_seconds
            for w, secs in enumerate(busy):
                row[busy_column(w)] = [secs * 1000.0]
        return row

    def update(self, flow, epoch: int, position: int, total_s: float,
               split: WorkerSplit | None = None) -> None:
        self.source.stream(self.row(flow, epoch, position, total_s, split),
                           rollover=self.epochs)
