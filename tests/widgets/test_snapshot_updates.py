"""A displayed widget's snapshot follows what later cells do to it: run in a real kernel
(nbclient, as ``jupyter nbconvert --execute`` does), a cell that changes a widget displayed
earlier leaves that earlier output with a snapshot of the widget as it is now, and adds no
output of its own; a widget no cell changed keeps its snapshot.  The plot's render bundle
(what a new view of it draws first) is brought up to date with it."""
from __future__ import annotations

import json
import re

import nbformat
import pytest

pytest.importorskip("nbclient")
from kernel_polling import SlicedPollClient  # noqa: E402  (after the skip: it needs nbclient)

CELLS = [
    "import ddlab\nimport ipywidgets as w\nfrom IPython.display import display\n"
    "from bokeh.models import ColumnDataSource\nfrom bokeh.plotting import figure\n"
    "from jupyter_bokeh import BokehModel",
    "caption = w.HTML('<b>first caption</b>')\nslider = w.IntSlider(value=1, description='k')\n"
    "source = ColumnDataSource({'x': [0], 'y': [10]})\nfig = figure(title='a plot')\n"
    "fig.line('x', 'y', source=source)\n"
    "display(w.VBox([slider, BokehModel(fig), caption]))",
    "display(w.HTML('<i>never changed</i>'))",
    "caption.value = '<b>second caption</b>'\nslider.value = 5\n"
    "source.stream({'x': [1], 'y': [333]})",
]


def _html(output) -> str:
    value = output["data"].get("text/html", "")
    return "".join(value) if isinstance(value, list) else value


def test_a_later_cell_updates_the_snapshot_of_what_it_changed(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    SlicedPollClient(nb, timeout=120, kernel_name="python3",
                     resources={"metadata": {"path": str(tmp_path)}}).execute()
    figure_cell, unchanged_cell, changing_cell = nb.cells[1], nb.cells[2], nb.cells[3]
    # BokehJS, loaded inline once (no output_notebook call in this notebook), then the widget
    bokehjs, shown = figure_cell.outputs
    assert "application/javascript" in bokehjs["data"] and changing_cell.outputs == []
    html = _html(shown)
    assert "second caption" in html and "first caption" not in html
    assert "k: </span><b>5</b>" in html
    docs = re.search(r"const docs_json = '(.*?)';", html, re.S).group(1)
    data = json.dumps(json.loads(docs.encode().decode("unicode_escape")))
    assert '["y", [10, 333]]' in data, "the plot's snapshot holds the streamed point"
    assert "application/vnd.jupyter.widget-view+json" in shown["data"]
    assert "never changed" in _html(unchanged_cell.outputs[0])
    # the view JupyterLab builds for the updated output draws the plot as it is now
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    bundles = [m["state"]["render_bundle"] for m in state.values()
               if m["model_name"] == "BokehModel"]
    assert len(bundles) == 1 and "[10,333]" in bundles[0].replace(" ", "")
