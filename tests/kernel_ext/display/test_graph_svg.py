"""The dataflow picture: loops as nested boxes, operators without overlap."""
from __future__ import annotations

import re

from ddlab.kernel_ext.display import graph_svg

from .flows import small_flow


def test_svg_nests_loops_and_places_operators_without_overlap():
    flow, edges, _ = small_flow()
    ops, es = flow.graph()
    svg = graph_svg.dataflow_svg(ops, es, names={edges.id: "edges"}, title="t")
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


def test_every_edge_names_its_source_and_target_operators():
    """``data-source``/``data-target`` are operator ids, one path per edge of the graph
    (the label's curve parameter once overwrote the target with 0.72 or 0.5)."""
    flow, edges, _ = small_flow()
    ops, es = flow.graph()
    svg = graph_svg.dataflow_svg(ops, es)
    drawn = sorted((int(s), int(t), int(n)) for s, t, n in re.findall(
        r'data-source="([^"]+)" data-target="([^"]+)" data-updates="(\d+)"', svg))
    loops = set(ops.loc[ops["kind"] == "loop", "id"])
    want = sorted((s, t, n) for s, t, n in es.itertuples(index=False)
                  if s not in loops and t not in loops)
    assert drawn == want


def test_with_workers_exchanges_are_named_and_labels_split_by_worker():
    """A two-worker flow's picture: each edge carries its exchange and every worker's count
    (as ``graph()`` gives them), and the label shows both."""
    import ddlab

    flow = ddlab.Dataflow(workers=2)
    try:
        xs = flow.input("xs", columns=["k", "v"])
        xs.count().view()
        xs.insert([(i % 5, i) for i in range(40)])
        flow.step()
        ops, es = flow.graph()
    finally:
        flow.close()
    svg = graph_svg.dataflow_svg(ops, es)
    drawn = {(int(s), int(t)): (x, [int(n) for n in w.split(",")]) for s, t, x, w in re.findall(
        r'data-source="(\d+)" data-target="(\d+)" data-updates="\d+" data-exchange="([^"]*)" '
        r'data-by-worker="([\d,]+)"', svg)}
    want = {(s, t): (x, list(w)) for s, t, x, w in
            es[["source", "target", "exchange", "by_worker"]].itertuples(index=False)}
    assert drawn == want
    assert "\u21c4 by key" in svg and "\u21c4 gather" in svg
    for per in want.values():
        assert f"w0 {per[1][0]:,} \u00b7 w1 {per[1][1]:,}" in svg
