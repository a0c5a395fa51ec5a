"""Two public queries the lessons need: ``loop_differences`` listing empty iterations (the CIDR
paper's point that a differential epoch has "completely empty" iterations between busy ones)
and ``retained_updates(by_operator=True)`` (where the state is kept).

Oracle for the per-iteration curve: plain label propagation evaluated from scratch in Python.
In epoch ``e`` the feedback of connected components carries, at iteration ``i``, the
difference trace of the body's output ``F[e, i] = f^(i+1)(seeds_e)``:
``dF[e, i] = F[e, i] - F[e-1, i] - F[e, i-1] + F[e-1, i-1]`` (Naiad report, equation 5 on the
product lattice), whose non-zero records are what ``loop_differences`` counts.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

import ddlab
from ddlab.algorithms import connected_components, connected_components_prioritized


def _labels_by_iteration(edges, iterations):
    """``[f^1(A), f^2(A), ...]`` as Counters of ``(node, label)``: synchronous label propagation
    on the undirected graph, every node seeded with its own id."""
    nbrs: dict[int, set] = {}
    for a, b in edges:
        nbrs.setdefault(a, set()).add(b)
        nbrs.setdefault(b, set()).add(a)
    label = {v: v for v in nbrs}
    out = []
    for _ in range(iterations):
        label = {v: min([label[v]] + [label[u] for u in nbrs[v]]) for v in nbrs}
        out.append(Counter(label.items()))
    return out


def _difference_curve(before, after, iterations):
    """Records in difference per iteration of the epoch that changes ``before`` into ``after``."""
    old, new = _labels_by_iteration(before, iterations), _labels_by_iteration(after, iterations)
    curve = []
    for i in range(iterations):
        delta = Counter(new[i])
        delta.subtract(old[i])
        if i:
            delta.subtract(new[i - 1])
            delta.update(old[i - 1])
        curve.append(sum(1 for v in delta.values() if v))
    while curve and curve[-1] == 0:
        curve.pop()
    return curve


@pytest.mark.parametrize("seed", range(40))
def test_with_empty_matches_from_scratch_differences(seed):
    rng = random.Random(seed)
    nodes = list(range(1, rng.randint(5, 12)))
    edges = set()
    while len(edges) < rng.randint(4, 14):
        a, b = rng.sample(nodes, 2)
        edges.add((a, b))
    flow = ddlab.Dataflow()
    inp = flow.input("edges", columns=["src", "dst"])
    connected_components(inp, prioritized=False).view()
    current = sorted(edges)
    inp.insert(current)
    flow.step()
    for epoch in range(1, 4):
        change = rng.sample(current, min(2, len(current)))
        new = sorted((set(current) - set(change)) | {tuple(rng.sample(nodes, 2))})
        removed, added = set(current) - set(new), set(new) - set(current)
        if removed:
            inp.remove(sorted(removed))
        if added:
            inp.insert(sorted(added))
        flow.step()
        expected = _difference_curve(current, new, 40)
        full = flow.loop_differences(epoch, "root/cc", with_empty=True)
        assert full["records"].tolist() == expected
        assert flow.statistics.loop_difference_records(epoch, "root/cc") == expected
        assert full["time"].tolist() == full["iteration"].tolist() == list(range(len(expected)))
        busy = flow.loop_differences(epoch, "root/cc", with_empty=False)
        assert busy["records"].tolist() == [r for r in expected if r]
        current = new


def test_first_epoch_curve_is_the_body_output_then_its_changes():
    flow = ddlab.Dataflow()
    inp = flow.input("edges", columns=["src", "dst"])
    connected_components(inp, prioritized=False).view()
    edges = [(1, 2), (2, 3), (3, 4), (4, 5), (6, 7)]
    inp.insert(edges)
    flow.step()
    got = flow.loop_differences(0, "root/cc", with_empty=True)["records"].tolist()
    assert got == _difference_curve([], edges, 40)


def test_prioritized_loop_lists_each_class_up_to_its_last_busy_iteration():
    flow = ddlab.Dataflow()
    inp = flow.input("edges", columns=["src", "dst"])
    connected_components_prioritized(inp).view()
    inp.insert([(1, 2), (2, 3), (3, 4), (4, 5), (9, 10), (17, 18), (18, 19)])
    flow.step()
    loop = "root/cc-prioritized"
    full = flow.loop_differences(0, loop, with_empty=True)
    busy = flow.loop_differences(0, loop, with_empty=False)
    assert [r for r in full["records"] if r] == busy["records"].tolist()
    assert flow.statistics.loop_difference_records(0, loop) == full["records"].tolist()
    stats = flow.stats(0)
    fed = {}
    for t, out in zip(stats[(stats.kind == "feedback") & (stats.scope == loop)].time,
                      stats[(stats.kind == "feedback") & (stats.scope == loop)].out):
        fed[t[1]] = fed.get(t[1], 0) + out
    for priority in {p for p, _ in fed}:
        mine = [(p, i) for p, i in full["time"] if p == priority]
        last = max(i for p, i in fed if p == priority)
        assert mine == [(priority, i) for i in range(last + 1)]
    for (p, i), records in zip(full["time"], full["records"]):
        assert records == fed.get((p, i), 0)
    assert list(full["time"]) == sorted(full["time"])   # lexicographic = the loop's time order


def test_retained_by_operator_sums_to_the_total_and_names_each_trace():
    flow = ddlab.Dataflow()
    inp = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(inp, prioritized=False)
    view = labels.view()
    inp.insert([(1, 2), (2, 3), (5, 6)])
    flow.step()
    inp.remove([(2, 3)])
    flow.step()
    frame = flow.retained_updates(by_operator=True)
    assert list(frame.columns) == ["operator", "kind", "scope", "updates"]
    assert frame["updates"].sum() == flow.retained_updates()
    # once compacted the view holds exactly the labels; the loop's min keeps every
    # iteration's differences, so at least as many
    flow.compact()
    frame = flow.retained_updates(by_operator=True)
    assert frame["updates"].sum() == flow.retained_updates()
    views = frame[frame.kind == "view"]
    assert views.updates.tolist() == [len(view.to_dict())] == [4]
    mins = frame[(frame.kind == "reduce") & (frame.scope == "root/cc")]
    assert len(mins) == 1 and mins.updates.iloc[0] >= len(view.to_dict())
