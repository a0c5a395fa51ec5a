"""Records in difference per loop iteration, log scale: this move bold, the previous moves
faded behind it, and the same window computed from scratch (incremental, prioritized,
stateless) as reference lines: the CIDR paper's Figure 1, live.

Data: ``flow.loop_differences(epoch, loop)`` (what the loop's feedback carried per iteration).
Each move streams one row into ``current`` (rollover 1) and one into ``history`` (rollover
``history``); the fading is a colour map on the epoch whose range moves with the epochs.
"""
from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper
from bokeh.palettes import Greys256
from bokeh.plotting import figure
from jupyter_bokeh import BokehModel

__all__ = ["IterationPlot", "REFERENCE_COLOURS"]

REFERENCE_COLOURS = {"stateless": "#d62728", "incremental": "#ff7f0e",
                     "prioritized": "#2ca02c"}


def _positive(records) -> tuple[np.ndarray, np.ndarray]:
    """``(iterations, records)`` without zero counts (a log axis cannot place them)."""
    y = np.asarray(records, dtype=np.int64)
    x = np.arange(len(y), dtype=np.int64)
    keep = y > 0
    return x[keep], y[keep]


class IterationPlot:
    """The ``ddlab-iterations`` plot of one loop."""

    def __init__(self, loop: str | None, *, history: int = 20, width: int = 480,
                 height: int = 300):
        self.loop, self.history = loop, history
        self.current = ColumnDataSource(data={"xs": [], "ys": [], "epoch": [], "position": []})
        self.past = ColumnDataSource(data={"xs": [], "ys": [], "epoch": [], "position": []})
        self.references = ColumnDataSource(data={"xs": [], "ys": [], "name": [], "colour": []})
        title = (f"records in difference per iteration ({loop})" if loop
                 else "records in difference per iteration (no loop upstream)")
        fig = figure(title=title, y_axis_type="log", width=width, height=height,
                     x_axis_label="iteration", y_axis_label="records in difference (log)",
                     tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="right")
        self.mapper = LinearColorMapper(palette=list(reversed(Greys256[60:230])), low=0, high=1)
        fig.multi_line("xs", "ys", source=self.past, line_width=1.2, line_alpha=0.55,
                       line_color={"field": "epoch", "transform": self.mapper})
        fig.multi_line("xs", "ys", source=self.references, line_width=2, line_dash="dashed",
                       line_color="colour", legend_field="name")
        line = fig.multi_line("xs", "ys", source=self.current, line_width=3.5,
                              line_color="#1f77b4")
        fig.add_tools(HoverTool(renderers=[line], tooltips=[("epoch", "@epoch"),
                                                            ("position", "@position")]))
        fig.legend.location = "top_right"
        fig.legend.label_text_font_size = "9pt"
        fig.legend.background_fill_alpha = 0.6
        self.figure = fig
        self.widget = BokehModel(fig)
        self.widget.add_class("ddlab-iterations")

    def row(self, flow, epoch: int, position: int) -> dict:
        """The row this move streams (from ``flow.loop_differences``)."""
        if self.loop is None:
            records = []
        else:
            records = flow.loop_differences(epoch, self.loop)["records"].to_numpy()
        x, y = _positive(records)
        return {"xs": [x], "ys": [y], "epoch": [epoch], "position": [position]}

    def update(self, flow, epoch: int, position: int) -> None:
        row = self.row(flow, epoch, position)
        self.current.stream(row, rollover=1)
        self.past.stream(row, rollover=self.history)
        self.mapper.update(low=epoch - self.history, high=epoch)

    def set_loop(self, loop: str, flow, epochs, positions) -> None:
        """Show another loop: refill from the kept statistics of ``epochs`` (a user action)."""
        self.loop = loop
        self.figure.title.text = f"records in difference per iteration ({loop})"
        rows = [self.row(flow, e, p) for e, p in zip(epochs, positions)]
        past = {k: [v for r in rows for v in r[k]] for k in ("xs", "ys", "epoch", "position")}
        self.past.data = past
        self.current.data = rows[-1] if rows else {k: [] for k in past}
        self.references.data = {"xs": [], "ys": [], "name": [], "colour": []}

    def set_references(self, curves: dict, position: int | None = None) -> None:
        """Show the from-scratch curves ``{name: records per iteration}`` (one data change;
        rare: on demand)."""
        xs, ys, names, colours = [], [], [], []
        for name in ("stateless", "incremental", "prioritized"):
            if name in curves and curves[name] is not None:
                x, y = _positive(curves[name])
                xs.append(x); ys.append(y)
                at = f" at {position}" if position is not None else ""
                names.append(f"{name} from scratch{at} ({int(y.sum()):,})")
                colours.append(REFERENCE_COLOURS[name])
        self.references.data = {"xs": xs, "ys": ys, "name": names, "colour": colours}
