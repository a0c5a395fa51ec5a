"""The dataflow as an SVG picture (the Naiad report's Figure 9, live), in pure Python.

Input: the two frames of ``Dataflow.graph()``: operators (id, label, kind, scope, depth) and
edges (source, target, updates of one epoch).  Layout: each loop scope is laid out as a block
(its operators in layers by longest path, feedback edges ignored) and placed as one compound
node of its parent scope, so loops come out as nested boxes.  Inside a layer, nodes are
ordered by the mean position of their predecessors (one barycenter pass).  Each edge is a
curve labelled with the updates it carried; feedback edges loop back on the right, dashed.
With several workers (the frames' ``exchange`` and ``by_worker`` columns), an edge that moves
records between workers is drawn orange and named (``by key``, ``spread``, ``gather``), and
each label adds what every worker's replica of the source sent along it.
No graphviz binary needed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

__all__ = ["dataflow_svg"]

NODE_H = 24
HGAP = 14
VGAP = 30
PAD_X = 10
PAD_TOP = 22
PAD_BOTTOM = 10
MARGIN = 12
CHAR_W = 6.4

_FILL = {
    "input": ("#ddf4ff", "#54aeff"),
    "view": ("#dafbe1", "#4ac26b"), "subscribe": ("#dafbe1", "#4ac26b"),
    "join": ("#fff8c5", "#d4a72c"), "reduce": ("#fff8c5", "#d4a72c"),
    "arrange": ("#fff1e5", "#fb8f44"),
    "ingress": ("#fbefff", "#c297ff"), "enter": ("#fbefff", "#c297ff"),
    "leave": ("#fbefff", "#c297ff"), "feedback": ("#fbefff", "#c297ff"),
}
_DEFAULT_FILL = ("#f6f8fa", "#afb8c1")
_BOX_FILL = ["#f6f8fa", "#eaeef2", "#dde3e9", "#d0d7de"]


@dataclass
class _Item:
    key: tuple                 # ("op", id) or ("scope", path)
    w: float
    h: float
    x: float = 0.0
    y: float = 0.0
    block: "_Block | None" = None
    order: float = 0.0


@dataclass
class _Block:
    path: str
    w: float = 0.0
    h: float = 0.0
    items: dict = field(default_factory=dict)


def _bezier(p0, p1, p2, p3, t: float) -> tuple:
    u = 1 - t
    return tuple(u ** 3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t ** 3 * d
                 for a, b, c, d in zip(p0, p1, p2, p3))


def _text(label: str, kind: str, tag: str | None) -> str:
    name = label.rsplit("#", 1)[0]
    if tag and tag not in name:
        name = f"{name} \u00b7 {tag}"
    return name


@dataclass
class _Graph:
    """What the picture shows: operators ``id -> (label, kind, scope)``, edges
    ``(source, target, updates)``, the forward ones (no feedback) and each node's text;
    with several workers, per edge ``(source, target) -> (exchange, updates per worker)``."""
    nodes: dict
    edges: list
    forward: list
    texts: dict
    workers: dict = field(default_factory=dict)

    @property
    def vgap(self) -> float:
        """Room between layers: a label with every worker's count takes a second line."""
        return VGAP + 14 if self.workers else VGAP

    @classmethod
    def of(cls, ops, edges, names: dict, keep: set | None) -> "_Graph":
        nodes = {}
        for row in ops.itertuples(index=False):
            if row.kind == "loop" or (keep is not None and int(row.id) not in keep):
                continue
            nodes[int(row.id)] = (row.label, row.kind, row.scope)
        elist = [(int(s), int(t), int(n)) for s, t, n in
                 zip(edges["source"].tolist(), edges["target"].tolist(),
                     edges["updates"].tolist())
                 if int(s) in nodes and int(t) in nodes]
        forward = [(s, t) for s, t, _ in elist if nodes[s][1] != "feedback"]
        texts = {i: _text(lab, k, names.get(i)) for i, (lab, k, _) in nodes.items()}
        workers = {}
        if "by_worker" in edges:
            workers = {(int(s), int(t)): (x, list(w)) for s, t, x, w in zip(
                edges["source"].tolist(), edges["target"].tolist(), edges["exchange"].tolist(),
                edges["by_worker"].tolist())}
        return cls(nodes, elist, forward, texts, workers)

    def kind(self, op: int) -> str:
        return self.nodes[op][1]

    def rep(self, path: str, op: int):
        """The item of scope ``path`` that holds ``op``: itself, or the loop around it."""
        scope = self.nodes[op][2]
        if scope == path:
            return ("op", op)
        if scope.startswith(path + "/"):
            return ("scope", path + "/" + scope[len(path) + 1:].split("/")[0])
        return None


def dataflow_svg(ops, edges, *, names: dict | None = None, keep: set | None = None,
                 title: str | None = None) -> str:
    """SVG markup for the graph; ``names`` tags operator ids with declared collection names,
    ``keep`` restricts the picture to some operator ids."""
    names = names or {}
    graph = _Graph.of(ops, edges, names, keep)
    root = _layout(graph, "root")
    pos: dict[int, tuple] = {}
    boxes: list[tuple] = []
    top = MARGIN + (22 if title else 0)
    _place(root, MARGIN, top, 0, pos, boxes)
    width = root.w + 2 * MARGIN + 70          # room on the right for feedback curves
    height = top + root.h + MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="ddlab-graph" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'font-family="ui-monospace,SFMono-Regular,Menlo,monospace" font-size="11">',
           '<defs><marker id="ddarrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
           '<path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>']
    if title:
        out.append(f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="13" font-weight="bold" '
                   f'fill="#24292f">{escape(title)}</text>')
    out += [_box_svg(*box) for box in boxes]
    paths, labels = _edges_svg(graph, pos)
    out += paths
    out += [_node_svg(graph, i, where, i in names) for i, where in pos.items()]
    out += labels
    out.append("</svg>")
    return "\n".join(out)


def _layout(graph: _Graph, path: str) -> _Block:
    """Scope ``path`` as a block: its operators and nested loops (laid out first, as compound
    items) in longest-path layers, each placed below its predecessors as close as possible to
    their mean center without overlapping anything already placed."""
    block = _Block(path)
    items: dict[tuple, _Item] = {}
    for i in graph.nodes:
        key = graph.rep(path, i)
        if key is None or key in items:
            continue
        if key[0] == "op":
            items[key] = _Item(key, max(52.0, CHAR_W * len(graph.texts[i]) + 16), NODE_H,
                               order=i)
        else:
            sub = _layout(graph, key[1])
            items[key] = _Item(key, sub.w, sub.h, block=sub, order=i)
    succ: dict[tuple, set] = {k: set() for k in items}
    pred: dict[tuple, set] = {k: set() for k in items}
    for s, t in graph.forward:
        a, b = graph.rep(path, s), graph.rep(path, t)
        if a is None or b is None or a == b:
            continue
        succ[a].add(b)
        pred[b].add(a)
    layer = _layers(items, succ, pred)
    top0 = PAD_TOP if path != "root" else 0.0
    placed = _place_items(items, pred, layer, top0, graph.vgap)
    width = max((q.x + q.w for q in placed), default=40.0)
    bottom = max((q.y + q.h for q in placed), default=top0)
    pad = PAD_X if path != "root" else 0.0
    for it in items.values():
        it.x += pad
    block.w = width + 2 * pad
    block.h = bottom + (PAD_BOTTOM if path != "root" else 0.0)
    block.items = items
    return block


def _layers(items: dict, succ: dict, pred: dict) -> dict:
    """Longest-path layers (Kahn's order); a leftover cycle is broken by id order."""
    layer, indeg = {}, {k: len(pred[k]) for k in items}
    ready = sorted((k for k in items if indeg[k] == 0), key=lambda k: items[k].order)
    while len(layer) < len(items):
        if not ready:
            k = min((k for k in items if k not in layer), key=lambda k: items[k].order)
            ready = [k]
            indeg[k] = 0
        k = ready.pop(0)
        if k in layer:
            continue
        layer[k] = max((layer[p] + 1 for p in pred[k] if p in layer), default=0)
        for n in sorted(succ[k], key=lambda n: items[n].order):
            indeg[n] -= 1
            if indeg[n] == 0:
                ready.append(n)
    return layer


def _place_items(items: dict, pred: dict, layer: dict, top0: float, vgap: float) -> list:
    """Place the items in topological order: y just below every predecessor, x as close as
    possible to the predecessors' mean center without overlapping anything already placed."""
    placed: list[_Item] = []
    centers: dict[tuple, float] = {}
    next_free = 0.0
    for k in sorted(items, key=lambda k: (layer[k], items[k].order)):
        it = items[k]
        ps = [items[p] for p in pred[k] if p in centers]
        it.y = max((p.y + p.h + vgap for p in ps), default=top0)
        if ps:
            want = sum(centers[p] for p in pred[k] if p in centers) / len(ps) - it.w / 2
        else:
            want = next_free
        band = [q for q in placed if q.y < it.y + it.h + vgap / 2 and it.y < q.y + q.h + vgap / 2]
        cands = {max(0.0, want)}
        for q in band:
            cands.add(q.x + q.w + HGAP)
            if q.x - it.w - HGAP >= 0:
                cands.add(q.x - it.w - HGAP)

        def free(x, it=it, band=band):
            return all(x + it.w + HGAP <= q.x or q.x + q.w + HGAP <= x for q in band)

        it.x = min((c for c in cands if free(c)), key=lambda c: (abs(c - want), c))
        if not ps:
            next_free = max(next_free, it.x + it.w + HGAP)
        centers[k] = it.x + it.w / 2
        placed.append(it)
    return placed


def _place(block: _Block, ox: float, oy: float, depth: int, pos: dict, boxes: list) -> None:
    """Absolute positions: ``pos[op] = (x, y, w, h)``; a loop box per nested block."""
    if block.path != "root":
        boxes.append((block.path, ox, oy, block.w, block.h, depth))
    for key, it in block.items.items():
        if key[0] == "op":
            pos[key[1]] = (ox + it.x, oy + it.y, it.w, it.h)
        else:
            _place(it.block, ox + it.x, oy + it.y, depth + 1, pos, boxes)


def _box_svg(path, x, y, w, h, depth) -> str:
    fill = _BOX_FILL[min(depth - 1, len(_BOX_FILL) - 1)]
    return (f'<g class="ddlab-loop" data-scope="{escape(path)}"><rect x="{x:.1f}" '
            f'y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6" fill="{fill}" '
            f'stroke="#8c959f" stroke-dasharray="5,3"/><text x="{x + 8:.1f}" '
            f'y="{y + 15:.1f}" fill="#57606a">loop {escape(path.split("/")[-1])}'
            f'</text></g>')


def _edges_svg(graph: _Graph, pos: dict) -> tuple[list, list]:
    """Each edge's curve and its label (labels are drawn last, above everything)."""
    paths, labels = [], []
    for s, t, n in graph.edges:
        x1, y1, w1, h1 = pos[s]
        x2, y2, w2, h2 = pos[t]
        stroke = "#57606a" if n else "#c7ccd1"
        sw = 1.0 + min(3.0, math.log10(1 + n) / 1.5) if n else 1.0
        if graph.kind(s) == "feedback" or y2 + h2 <= y1:   # back edge: loop round on the right
            ax, ay = x1 + w1, y1 + h1 / 2
            bx, by = x2 + w2, y2 + h2 / 2
            reach = max(ax, bx) + 36
            d = f"M{ax:.1f},{ay:.1f} C{reach:.1f},{ay:.1f} {reach:.1f},{by:.1f} {bx:.1f},{by:.1f}"
            lx, ly = reach - 6, (ay + by) / 2
            dash = ' stroke-dasharray="4,3"'
        else:
            ax, ay = x1 + w1 / 2, y1 + h1
            bx, by = x2 + w2 / 2, y2
            dy = max(10.0, (by - ay) / 2)
            d = f"M{ax:.1f},{ay:.1f} C{ax:.1f},{ay + dy:.1f} {bx:.1f},{by - dy:.1f} {bx:.1f},{by:.1f}"
            # label near the target (out-edges of one operator carry the same count, so
            # labels near their sources would pile up): the curve's point at 0.72 of the way
            at = 0.72 if by - ay > 2 * graph.vgap else 0.5
            lx, ly = _bezier((ax, ay), (ax, ay + dy), (bx, by - dy), (bx, by), at)
            dash = ""
        exchange, per_worker = graph.workers.get((s, t), ("", None))
        extra, text = "", f"{n:,}"
        if exchange:
            stroke = "#bc4c00"
            text += f" \u21c4 {exchange}"
        if per_worker is not None:
            split = " \u00b7 ".join(f"w{w} {k:,}" for w, k in enumerate(per_worker))
            extra = f' data-exchange="{escape(exchange)}" data-by-worker="{",".join(map(str, per_worker))}"'
            text = (f'{escape(text)}<tspan x="{lx:.1f}" dy="11" font-size="9">{split}</tspan>')
        paths.append(f'<path class="ddlab-edge" data-source="{s}" data-target="{t}" '
                     f'data-updates="{n}"{extra} d="{d}" fill="none" stroke="{stroke}" '
                     f'stroke-width="{sw:.2f}"{dash} marker-end="url(#ddarrow)"/>')
        labels.append(f'<text class="ddlab-edge-label" x="{lx:.1f}" y="{ly + 3:.1f}" '
                      f'text-anchor="middle" fill="{"#0550ae" if n else "#8c959f"}" '
                      f'stroke="white" stroke-width="3" paint-order="stroke" '
                      f'font-size="10">{text}</text>')
    return paths, labels


def _node_svg(graph: _Graph, i: int, where: tuple, named: bool) -> str:
    x, y, w, h = where
    label, kind, scope = graph.nodes[i]
    fill, stroke = _FILL.get(kind, _DEFAULT_FILL)
    bold = ' font-weight="bold"' if named else ""
    return (f'<g class="ddlab-op" data-id="{i}" data-kind="{escape(kind)}">'
            f'<title>{escape(label)} ({escape(kind)}) in {escape(scope)}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
            f'fill="{fill}" stroke="{stroke}"/><text x="{x + w / 2:.1f}" '
            f'y="{y + h / 2 + 4:.1f}" text-anchor="middle" fill="#24292f"{bold}>'
            f'{escape(graph.texts[i])}</text></g>')
