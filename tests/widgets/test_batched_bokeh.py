"""One patch message per plot per move: the changes made while a plot is held reach the
front end as one PATCH-DOC holding every event in order; outside a hold, one per change."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("jupyter_bokeh")

from bokeh.models import ColumnDataSource  # noqa: E402
from bokeh.plotting import figure  # noqa: E402

from ddlab.widgets.batched_bokeh import BatchedBokehModel, batched  # noqa: E402


def _plot():
    source = ColumnDataSource(data={"x": [0], "y": [1]})
    fig = figure(title="t")
    fig.line("x", "y", source=source)
    model = BatchedBokehModel(fig)
    sent = []
    model.send = lambda content, buffers=None: sent.append((content, buffers))
    return model, fig, source, sent


def _patches(sent) -> list[dict]:
    """The PATCH-DOC contents among the sent messages (header, metadata, content, ...)."""
    out = []
    for i, (content, _) in enumerate(sent):
        payload = content.get("payload")
        if payload and '"msgtype"' in payload and "PATCH-DOC" in payload:
            out.append(json.loads(sent[i + 2][0]["payload"]))
    return out


def test_a_hold_sends_every_change_as_one_patch_in_order():
    model, fig, source, sent = _plot()
    with batched(model, object()):           # anything that is not a held plot is ignored
        source.stream({"x": [1], "y": [2]})
        fig.title.text = "moved"
        with model.hold():                    # nested: the outer hold sends
            source.stream({"x": [2], "y": [4]})
        assert sent == []
    (patch,) = _patches(sent)
    kinds = [e["kind"] for e in patch["events"]]
    assert kinds == ["ColumnsStreamed", "ModelChanged", "ColumnsStreamed"]
    assert patch["events"][1]["new"] == "moved"


def test_outside_a_hold_each_change_is_its_own_patch():
    model, fig, source, sent = _plot()
    source.stream({"x": [1], "y": [2]})
    fig.title.text = "moved"
    assert [len(p["events"]) for p in _patches(sent)] == [1, 1]


def test_a_hold_that_raises_still_sends_what_changed():
    model, fig, source, sent = _plot()
    with pytest.raises(RuntimeError):
        with model.hold():
            fig.title.text = "half a move"
            raise RuntimeError("boom")
    (patch,) = _patches(sent)
    assert patch["events"][0]["new"] == "half a move"
