"""Explanations read a trace through a key index (``engine/why/reading.KeyIndex``) once
it has been read by key often in an epoch: a path of a hundred steps reads one node at a
time.  The index must read exactly what the trace reads, and an explanation must not depend
on which of the two it went through.

The oracle is the trace's own lookup (``reading.read_keys``, the engine's ``gather``) for the
rows, and the same explanations computed with no index at all for the answers.
"""
from __future__ import annotations

import random
from collections import Counter

import networkx as nx
import pytest

import ddlab
from ddlab.algorithms import (connected_components, reachability, shortest_paths,
                              strongly_connected_components)
from ddlab.engine.testing import tuned
from ddlab.engine.why import history, reading


def _consolidated(rows) -> Counter:
    out: Counter = Counter()
    for rec, t, d in rows:
        out[(rec, t)] += d
    return Counter({k: d for k, d in out.items() if d})


def _keys_of(trace, interner, extra):
    nkey = trace.nkey or len(trace.kinds)
    found = {rec[:nkey] for rec, _, _ in reading._decode_rows(trace.all_rows(), trace.kinds,
                                                              interner)}
    return sorted(found, key=repr) + extra


@pytest.mark.parametrize("preset", [None, "tiny"])
def test_the_key_index_reads_what_the_trace_reads(preset):
    """Every key of every trace of flows with string, float and two-field keys (plus keys no
    record holds, and a value of the wrong kind), read through the index and through the
    trace, consolidated: the same updates.  ``tiny`` spills recent rows every three rows and
    merges often, so the traces are spines of many batches plus recent rows."""
    rng = random.Random(5)
    with tuned(preset) if preset else tuned():
        flow = ddlab.Dataflow()
        words = flow.input("words", columns=["a", "b"])
        pairs = flow.input("pairs", columns=["x", "y", "w"])
        cc = connected_components(words)
        keyed = pairs.count(key_columns=2).join(pairs.project(0, 1, 2), key_columns=2)
        by_weight = pairs.project(2, 0).count()          # a float key
        views = [cc.view(), keyed.view(), by_weight.view()]
        names = [f"n{i}" for i in range(30)]
        for epoch in range(4):
            words.insert([(rng.choice(names), rng.choice(names)) for _ in range(25)])
            pairs.insert([(rng.randrange(6), rng.randrange(6), rng.random()) for _ in range(40)])
            if epoch:
                words.remove([(rng.choice(names), rng.choice(names))])
            flow.step()
        assert all(v.to_dict() for v in views)
        traces = [t for op in flow.operators for t in op.traces() if t.kinds is not None]
        assert len(traces) >= 6
        for trace in traces:
            index = reading.KeyIndex(trace, flow.interner)
            nkey = trace.nkey or len(trace.kinds)
            extra = [("nobody",) * nkey, (10**9,) * nkey, (1.5,) * nkey]
            keys = _keys_of(trace, flow.interner, extra)
            for chunk in (keys[:1], keys[:7], keys):
                via_index = index.read_keys(chunk)
                via_trace = reading.read_keys(trace, flow.interner, chunk)
                assert set(via_index) == set(via_trace) == set(chunk)
                for key in chunk:
                    assert _consolidated(via_index[key]) == _consolidated(via_trace[key]), key


def _explained(flow, collection, records, program=None, relation=None):
    history._STORES.pop(flow, None)          # a fresh store: nothing read before
    out = []
    for rec in records:
        why = program.why(relation, rec) if program is not None else flow.why(collection, rec)
        if program is not None:
            out.append(repr(why))
            continue
        out.append((why.method, why.verified, why.reproduced, why.records(), why.tree(),
                    why.nodes(), why.notes))
    return out


#: how each graph kind is built from its edges and roots
GRAPH_KINDS = {"cc": lambda edges, roots: connected_components(edges),
               "scc": lambda edges, roots: strongly_connected_components(edges),
               "reach": reachability,
               "sssp": shortest_paths}


def _graph_flow(name):
    """``(flow, result, records)``: ``name`` run on a random directed graph, and records of
    the nodes farthest from the root (SCC: the first edges of the result)."""
    graph = nx.gnm_random_graph(120, 260, seed=7, directed=True)
    edge_list = sorted(graph.edges)
    lengths = nx.single_source_shortest_path_length(graph, 0)
    far = sorted(lengths, key=lambda n: (-lengths[n], n))[:8]
    flow = ddlab.Dataflow()
    weighted = name == "sssp"
    edges = flow.input("edges", columns=["src", "dst", "w"] if weighted else ["src", "dst"])
    roots = flow.input("roots", columns=["v"])
    out = GRAPH_KINDS[name](edges, roots)
    view = out.view()
    edges.insert([e + (1,) for e in edge_list] if weighted else edge_list)
    roots.insert([0])
    flow.step()
    held = sorted(view.to_dict(), key=repr)
    return flow, out, [r for r in held if r[0] in far] if name != "scc" else held[:8]


@pytest.mark.parametrize("name", ["cc", "scc", "reach", "sssp"])
def test_explanations_are_the_same_with_and_without_indexes(name, monkeypatch):
    """Long paths of a random directed graph, explained with every trace indexed at its
    first read and with no index: the same method, check, records, derivation and notes."""
    flow, out, records = _graph_flow(name)
    assert records
    monkeypatch.setattr(history, "INDEX_ROWS", 0)
    without = _explained(flow, out, records)
    monkeypatch.setattr(history, "INDEX_ROWS", 10**9)
    monkeypatch.setattr(history, "INDEX_AFTER_READS", 1)
    with_index = _explained(flow, out, records)
    assert history._STORES[flow].indexes          # the indexes were used
    assert with_index == without


def test_rules_proofs_are_the_same_with_and_without_indexes(monkeypatch):
    """A rules program's relations (recursion, ``min`` in recursion, ``count``, ``sum``):
    the same proofs either way."""
    rules = """
    .input edge(src, dst) from edges
    .input root(v) from roots
    fanout(x, count(y)) :- edge(x, y).
    hops(y, 0) :- root(y).
    seen(y) :- root(y).
    hops(y, min(d + 1)) :- hops(x, d), edge(x, y).
    seen(y) :- edge(x, y), seen(x).
    weight(x, sum(n)) :- fanout(x, n), seen(x).
    .output seen, hops, fanout, weight
    """
    graph = nx.gnm_random_graph(80, 200, seed=2, directed=True)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    roots = flow.input("roots", columns=["v"])
    program = ddlab.rules(rules, {"edges": edges, "roots": roots})
    views = {name: c.view() for name, c in program.items()}
    edges.insert(sorted(graph.edges))
    roots.insert([0])
    flow.step()
    asked = {name: sorted(v.to_dict(), key=repr)[:6] for name, v in views.items()}
    runs = []
    for rows, after in ((0, 16), (10**9, 1)):
        monkeypatch.setattr(history, "INDEX_ROWS", rows)
        monkeypatch.setattr(history, "INDEX_AFTER_READS", after)
        runs.append({name: _explained(flow, None, recs, program, name)
                     for name, recs in asked.items()})
    assert runs[0] == runs[1]
