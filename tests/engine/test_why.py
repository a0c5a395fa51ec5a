"""``flow.why``: explanations are sufficient (the program from scratch on the explanation's
input records alone produces the record), on random programs after many window moves
forward and back, and small where they should be (a connected component's label is
explained by a shortest path to the node holding the minimum).

The oracle is independent of the engine: the fuzzer's from-scratch evaluator
(``program_gen.evaluate``) for random programs, networkx for the paths.
"""
from __future__ import annotations

import os
import gc
import random
import re
import time
import types
from collections import Counter

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ddlab
from ddlab.engine.testing import tuned
from ddlab.algorithms import connected_components, reachability

from . import program_gen
from .program_gen import Diverges, build, evaluate, programs
from .window_helpers import slide

_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)
WHY_EXAMPLES = int(os.environ.get("DDLAB_WHY_EXAMPLES", "60"))


def _as_tuples(records: dict) -> dict:
    return {(r if isinstance(r, tuple) else (r,)): m for r, m in records.items()}


def _oracle(program, data):
    program_gen.ORACLE_DEADLINE[0] = time.monotonic() + 5
    try:
        return evaluate(program, data, bound=40)
    finally:
        program_gen.ORACLE_DEADLINE[0] = None


def _check_sufficient(program, flow, out, record, multiplicity, counts):
    why = flow.why(out, record)
    assert why.present and why.multiplicity == multiplicity
    counts[why.method] += 1
    sub = {name: _as_tuples(recs) for name, recs in why.records().items()}
    sub = {"a": sub.get("a", {}), "b": sub.get("b", {})}
    try:
        got = _oracle(program, sub).get(record, 0)
    except Diverges:
        counts["oracle gave up on the subset"] += 1
        return
    assert got * multiplicity > 0, (
        f"{program!r}: {record} (multiplicity {multiplicity}) explained by {sub} "
        f"({why.method}), but from scratch on those alone it has multiplicity {got}")
    assert why.verified and why.reproduced == got


#: a window over a random stream of updates: ``(input, record)`` events
STREAM = st.lists(st.tuples(st.sampled_from(["a", "b"]), program_gen.RECORD), min_size=4,
                  max_size=30)
MOVES = st.lists(st.sampled_from([1, 1, 1, -1, -1, 2, -2]), min_size=3, max_size=10)


@settings(max_examples=WHY_EXAMPLES, **_SETTINGS)
@given(program=programs(max_loop_depth=2, size=7), stream=STREAM, moves=MOVES,
       width=st.integers(2, 8), seed=st.integers(0, 10_000), compact=st.booleans())
def test_explanations_are_sufficient_after_window_moves_back_and_forth(program, stream, moves,
                                                                       width, seed, compact):
    """A window of ``width`` events slides forward and back over a random stream (each
    move one epoch of inserts and removes); after every move, random records of the output
    are explained and the explanation's inputs alone reproduce them from scratch."""
    rng = random.Random(seed)
    flow = ddlab.Dataflow(max_iterations=120)
    inputs = {"a": flow.input("a"), "b": flow.input("b")}
    out = build(program, inputs)
    view = out.view()
    counts: Counter = Counter()
    position = 0            # events [position, position + width) are in the window
    held = Counter()
    before: dict = {}       # the previous epoch's output and inputs
    for move in [1] + moves:
        target = max(0, min(len(stream) - 1, position + move)) if held else 0
        want = Counter(stream[target:target + width])
        for (name, rec), m in (want - held).items():
            inputs[name].update([(rec, m)])
        for (name, rec), m in (held - want).items():
            inputs[name].update([(rec, -m)])
        held, position = want, target
        data = {n: {r: m for (i, r), m in held.items() if i == n} for n in ("a", "b")}
        try:
            _oracle(program, data)
        except Diverges:
            return
        flow.step()
        if compact and rng.random() < 0.3:
            flow.compact()
        contents = view.to_dict()
        for record in rng.sample(sorted(contents, key=repr), min(2, len(contents))):
            _check_sufficient(program, flow, out, record, contents[record], counts)
        left = sorted((r for r in before.get("contents", {}) if r not in contents), key=repr)
        for record in left[:1]:
            why = flow.why(out, record)
            assert not why.present and why.previous is not None and why.previous.present
            sub = {n: _as_tuples(r) for n, r in why.previous.records().items()}
            got = _oracle(program, {"a": sub.get("a", {}), "b": sub.get("b", {})}).get(record, 0)
            assert got * before["contents"][record] > 0      # sufficient at the previous epoch
            last = {(n, r): d for n in ("a", "b") for r, d in
                    ((r, m - before["data"][n].get(r, 0)) for r, m in
                     {**{r: 0 for r in before["data"][n]}, **data[n]}.items()) if d}
            for n, frame in why.removed_by.items():
                for row in frame.itertuples(index=False, name=None):
                    assert last.get((n, tuple(row[:-1]))) == row[-1]   # a change of the move
        before = {"contents": contents, "data": data}


@pytest.mark.slow   # random programs under tiny trace limits: about 10 s
@settings(max_examples=WHY_EXAMPLES, **_SETTINGS)
@given(program=programs(max_loop_depth=2, size=7), epochs=program_gen.EPOCHS,
       seed=st.integers(0, 10_000))
def test_explanations_are_sufficient_with_small_trace_limits(program, epochs, seed):
    """The fuzzer's epochs (deletions, retractions below zero, several batches per epoch)
    with the traces spilling and merging every three rows, so explanations read spines of
    many compacted batches."""
    with tuned("tiny"):  # every threshold tiny: recent rows spill every three rows
        rng = random.Random(seed)
        flow = ddlab.Dataflow(max_iterations=120)
        inputs = {"a": flow.input("a"), "b": flow.input("b")}
        out = build(program, inputs)
        view = out.view()
        data = {"a": Counter(), "b": Counter()}
        counts: Counter = Counter()
        for batches in epochs:
            for batch in batches:
                for name in ("a", "b"):
                    ups = [(rec, d) for n, rec, d in batch if n == name]
                    if ups:
                        inputs[name].update(ups)
                        for rec, d in ups:
                            data[name][rec] += d
            try:
                _oracle(program, {k: {r: m for r, m in c.items() if m} for k, c in data.items()})
            except Diverges:
                return
            flow.step()
            contents = view.to_dict()
            for record in rng.sample(sorted(contents, key=repr), min(2, len(contents))):
                _check_sufficient(program, flow, out, record, contents[record], counts)


MONOTONE_PROGRAMS = {
    "join chain": lambda a, b: a.join(b, select=(0, 2)).join(b, select=(1, 2)).distinct(),
    "union of maps": lambda a, b: a.map(lambda r: (r[1], r[0])).union(b.filter(
        lambda r: r[0] < 4)),
    "min and max": lambda a, b: a.concat(b).min().concat(b.max()),
    "top 2": lambda a, b: a.concat(b).top_k(2),
    "intersect": lambda a, b: a.map(lambda r: (r[0] % 3, r[1] % 3)).distinct().intersect(
        b.map(lambda r: (r[0] % 3, r[1] % 3))),
    "reachability": lambda a, b: reachability(b, a.project(0)),
    "flat map loop": lambda a, b: a.iterate(
        lambda v: v.concat(v.flat_map(lambda r: [(r[1], r[0])])).distinct()),
}


@pytest.mark.parametrize("name", sorted(MONOTONE_PROGRAMS))
def test_monotone_programs_get_concise_explanations_that_are_sufficient_unchecked(name):
    """On programs that only grow with their inputs, the concise rules alone are sufficient:
    checked by the independent oracle with the engine's own replay switched off."""
    rng = random.Random(7)
    flow = ddlab.Dataflow()
    a, b = flow.input("a"), flow.input("b")
    out = MONOTONE_PROGRAMS[name](a, b)
    view = out.view()
    data = {"a": Counter(), "b": Counter()}
    explained = 0
    for _ in range(5):
        for name_, inp in (("a", a), ("b", b)):
            rows = [(rng.randrange(6), rng.randrange(6)) for _ in range(6)]
            inp.insert(rows)
            data[name_].update(rows)
            gone = rng.sample(sorted(data[name_]), 2)
            inp.remove(gone)
            data[name_].subtract(gone)
        flow.step()
        data = {k: Counter({r: m for r, m in c.items() if m}) for k, c in data.items()}
        contents = view.to_dict()
        explained += len(contents)
        for record in contents:
            why = flow.why(out, record, verify=False)
            assert why.method == "concise" and why.verified is None
            sub = {n: _as_tuples(r) for n, r in why.records().items()}
            replay_flow = ddlab.Dataflow()
            ra, rb = replay_flow.input("a"), replay_flow.input("b")
            rview = MONOTONE_PROGRAMS[name](ra, rb).view()
            ra.update(list(sub.get("a", {}).items()))
            rb.update(list(sub.get("b", {}).items()))
            replay_flow.step()
            assert rview.to_dict().get(record, 0) > 0, (name, record, sub)
            assert why.size <= sum(data["a"].values()) + sum(data["b"].values())
    assert explained


# -- connected components: a shortest path, not the whole component ---------------------------
def _graph_moves(rng, nodes=120, edges=160, moves=8):
    stream = [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges * 2)]
    positions = [0] + [rng.randrange(0, edges) for _ in range(moves)]
    return stream, positions, edges


@pytest.mark.parametrize("prioritized", [False, True])
def test_component_label_is_explained_by_a_shortest_path_to_the_minimum(prioritized):
    """For every explained node: the explanation's edges form a path (undirected) from the
    component's smallest node to the node, of length equal to the BFS distance between
    them (networkx), after window moves forward and back and a compaction; a node that is
    its component's minimum needs one edge (the one that makes it a node)."""
    rng = random.Random(11 if prioritized else 5)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges, prioritized=prioritized)
    view = labels.view()
    stream, positions, width = _graph_moves(rng)
    held: Counter = Counter()
    checked = 0
    for i, pos in enumerate(positions):
        held = slide(flow, edges, held, stream, pos, width)
        if i == 4:
            flow.compact()
        graph = nx.Graph()
        graph.add_edges_from(e for e, m in held.items() if m > 0)
        contents = view.to_dict()
        for node in rng.sample(sorted(graph.nodes), 12):
            label = min(nx.node_connected_component(graph, node))
            assert contents[(node, label)] == 1
            why = flow.why(labels, (node, label))
            assert why.method == "concise" and why.verified
            used = [(int(s), int(d)) for s, d in why.inputs["edges"][["src", "dst"]].values]
            distance = nx.shortest_path_length(graph, label, node)
            assert len(used) == max(distance, 1), (node, label, used, distance)
            path = nx.Graph(used)
            if distance:
                assert nx.shortest_path_length(path, label, node) == distance
                assert sorted(d for _, d in path.degree()) == [1, 1] + [2] * (distance - 1)
            else:
                assert node in path
            checked += 1
    assert checked == 12 * len(positions)


def test_a_record_that_left_is_explained_on_the_previous_epoch_with_its_cause():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges, prioritized=False)
    edges.insert([(1, 2), (2, 3), (3, 4), (4, 5), (8, 9), (5, 9)])
    flow.step()
    edges.remove([(2, 3)])
    edges.insert([(20, 21)])
    flow.step()
    why = flow.why(labels, (4, 1))
    assert not why.present and why.previous is not None
    assert why.previous.present and why.previous.verified
    prev_edges = sorted(map(tuple, why.previous.inputs["edges"][["src", "dst"]].values.tolist()))
    assert prev_edges == [(1, 2), (2, 3), (3, 4)]
    assert why.removed_by["edges"].to_dict("list") == {"src": [2], "dst": [3], "diff": [-1]}
    # an insertion can remove a record too: a smaller label arrives
    edges.insert([(0, 8)])
    flow.step()
    why = flow.why(labels, (9, 3))
    assert not why.present and why.previous is not None
    assert why.removed_by["edges"].to_dict("list") == {"src": [0], "dst": [8], "diff": [1]}
    # a record that was never there
    never = flow.why(labels, (4, 99))
    assert not never.present and never.previous is None and never.size == 0
    assert "not in" in never.summary()


def test_whole_groups_for_counts_and_winners_for_min():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["k", "v"])
    counts, smallest = xs.count(), xs.min()
    xs.insert([(1, 5), (1, 3), (1, 9), (2, 4)])
    flow.step()
    why = flow.why(counts, (1, 3))
    assert sorted(why.inputs["xs"]["v"]) == [3, 5, 9]
    why = flow.why(smallest, (1, 3))
    assert why.inputs["xs"][["k", "v"]].values.tolist() == [[1, 3]]
    assert "smallest of 3" in why.tree()


def test_strings_floats_and_a_python_select_are_explained():
    flow = ddlab.Dataflow()
    people = flow.input("people", columns=["id", "name"])
    scores = flow.input("scores", columns=["id", "score"])
    named = people.join(scores, select=lambda k, name, score: (name.upper(), score * 2.0))
    best = named.max()
    people.insert([(1, "ann"), (2, "bob"), (3, "ann")])
    scores.insert([(1, 1.5), (2, 4.0), (3, 2.5), (1, 0.5)])
    flow.step()
    why = flow.why(best, ("ANN", 5.0))
    assert why.verified and why.method == "concise"
    assert why.records() == {"people": {(3, "ann"): 1}, "scores": {(3, 2.5): 1}}


def test_why_refuses_what_it_cannot_explain():
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    loop_inner = []
    out = xs.iterate(lambda v: loop_inner.append(v) or v.distinct())
    shown = out.view()
    with pytest.raises(ddlab.DataflowError, match="step"):
        flow.why(out, 1)
    xs.insert([1])
    flow.step()
    with pytest.raises(ddlab.DataflowError, match="inside loop"):
        flow.why(loop_inner[0], 1)
    with pytest.raises(ddlab.DataflowError, match="not View"):
        flow.why(shown, 1)
    other = ddlab.Dataflow()
    with pytest.raises(ddlab.DataflowError, match="another Dataflow"):
        other.why(out, 1)
    off = ddlab.Dataflow(retain_inputs=False)
    ys = off.input("ys")
    mapped = ys.map(lambda y: y + 1)
    _ = mapped.view()
    ys.insert([1])
    off.step()
    with pytest.raises(ddlab.DataflowError, match="retain_inputs"):
        off.why(mapped, 2)


def test_nodes_can_be_grouped_by_the_operators_a_caller_keeps():
    """What a rules compiler's proof tree reads: only the operators it names, each with its
    name, children skipping everything in between."""
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges, prioritized=False)
    edges.insert([(1, 2), (2, 3)])
    flow.step()
    mins = {op.id for op in flow.operators if op.name == "min"}
    why = flow.why(labels, (3, 1), names={i: "label(n, min l) :- ..." for i in mins})
    nodes = why.nodes(keep=lambda op: op.id in mins or op.kind == "input")
    kinds = [n["kind"] for n in nodes]
    assert kinds[0] == "leave" and set(kinds[1:]) == {"reduce", "input"}
    assert all(n["name"] == "label(n, min l) :- ..." for n in nodes if n["kind"] == "reduce")
    by_id = {n["id"]: n for n in nodes}
    chain = [n for n in nodes if n["kind"] == "reduce"]
    assert [n["time"] for n in chain] == [(1,), (0,)]      # iteration by iteration to the seed
    assert any(by_id[c]["kind"] == "reduce" for c in chain[0]["children"])


def test_a_budget_too_small_gives_every_upstream_input_and_says_so():
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    ys = flow.input("ys")
    out = xs.map(lambda x: x % 3).distinct()
    _ = ys.distinct()
    xs.insert(list(range(30)))
    ys.insert([1])
    flow.step()
    why = flow.why(out, 2, budget=5)
    assert why.method == "all inputs" and why.verified
    assert sorted(why.inputs["xs"]["c0"]) == list(range(30)) and "ys" not in why.inputs
    assert any("budget" in note for note in why.notes)
    small = flow.why(out, 2)
    assert small.method == "concise" and small.size == 1


def test_an_explanation_keeps_nothing_of_its_flow_once_both_are_gone():
    """The tests an explanation builds for its patterns hold the flow's decoded values; they
    live as long as the flow's epoch (explanations of one epoch share them), not the
    process: once the flow and the explanation are dropped, no function anywhere still
    closes over those values.  (Kernels off: with them on, the compiled reduce's plan cache
    keeps every flow alive, an engine matter of its own.)"""
    import weakref

    marker = "why-scope-" + str(random.random())
    with tuned(KERNELS=False):
        flow = ddlab.Dataflow()
        edges = flow.input("edges", columns=["src", "dst"])
        labels = connected_components(edges)
        names = [f"{marker}-{i}" for i in range(4)]
        edges.insert(list(zip(names, names[1:])))
        flow.step()
        why = flow.why(labels, (names[-1], names[0]))
        assert why.present and why.verified
    gone = weakref.ref(flow)
    del flow, edges, labels, why
    gc.collect()
    assert gone() is None

    def holds_marker(value, depth=0):
        if isinstance(value, str):
            return value.startswith(marker)
        if depth < 3 and isinstance(value, (tuple, frozenset, set, list)):
            return any(holds_marker(v, depth + 1) for v in value)
        return False

    kept = [fn for fn in gc.get_objects() if isinstance(fn, types.FunctionType)
            and fn.__module__ != __name__ and fn.__closure__ and any(holds_marker(_cell(c)) for c in fn.__closure__)]
    assert kept == [], [getattr(fn, "__qualname__", fn) for fn in kept]


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:   # an empty cell
        return None


def test_an_absent_record_is_named_by_its_collections_user_name_and_a_wrong_arity_refused():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges)
    program = ddlab.rules(".input e from edges\nr(x, y) :- e(x, y).", {"edges": edges})
    edges.insert([(1, 2)])
    flow.step()
    assert flow.why(labels, (7, 7)).summary() == \
        "(7, 7) is not in the result of loop 'root/cc' after epoch 0."
    assert flow.why(program["r"], (5, 6)).summary() == "(5, 6) is not in r after epoch 0."
    assert flow.why(edges, (5, 6)).summary() == "(5, 6) is not in edges after epoch 0."
    assert flow.why(labels, (2, 1)).summary().startswith(
        "(2, 1) is in the result of loop 'root/cc' after epoch 0")
    with pytest.raises(ddlab.InputError, match=r"the record \(5, 6, 7\) has 3 fields, where r "
                                               r"has 2 \(x, y\)"):
        flow.why(program["r"], (5, 6, 7))
    with pytest.raises(ddlab.InputError, match=r"the record 5 has 1 field, where the result of "
                                               r"loop 'root/cc' has 2 \(node, label\)"):
        flow.why(labels, 5)


def test_explanations_of_one_epoch_share_their_reads_but_not_their_answers():
    """Explanations of one epoch read through a store the flow keeps for that epoch: the
    same record explained before and after others gets the same explanation; a budget still
    counts every row an explanation uses, read before or not; after a step they explain the
    new state (shortest paths against networkx, as for a first explanation)."""
    from ddlab.algorithms import shortest_paths

    rng = random.Random(3)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst", "w"])
    roots = flow.input("roots", columns=["v"])
    dist = shortest_paths(edges, roots)
    view = dist.view()
    graph = nx.gnm_random_graph(60, 150, seed=4, directed=True)
    edges.insert([(u, v, 1) for u, v in graph.edges])
    roots.insert([0])
    flow.step()

    def explained(node, budget=2_000_000):
        why = flow.why(dist, (node, view_of[node]), budget=budget)
        return why, sorted(map(tuple, why.inputs["edges"].values.tolist())), why.tree()

    for _ in range(2):
        view_of = {n: d for (n, d) in view.to_dict()}
        lengths = nx.single_source_shortest_path_length(graph, 0)
        nodes = rng.sample(sorted(n for n in view_of if lengths[n] >= 2), 6)
        first = {n: explained(n)[1:] for n in nodes}
        for n in reversed(nodes):
            why, used, tree = explained(n)
            assert (used, tree) == first[n] and why.verified
            assert len(used) == lengths[n]
        far = max(nodes, key=lambda n: lengths[n])
        assert any("budget" in note for note in explained(far, budget=5)[0].notes)
        gone = rng.sample(sorted(graph.edges), 20)       # the next epoch: other paths
        graph.remove_edges_from(gone)
        edges.remove([(u, v, 1) for u, v in gone])
        flow.step()


def test_an_explanation_says_where_its_time_went(monkeypatch):
    """``timings`` splits ``seconds`` into the tracing, the replay that checks it and the
    collection at the end: each part is charged to the work that took it (a tracer and a
    replay made slower by known amounts), and together they are at most ``seconds``."""
    from ddlab.engine.why import lineage, replay

    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges)
    edges.insert([(1, 2), (2, 3), (3, 4)])
    flow.step()
    traced, replayed = lineage.Tracer.run, replay.Replay.run

    def slow_trace(self, *args):
        time.sleep(0.05)
        return traced(self, *args)

    def slow_replay(self, *args):
        time.sleep(0.12)
        return replayed(self, *args)

    monkeypatch.setattr(lineage.Tracer, "run", slow_trace)
    monkeypatch.setattr(replay.Replay, "run", slow_replay)
    why = flow.why(labels, (4, 1))
    parts = why.timings
    assert why.verified and set(parts) == {"trace", "check", "collect"}
    assert 0.05 <= parts["trace"] < 0.12 <= parts["check"]
    assert parts["collect"] >= 0 and sum(parts.values()) <= why.seconds
    took = why.took()       # what %dd why shows: the whole, and the parts of a tenth or more
    assert took.startswith(f"{why.seconds * 1000:.0f} ms: ")
    assert int(re.search(r"checking (\d+)", took).group(1)) >= 120
    assert ("tracing" in took) == (parts["trace"] >= why.seconds / 10)
    unchecked = flow.why(labels, (4, 1), verify=False)
    assert set(unchecked.timings) == {"trace", "collect"} and unchecked.verified is None
