"""``flow.why_loop``: a loop's iterations, records in difference and changing keys agree with
``flow.loop_differences`` (the statistics) and with a from-scratch count: plain label
propagation in Python on the last two epochs' inputs, differenced over (epoch, iteration)
as the papers define the updates at a time."""
from __future__ import annotations

import random
from collections import Counter

import pytest

import ddlab
from ddlab.algorithms import connected_components, reachability, strongly_connected_components

from .window_helpers import slide


def _label_steps(edges: Counter) -> list[dict]:
    """Body contents of plain CC from scratch: ``B(c) = step^(c+1)(seeds)`` per iteration
    ``c`` until the fixed point, as ``{(node, label): 1}``."""
    adj: dict = {}
    for (s, d), m in edges.items():
        if m > 0:
            adj.setdefault(s, set()).add(d)
            adj.setdefault(d, set()).add(s)
    labels = {n: n for n in adj}
    out = []
    while True:
        new = {n: min([labels[n]] + [labels[m] for m in adj[n]]) for n in adj}
        out.append({(n, lab): 1 for n, lab in new.items()})
        if new == labels:
            return out
        labels = new


def _differences(now: list[dict], before: list[dict]) -> list[Counter]:
    """Updates at ``(E, c)``: ``B_E(c) - B_E-1(c) - B_E(c-1) + B_E-1(c-1)``."""
    n = max(len(now), len(before)) + 1

    def at(seq, c):
        if c < 0 or not seq:
            return {}
        return seq[min(c, len(seq) - 1)]
    out = []
    for c in range(n):
        d = Counter()
        for sign, part in ((1, at(now, c)), (-1, at(before, c)), (-1, at(now, c - 1)),
                           (1, at(before, c - 1))):
            for rec, m in part.items():
                d[rec] += sign * m
        out.append(Counter({r: m for r, m in d.items() if m}))
    return out


def _window_moves(seed, nodes=80, width=90, moves=10):
    rng = random.Random(seed)
    stream = [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(width * 3)]
    positions = [0]
    for _ in range(moves):
        positions.append(max(0, min(2 * width, positions[-1] + rng.choice([-40, -7, 3, 11,
                                                                           60]))))
    return stream, positions, width


def test_why_loop_agrees_with_statistics_and_a_from_scratch_count_of_changing_keys():
    stream, positions, width = _window_moves(3)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    _ = connected_components(edges, prioritized=False).view()
    held: Counter = Counter()
    previous_steps: list = []
    for i, pos in enumerate(positions):
        held = slide(flow, edges, held, stream, pos, width)
        if i == 5:
            flow.compact()
        steps = _label_steps(held)
        diffs = _differences(steps, previous_steps)
        last = max((i for i, d in enumerate(diffs) if d), default=-1)
        expected = diffs[:last + 1]        # every iteration up to the last busy one
        previous_steps = steps
        (activity,) = flow.why_loop("root/cc")
        epoch = flow.epoch - 1
        stats = flow.loop_differences(epoch, "root/cc")
        assert activity.agrees
        assert activity.iterations["records"].tolist() == stats["records"].tolist()
        assert activity.iterations["records"].tolist() == [len(d) for d in expected]
        assert activity.iterations["keys"].tolist() == [len({r[0] for r in d})
                                                        for d in expected]
        assert [activity.keys_at.get(c, []) for c in activity.iterations["time"]] == \
            [sorted({r[0] for r in d}) for d in expected]
        assert activity.iterations["time"].tolist() == list(range(len(expected)))
        changed = Counter(k for d in expected for k in {r[0] for r in d})
        if changed:
            top = activity.top_keys
            assert int(top["iterations changed"].iloc[0]) == max(changed.values())
            for key, n in zip(top["key"].tolist(), top["iterations changed"].tolist()):
                assert changed[key] == n
        # the body's values for the top key, per iteration, as the from-scratch run has them
        if len(activity.top_keys):
            key = activity.top_keys["key"].tolist()[0]
            for coordinate, records in activity.top_keys["values"].tolist()[0]:
                held_there = steps[min(coordinate, len(steps) - 1)]
                assert records == sorted(r for r in held_there if r[0] == key)


@pytest.mark.parametrize("program", ["cc-prioritized", "reachability", "scc"])
def test_why_loop_counts_equal_loop_differences_for_every_loop(program):
    stream, positions, width = _window_moves(8, nodes=40, width=60, moves=6)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    roots = flow.input("roots")
    if program == "cc-prioritized":
        out = connected_components(edges, prioritized=True)
    elif program == "reachability":
        out = reachability(edges, roots)
    else:
        out = strongly_connected_components(edges, prioritized=False)
    _ = out.view()
    roots.insert([0, 1, 2])
    held: Counter = Counter()
    for pos in positions:
        held = slide(flow, edges, held, stream, pos, width)
        epoch = flow.epoch - 1
        activities = flow.why_loop()
        assert [a.loop for a in activities] == flow.loops()
        for activity in activities:
            stats = flow.loop_differences(epoch, activity.loop)
            assert activity.agrees, activity.notes
            assert activity.iterations["records"].tolist() == stats["records"].tolist()
            assert activity.used == len(stats)
            assert activity.busy == int((stats["records"] > 0).sum())
            per_op = activity.per_operator
            assert set(per_op["operator"]) <= set(flow.stats(epoch)["operator"])


def test_why_loop_refuses_unknown_loops_and_unstepped_flows():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    _ = connected_components(edges, prioritized=False).view()
    with pytest.raises(ddlab.DataflowError, match="step"):
        flow.why_loop()
    edges.insert([(1, 2)])
    flow.step()
    with pytest.raises(ddlab.DataflowError, match="root/cc"):
        flow.why_loop("root/nope")
