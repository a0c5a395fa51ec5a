"""Independent oracles for the explorer's panels: networkx for the components, raw
``flow.stats()`` rows for the plotted curves, fresh flows for the from-scratch lines and a
plain-Python stateless executor (dicts and sets, written apart from the widgets' numpy one)
for the stateless line."""
from __future__ import annotations

import networkx as nx
import pandas as pd

import ddlab
from ddlab import algorithms


def window_edges(events: pd.DataFrame, batches, k: int, columns=("src", "dst")) -> pd.DataFrame:
    """Position ``k``'s records, straight from the events (simple graph: distinct records)."""
    start, end = batches.window(k)
    inside = events[(events["time"] >= start) & (events["time"] < end)]
    return inside[list(columns)].drop_duplicates().reset_index(drop=True)


def scc_oracle(edges: pd.DataFrame) -> dict[int, int]:
    """component id (smallest node) -> size, for the SCCs that hold an edge (networkx)."""
    g = nx.DiGraph()
    g.add_edges_from(zip(edges["src"].tolist(), edges["dst"].tolist()))
    out = {}
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1 or any(g.has_edge(n, n) for n in comp):
            out[min(comp)] = len(comp)
    return out


def stats_curve(flow, epoch: int, loop: str) -> list[int]:
    """Records in difference per iteration from the raw ``flow.stats()`` rows of the loop's
    feedback: iterations 0..the last the feedback ran at, 0 where nothing was carried."""
    st = flow.stats(epoch=epoch)
    fb = st[(st["kind"] == "feedback") & (st["scope"] == loop)]
    per = {int(k): int(v) for k, v in fb.groupby("iteration")["out"].sum().items()}
    return [per.get(i, 0) for i in range(max(per) + 1)] if per else []


def stats_lattice(flow, epoch: int, loop: str) -> dict[int, int]:
    st = flow.stats(epoch=epoch)
    inside = st[(st["scope"] == loop) | st["scope"].str.startswith(loop + "/")]
    depth = loop.count("/")
    cells: dict[int, int] = {}
    for t, out in zip(inside["time"], inside["out"]):
        it = t[depth]   # plain loops: the iteration counter is the loop's own coordinate
        cells[int(it)] = cells.get(int(it), 0) + int(out)
    return cells


def scratch_oracle(edges: pd.DataFrame, loop: str, *, prioritized: bool) -> list[int]:
    """A fresh flow with the explorer's SCC program on ``edges``, one epoch: the loop's
    records in difference per iteration, read from the raw statistics."""
    flow = ddlab.Dataflow()
    e = flow.input("e", columns=["src", "dst"])
    scc = algorithms.strongly_connected_components(e, prioritized=prioritized)
    if prioritized:
        algorithms.connected_components_prioritized(scc).view()
    else:
        algorithms.connected_components(scc, prioritized=False).view()
    e.update(edges[["src", "dst"]].drop_duplicates().assign(diff=1))
    flow.step()
    if prioritized and loop == "root/cc":
        loop = "root/cc-prioritized"
    if prioritized:   # by priority class, each from its iteration 0 to the last it ran
        st = flow.stats(epoch=0)
        fb = st[(st["kind"] == "feedback") & (st["scope"] == loop)]
        depth = loop.count("/")
        per: dict = {}
        for t, out in zip(fb["time"], fb["out"]):
            # a prioritized loop's coordinate is (priority, iteration); SCC's outer loop is plain
            priority, iteration = t[depth] if isinstance(t[depth], tuple) else (0, t[depth])
            per[(priority, iteration)] = per.get((priority, iteration), 0) + int(out)
        out = []
        for priority in sorted({p for p, _ in per}):
            last = max(i for p, i in per if p == priority)
            out += [per.get((priority, i), 0) for i in range(last + 1)]
        return out
    return stats_curve(flow, 0, loop)


# -- the stateless system, in plain Python -------------------------------------------------------

def _label_propagation(seeds: set, edges: set) -> tuple[dict, list[int]]:
    """A stateless min-label propagation: every iteration recomputes every label from the
    previous iteration's labels (seeded with each seed's own id), until nothing changes.
    Returns the labels and the number of labels held at each iteration that changed them."""
    into: dict = {}
    for u, v in edges:
        into.setdefault(v, []).append(u)
    previous: dict = {}
    current = {n: n for n in seeds}
    sizes = []
    while True:
        new = {}
        for v in set(current) | set(into):
            options = [current[u] for u in into.get(v, ()) if u in current]
            if v in current:
                options.append(current[v])
            if options:
                new[v] = min(options)
        if new == previous:
            return previous, sizes
        sizes.append(len(new))
        previous = current = new


def _add(total: list, curve: list) -> None:
    for i, v in enumerate(curve):
        if i < len(total):
            total[i] += v
        else:
            total.append(v)


def stateless_oracle(edges: pd.DataFrame) -> dict[str, list[int]]:
    """The records a stateless system emits per iteration for every loop of the SCC program
    (the loop variable's size at each iteration; nested loops summed over outer iterations)."""
    graph = set(zip(edges["src"].tolist(), edges["dst"].tolist()))
    reverse = {(v, u) for u, v in graph}

    def trim(cycle, full):
        labels, sizes = _label_propagation({v for _, v in full}, cycle)
        kept = {(u, v) for u, v in full if u in labels and v in labels and labels[u] == labels[v]}
        return {(v, u) for u, v in kept}, sizes

    outer, reach, reach2 = [], [], []
    cycle, before = graph, set()
    while True:
        once, forward = trim(cycle, graph)
        now, backward = trim(once, reverse)
        _add(reach, forward)
        _add(reach2, backward)
        if now == before:
            break
        outer.append(len(now))
        before = cycle = now
    undirected = before | {(v, u) for u, v in before}
    _, cc = _label_propagation({n for e in before for n in e}, undirected)
    return {"root/scc": outer, "root/scc/reach": reach, "root/scc/reach2": reach2, "root/cc": cc}
