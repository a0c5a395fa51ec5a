"""Records in difference per loop iteration, log scale: this move bold, the previous moves
faded behind it, and the window this move landed on computed from scratch (stateless,
incremental, prioritized) as reference lines: the CIDR paper's Figure 1, live.

Data: ``flow.loop_differences(epoch, loop)`` (what the loop's feedback carried
per iteration, numbered by iteration).  Empty iterations stay visible: a log axis cannot place
0, so zeros sit on their own row at the bottom, labelled "0", below a dotted break (the
papers: in Figure 1 "several iterations are completely empty").  Every line carries the window
it is of; the reference lines are only drawn for the current move's window, and the subtitle
says when they are being recomputed.  Each move streams one row into ``current`` and one into
``history``; the references and the current move's points are replaced whole (a few numbers).
"""
from __future__ import annotations

from ._deps import require_lab

require_lab()   # one clear line, not bokeh's ModuleNotFoundError

from bokeh.models import (ColumnDataSource, DataRange1d, FixedTicker, HoverTool,  # noqa: E402
                          LinearColorMapper, Span, Title)
from bokeh.palettes import Greys256  # noqa: E402
from bokeh.plotting import figure  # noqa: E402

from .batched_bokeh import BatchedBokehModel  # noqa: E402

__all__ = ["IterationPlot", "REFERENCE_COLOURS", "ZERO_Y", "plotted"]

REFERENCE_COLOURS = {"stateless": "#d62728", "incremental": "#ff7f0e",
                     "prioritized": "#2ca02c"}
DIFFERENTIAL_COLOUR = "#1f77b4"
#: Where a zero is drawn on the log axis (its own row, labelled "0").
ZERO_Y = 0.5
_BREAK_Y = 0.75
_TICKS = [ZERO_Y] + [10.0 ** p for p in range(0, 10)]


def plotted(records) -> tuple[list[int], list[float]]:
    """``(iterations, y)`` of a per-iteration curve, zeros moved to the "0" row.  Lists, not
    arrays: bokeh sends an array as a binary buffer (messages of its own), a move's few
    points go inline."""
    ys = [float(v) if v > 0 else ZERO_Y for v in records]
    return list(range(len(ys))), ys


def _empty_lines() -> dict:
    return {"xs": [], "ys": [], "records": [], "epoch": [], "position": [], "window": [],
            "name": []}


#: What the faded earlier moves need: their points and their epoch (the colour).  Nothing
#: reads more of them (no hover), and every column is sent with each move.
PAST_FIELDS = ("xs", "ys", "epoch")


class IterationPlot:
    """The ``ddlab-iterations`` plot of one loop."""

    def __init__(self, loop: str | None, *, history: int = 20, width: int = 520,
                 height: int = 320):
        self.loop, self.history = loop, history
        # named, so a browser test can read them back from the page's bokeh documents
        self.current = ColumnDataSource(data=_empty_lines(), name="ddlab-differential")
        self.past = ColumnDataSource(data={k: [] for k in PAST_FIELDS},
                                     name="ddlab-earlier-moves")
        self.points = ColumnDataSource(data={"x": [], "y": [], "records": []},
                                       name="ddlab-differential-points")
        self.references = ColumnDataSource(data={"xs": [], "ys": [], "label": [], "colour": [],
                                                 "records": [], "window": [], "position": []},
                                           name="ddlab-references")
        fig = figure(title=self._title(loop), y_axis_type="log", width=width, height=height,
                     x_axis_label="iteration (from the loop body's first output)",
                     y_axis_label="records in difference",
                     y_range=DataRange1d(start=ZERO_Y * 0.7),
                     tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="right")
        fig.yaxis.ticker = FixedTicker(ticks=_TICKS)
        fig.yaxis.major_label_overrides = {ZERO_Y: "0"}
        fig.add_layout(Span(location=_BREAK_Y, dimension="width", line_color="#999",
                            line_dash="dotted", line_width=1))
        self.subtitle = Title(text="", text_font_size="9pt", text_color="#555",
                              text_font_style="normal")
        fig.add_layout(self.subtitle, "above")
        self.mapper = LinearColorMapper(palette=list(reversed(Greys256[60:230])), low=0, high=1)
        fig.multi_line("xs", "ys", source=self.past, line_width=1.2, line_alpha=0.5,
                       line_color={"field": "epoch", "transform": self.mapper},
                       legend_label="earlier moves")
        # (its own legend field: bokeh merges legend items that share a field name)
        fig.multi_line("xs", "ys", source=self.references, line_width=2, line_dash="dashed",
                       line_color="colour", legend_field="label")
        line = fig.multi_line("xs", "ys", source=self.current, line_width=3.5,
                              line_color=DIFFERENTIAL_COLOUR, legend_field="name")
        dots = fig.scatter("x", "y", source=self.points, size=7, line_color=DIFFERENTIAL_COLOUR,
                           fill_color="white", line_width=2)
        fig.add_tools(HoverTool(renderers=[line], tooltips=[("epoch", "@epoch"),
                                                            ("position", "@position"),
                                                            ("window", "@window")]))
        fig.add_tools(HoverTool(renderers=[dots], tooltips=[("iteration", "@x"),
                                                            ("records", "@records")]))
        fig.legend.location = "top_right"
        fig.legend.label_text_font_size = "8pt"
        fig.legend.background_fill_alpha = 0.7
        fig.legend.spacing = 0
        fig.legend.padding = 4
        self.figure = fig
        self.widget = BatchedBokehModel(fig)
        self.widget.add_class("ddlab-iterations")

    @staticmethod
    def _title(loop: str | None) -> str:
        return (f"records in difference per iteration of {loop}" if loop
                else "records in difference per iteration (no loop upstream)")

    def curve(self, flow, epoch: int) -> list[int]:
        """This loop's records in difference per iteration in ``epoch``."""
        if self.loop is None:
            return []
        return [int(v) for v in flow.statistics.loop_difference_records(epoch, self.loop)]

    def row(self, flow, epoch: int, position: int, window: str) -> dict:
        """The row this move streams."""
        records = self.curve(flow, epoch)
        x, y = plotted(records)
        return {"xs": [x], "ys": [y], "records": [records], "epoch": [epoch],
                "position": [position], "window": [window],
                "name": [f"differential: this move ({sum(records):,})"]}

    def update(self, flow, epoch: int, position: int, window: str) -> list[int]:
        """Stream this move's curve; returns it (records in difference per iteration)."""
        row = self.row(flow, epoch, position, window)
        self.current.stream(row, rollover=1)
        self.past.stream({k: row[k] for k in PAST_FIELDS}, rollover=self.history)
        self.mapper.update(low=epoch - self.history, high=epoch)
        self._points(row["records"][0])
        return row["records"][0]

    def _points(self, records: list[int]) -> None:
        x, y = plotted(records)
        self.points.data = {"x": x, "y": y, "records": list(records)}

    def set_loop(self, loop: str, flow, moves: list[tuple[int, int, str]]) -> None:
        """Show another loop: every line redrawn from ``flow``'s kept statistics of ``moves``
        (``(epoch, position, window)``, oldest first) on the new loop; the reference lines
        are cleared (they were another loop's)."""
        self.loop = loop     # first: the rows below are read on the new loop
        self.figure.title.text = self._title(loop)
        rows = [self.row(flow, epoch, position, window) for epoch, position, window in moves]
        past = {k: [v for r in rows for v in r[k]] for k in PAST_FIELDS}
        self.past.data = past
        self.current.data = rows[-1] if rows else _empty_lines()
        self._points(rows[-1]["records"][0] if rows else [])
        self.clear_references("")

    def set_references(self, curves: dict[str, list[int]], position: int, window: str) -> None:
        """Draw the from-scratch curves ``{name: records per iteration}`` of the window at
        ``position`` (the current move's: the caller makes sure)."""
        data = {k: [] for k in self.references.data}
        for name in ("stateless", "incremental", "prioritized"):
            records = curves.get(name)
            if records is None:
                continue
            x, y = plotted(records)
            data["xs"].append(x)
            data["ys"].append(y)
            data["records"].append(list(records))
            data["label"].append(f"{name} from scratch ({int(sum(records)):,})")
            data["colour"].append(REFERENCE_COLOURS[name])
            data["window"].append(window)
            data["position"].append(position)
        self.references.data = data
        self.subtitle.text = f"window {window}; dashed: this window from scratch"

    def clear_references(self, note: str) -> None:
        """No reference lines (they would be of another window); ``note`` says why.  (Only
        what differs is set: each change is a message to the browser.)"""
        if any(len(v) for v in self.references.data.values()):
            self.references.data = {k: [] for k in self.references.data}
        if self.subtitle.text != note:
            self.subtitle.text = note
