"""The static snapshot a displayed widget carries for exported notebooks: each kind of widget
shows the state it is in (a bokeh plot as bokeh's embed of its current document, HTML as its
HTML, a control as ``description: value``), hidden parts are left out, and the formatter adds
it to a widget's display without taking the live view's place."""
from __future__ import annotations

import json
import re

import ipywidgets as w
import pytest
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure
from IPython.core.interactiveshell import InteractiveShell
from jupyter_bokeh import BokehModel

import ddlab
from ddlab.widgets.snapshot import SNAPSHOT_CLASS, register, snapshot_html, unregister

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _plot():
    source = ColumnDataSource({"x": [0, 1], "y": [5, 6]})
    fig = figure(title="first title")
    fig.line("x", "y", source=source)
    return fig, source


def _docs_json(html: str) -> dict:
    """The bokeh document embedded in a snapshot (bokeh's embed script holds it as JSON)."""
    text = re.search(r"const docs_json = '(.*?)';", html, re.S).group(1)
    return json.loads(text.encode().decode("unicode_escape"))


def test_a_plot_is_embedded_as_it_is_now():
    fig, source = _plot()
    plot = BokehModel(fig)
    fig.title.text = "changed after wrapping"
    source.stream({"x": [2], "y": [7]})
    html = snapshot_html(plot)
    assert html.count(f"class='{SNAPSHOT_CLASS}'") == 1
    docs = json.dumps(_docs_json(html))
    assert "changed after wrapping" in docs and "first title" not in docs
    assert '"entries": [["x", [0, 1, 2]], ["y", [5, 6, 7]]]' in docs   # the streamed point
    assert "Bokeh.embed.embed_items" in html and 'data-root-id' in html


def test_boxes_html_and_controls_show_their_state():
    fig, _ = _plot()
    tree = w.VBox([
        w.HBox([w.IntSlider(value=3, description="iteration"),
                w.Dropdown(options=[("first", 1), ("second", 2)], value=2, description="pick"),
                w.ToggleButtons(options=["a", "b"], value="b", description="mode"),
                w.Play(value=4)]),
        BokehModel(fig),
        w.HTML("<table><tr><td>cell &amp; more</td></tr></table>"),
        w.Label("a <label>"),
        w.Button(description="(1, 2)", style={"button_color": "#ffe08a"}),
        w.HTML("hidden away", layout=w.Layout(display="none")),
        w.Accordion(children=[w.HTML("inside")], titles=("details",)),
    ])
    html = snapshot_html(tree)
    assert "iteration: </span><b>3</b>" in html
    assert "pick: </span><b>second</b>" in html and "mode: </span><b>b</b>" in html
    assert "<table><tr><td>cell &amp; more</td></tr></table>" in html
    assert "a &lt;label&gt;" in html
    assert "(1, 2)</span>" in html and "#ffe08a" in html
    assert "hidden away" not in html
    assert "<details><summary>details</summary>" in html and "inside" in html
    assert html.index("iteration") < html.index("data-root-id") < html.index("<table>")
    assert "flex-flow:column" in html and "flex-flow:row wrap" in html


def test_nothing_to_show_is_no_snapshot():
    assert snapshot_html(w.HTML("")) is None
    assert snapshot_html(w.VBox([w.Play(), w.HTML("x", layout=w.Layout(visibility="hidden"))])) \
        is None


def test_the_formatter_adds_the_snapshot_beside_the_live_view():
    shell = InteractiveShell.instance()
    slider = w.IntSlider(value=7, description="k")
    try:
        data, _ = shell.display_formatter.format(slider)
        assert "text/html" not in data
        register(shell)
        data, _ = shell.display_formatter.format(slider)
        assert data[WIDGET_VIEW]["model_id"] == slider.model_id   # the live view stays
        assert SNAPSHOT_CLASS in data["text/html"] and "<b>7</b>" in data["text/html"]
        data, _ = shell.display_formatter.format(42)              # other objects untouched
        assert "text/html" not in data
    finally:
        unregister(shell)
    data, _ = shell.display_formatter.format(slider)
    assert "text/html" not in data


@pytest.mark.parametrize("in_kernel", [True, False])
def test_importing_ddlab_in_a_kernel_registers_the_snapshots(monkeypatch, in_kernel):
    import IPython

    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "kernel", object(), raising=False) if in_kernel else None
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    try:
        ddlab._snapshots_in_a_kernel()
        data, _ = shell.display_formatter.format(w.HTML("<i>shown</i>"))
        assert ("text/html" in data) is in_kernel
    finally:
        unregister(shell)
