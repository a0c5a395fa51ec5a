"""A Panel (``ddlab.widgets.panel``) holds its lines and tables in the kernel, so the widget's
static snapshot, what an exported notebook shows, carries them; the oracle is pandas' own
``to_html`` and the escaped text."""
from __future__ import annotations

import html

import pandas as pd
import pytest

pytest.importorskip("ipywidgets")
import ipywidgets as w  # noqa: E402

from ddlab.widgets.panel import Bold, Panel, as_html  # noqa: E402
from ddlab.widgets.snapshot import snapshot_html  # noqa: E402


def test_a_panel_shows_lines_and_tables_and_its_snapshot_keeps_them():
    frame = pd.DataFrame({"node": [1, 2], "label": [0, 0]})
    panel = Panel()
    panel.show("after 2 epochs: <b> is text", (["x", frame], [Bold("right"), frame]))
    assert html.escape("after 2 epochs: <b> is text") in panel.value
    assert panel.value.count(frame.to_html(index=False)) == 2 and "<b>right</b>" in panel.value
    snap = snapshot_html(w.VBox([w.IntSlider(value=3, description="k"), panel]))
    assert snap.count("<table") == 2 and "after 2 epochs" in snap


def test_show_replaces_what_was_shown():
    panel = Panel()
    panel.show("first")
    panel.show("second")
    assert "second" in panel.value and "first" not in panel.value


def test_a_styler_and_an_index_are_kept():
    frame = pd.DataFrame({"in": [3]}, index=pd.Index(["min#16"], name="operator"))
    assert "min#16" in as_html(frame) and "operator" in as_html(frame)
    assert "background: #ffe9a8" in as_html(frame.style.apply(lambda r: ["background: #ffe9a8"], axis=1))


def test_a_part_it_cannot_show_is_named():
    with pytest.raises(TypeError, match="not set"):
        Panel().show({1, 2})
