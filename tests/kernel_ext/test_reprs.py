"""Renderers and the graph picture on their own: bounded tables, colours, SVG geometry,
progress widgets (headless)."""
from __future__ import annotations

import re

import pandas as pd

import ddlab
from ddlab.algorithms import connected_components, strongly_connected_components
from ddlab.kernel_ext import graph_svg, reprs
from ddlab.kernel_ext.progress import NullProgress, Progress

from .conftest import html_of


def small_flow():
    flow = ddlab.Dataflow("t")
    edges = flow.input("edges", columns=["src", "dst"])
    scc = strongly_connected_components(edges)
    cc = connected_components(edges)
    views = scc.view(), cc.view()
    edges.insert([(1, 2), (2, 1), (2, 3)])
    flow.step()
    return flow, edges, views


def test_frame_html_is_bounded_and_colours_diffs():
    frame = pd.DataFrame({"x": range(1000), "diff": [1, -1] * 500})
    html = reprs.frame_html(frame, 7, diff="diff", counts=("diff",))
    assert html.count("<tr>") == 1 + 7 and "showing 7 of 1,000 rows" in html
    assert html.count(reprs.ADD) == 2 * 4 and html.count(reprs.DEL) == 2 * 3   # per cell
    assert "&lt;b&gt;" in reprs.frame_html(pd.DataFrame({"s": ["<b>"]}))   # escaped


def test_plain_view_renders_without_a_session(ip):
    flow, edges, (scc_view, cc_view) = small_flow()
    html = html_of(cc_view)
    assert "3 records" in html and "after epoch 0" in html and "fields node, label" in html
    text = ip.display_formatter.format(cc_view)[0]["text/plain"]
    assert "3 records" in text and "node" in text
    assert "Dataflow" in html_of(flow) and "4 loop scopes" in html_of(flow)


def test_negative_multiplicities_are_marked():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["x"])
    view = xs.view()
    xs.remove([5])
    flow.step()
    html = reprs.render_view(view, "xs")
    assert "1 negative" in html and reprs.DEL in html


def test_lattice_and_trace_result():
    flow, edges, _ = small_flow()
    grid = reprs.lattice_frame(flow.stats(), "root/scc")
    assert list(grid.columns) == [0] and grid.index.min() == 0 and grid.values.sum() > 0
    hist = pd.DataFrame({"a": [1, 2, 3], "time": [(0,), (1,), (1,)], "diff": [1, 1, -1]})
    tr = reprs.TraceResult("a", hist, 2, {"root/scc": grid})
    assert tr.by_time["updates"].tolist() == [1, 2]
    assert tr.by_time["retractions"].tolist() == [0, 1]
    html = tr._repr_html_()
    assert "3 updates at 2 times" in html and "lattice" in html
    assert "rgba(9,105,218" in html                      # shaded cells


def test_svg_nests_loops_and_places_operators_without_overlap():
    flow, edges, _ = small_flow()
    ops, es = flow.graph()
    svg = graph_svg.dataflow_svg(ops, es, names={edges.op.id: "edges"}, title="t")
    boxes = {m.group(1): tuple(map(float, m.group(2, 3, 4, 5))) for m in re.finditer(
        r'data-scope="([^"]+)"><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" '
        r'height="([\d.]+)"', svg)}
    assert set(boxes) == {"root/scc", "root/scc/reach", "root/scc/reach2", "root/cc"}

    def inside(inner, outer):
        x, y, w, h = inner
        X, Y, W, H = outer
        return X <= x and Y <= y and x + w <= X + W + 0.01 and y + h <= Y + H + 0.01

    assert inside(boxes["root/scc/reach"], boxes["root/scc"])
    assert not inside(boxes["root/cc"], boxes["root/scc"])
    rects = {int(m.group(1)): tuple(map(float, m.group(2, 3, 4, 5))) for m in re.finditer(
        r'data-id="(\d+)".*?<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" '
        r'height="([\d.]+)"', svg)}
    scope_of = dict(zip(ops["id"], ops["scope"]))
    for i, r in rects.items():                       # each operator inside its loop's box
        if scope_of[i] != "root":
            assert inside(r, boxes[scope_of[i]])
    items = list(rects.values())
    for a in range(len(items)):                      # no two operators overlap
        for b in range(a + 1, len(items)):
            (x1, y1, w1, h1), (x2, y2, w2, h2) = items[a], items[b]
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
    assert "edges" in svg and 'stroke-dasharray="4,3"' in svg          # feedback edges


def test_ancestors_follow_loops():
    flow, edges, (scc_view, _) = small_flow()
    ops, es = flow.graph()
    view_id = int(ops[ops["kind"] == "view"]["id"].iloc[0])
    up = graph_svg.ancestors(es, [view_id])
    kinds = set(ops[ops["id"].isin(up)]["kind"])
    assert {"input", "join", "reduce", "feedback", "view"} <= kinds


def test_progress_widget_headless():
    with Progress("load", force=True, min_seconds=0) as p:
        p.phase("reading", total=4)
        p.advance(2)
        assert p.bar.max == 4 and p.bar.value == 2
        assert "reading" in p.label.value and "2/4" in p.label.value
        p.phase("windowing")
        assert p.bar.value == p.bar.max == 1 and "windowing" in p.label.value
    assert not p._timer.is_alive()
    with NullProgress() as q:
        q.phase("x", 3)
        q.advance(1)
    assert not Progress("off").enabled          # outside a kernel: nothing is shown


def test_sources_objects_render():
    from ddlab.sources.loaders import LoadReport

    rep = LoadReport("f.csv", 10, 8, {"empty id": 2},
                     [{"file": "f.csv", "row": "1,,3", "reason": "empty id"}])
    html = reprs.render_load_report(rep)
    assert "10 rows read" in html and "2 malformed" in html and "empty id: 2" in html
    assert "10 rows read" in html_of(rep)


def test_step_summary_folds_long_runs():
    from ddlab.kernel_ext.session import EpochLine, StepResult

    lines = [EpochLine(i, 0.001, {"e": (i, 0)}) for i in range(30)]
    s = reprs.StepSummary(StepResult(lines))
    text = repr(s)
    assert "epoch 0 |" in text and "epoch 29 |" in text and "18 more epochs" in text
    assert "30 epochs in" in text
    assert s._repr_html_().count("<div><b>epoch") == 12
