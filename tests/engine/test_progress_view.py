"""``Dataflow.progress()``: the progress tracker's public view, checked against
could-result-in walked here over the engine's own graph (``flow.graph()``), never with the
tracker's reachability: at every run of a tap inside a loop (mid-step) and between steps."""
from __future__ import annotations

import networkx as nx

import ddlab
from ddlab.engine.lattice import leq

GRAPH = [(1, 5), (1, 8), (2, 3), (3, 4), (3, 6), (4, 5), (5, 3), (6, 5), (7, 8)]


def _steps(kind, depth, readers):
    """One hop of the engine's graph: an operator sends at its time (a feedback one
    iteration later); its reader's scope pads the time with zeros (entering a loop) or
    drops coordinates (leaving one)."""
    def step(op, t):
        sent = t[:-1] + (t[-1] + 1,) if kind[op] == "feedback" else t
        return [(r, (sent + (0,) * depth[r])[:depth[r]]) for r in readers.get(op, [])]
    return step


def _earliest(step, op, t) -> dict:
    """operator -> the minimal times a pointstamp at ``(op, t)`` could result in there
    (along paths of one edge or more)."""
    best: dict = {}
    todo = list(step(op, t))
    while todo:
        here, time = todo.pop()
        known = best.setdefault(here, [])
        if any(leq(k, time) for k in known):
            continue
        best[here] = [k for k in known if not leq(time, k)] + [time]
        todo.extend(step(here, time))
    return best


def _hand_frontiers(flow, table) -> dict:
    ops, links = flow.graph()
    kind = dict(zip(ops.id, ops.kind))
    depth = dict(zip(ops.id, ops.depth))
    readers: dict = {}
    for s, d in zip(links.source, links.target):
        readers.setdefault(int(s), []).append(int(d))
    step = _steps(kind, depth, readers)
    reached: dict = {}
    for op, holds in zip(table.id, table.holds):
        for u in holds:
            for j, times in _earliest(step, int(op), u).items():
                reached.setdefault(j, []).extend(times)
    return {j: sorted(m for m in set(ts) if not any(o != m and leq(o, m) for o in ts))
            for j, ts in reached.items()}


def _check(flow, table):
    """Every scheduled operator's frontier equals the hand-walked one."""
    hand = _hand_frontiers(flow, table)
    for op, frontier in zip(table.id, table.frontier):
        assert frontier == hand.get(int(op), []), (op, frontier, hand.get(int(op)))


def test_progress_matches_could_result_in_mid_step_and_between_steps():
    flow = ddlab.Dataflow()
    links = flow.input("edges", columns=["src", "dst"])
    both = links.concat(links.project(1, 0))
    seen = []

    def tap(t):
        if seen and seen[-1][0] == t:
            return
        table = flow.progress()
        seen.append((t, table))

    def propagate(labels):
        best = labels.join(both, select=(2, 1)).concat(labels).min()
        best.inspect(lambda r, t, d: tap(t))
        return best

    result = both.project(0).distinct().project(0, 0).iterate(propagate, name="cc").view()
    links.insert(GRAPH)
    flow.step()
    links.remove([(6, 5), (3, 6)])
    links.insert([(1, 7)])
    flow.step()
    final = nx.Graph([e for e in GRAPH if e not in ((6, 5), (3, 6))] + [(1, 7)])
    assert result.to_dict() == {(n, min(c)): 1 for c in nx.connected_components(final)
                                for n in c}
    assert {t[0] for t, _ in seen} == {0, 1} and len(seen) >= 4
    for t, table in seen:
        _check(flow, table)
        assert (table.worker == 0).all()
        # the tap's min runs only complete times: nothing can reach it at or before t
        row = table[table.label.str.startswith("min#")].iloc[0]
        assert not any(leq(f, t) for f in row.frontier), (t, row.frontier)
        # the view after the loop cannot take the epoch while the loop runs
        view = table[table.label.str.startswith("view of")].iloc[0]
        assert any(leq(f, t[:1]) for f in view.frontier), (t, view.frontier)
    # between steps: only the input holds, its open epoch; everything else waits for it
    table = flow.progress()
    _check(flow, table)
    held = {lab: h for lab, h in zip(table.label, table.holds) if h}
    assert held == {"edges#0": {(2,): 1}}
    for lab, frontier, scope in zip(table.label, table.frontier, table.scope):
        if lab != "edges#0":
            assert frontier == [(2,) + (0,) * scope.count("/")], (lab, frontier)


def test_progress_before_the_first_step_places_the_graph_and_holds_nothing():
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    xs.distinct().view()
    table = flow.progress()
    assert list(table.label) == ["xs#0", "distinct#2", "view of distinct#3"]
    assert all(h == {} for h in table.holds) and all(f == [] for f in table.frontier)
    xs.insert([1, 2])
    flow.step()
    assert flow.progress().holds.tolist()[0] == {(1,): 1}
