"""``python -m benchmarks why --dataset twitter24h|random-100k-500k|long-paths-20k``: how long
``flow.why`` takes to explain a connected-component label, and what explanations make the
engine keep; on ``long-paths-20k``, how long it takes to explain each collection kind where
explanations are paths of 100 edges or more.

twitter24h: the demo's window (one hour of @mentions and retweets, sliding by one minute),
moved 60 minutes forward and 30 back, connected components of the window's graph; then
100 nodes of the largest components, each label explained (checked by replay, as the
magics do) and also without the check.  random-100k-500k: the 500k-edge graph loaded in one
epoch (prioritized propagation, chosen automatically), 20 single-edge changes, then 100
random nodes.  Every explanation's path is compared with networkx's BFS distance.

Memory: what explanations retain is the input batches of the last two epochs (the rest is
read on demand from the traces the engine keeps anyway, and the replays are dropped after
each query; ``why_loop`` replays the loop's upstream from scratch, so its peak is a second
copy of that state for the time of the call).  ``--variant without`` switches that retention
off, so the two rows' RSS after the setup are the engine with and without it;
``retained_input_kb`` is its size at the end.

long-paths-20k (:func:`long_paths`): a 100 x 100 Manhattan street grid (one-way streets, rows
and columns alternating direction, the border a cycle: strongly connected, directed distances
up to about 200)
with node ids shuffled, 19,800 street edges plus 200 diagonals: 20,000 edges.  One flow per
collection kind: connected components, strongly connected components, reachability from a
root, shortest paths from a source (unit weights), and rules (``reach`` and ``dist(y, min(d +
1))`` in recursion, ``outs(x, count(y))`` not recursive).  Per kind, 100 records whose
explanation is a path of at least 100 edges (by networkx's BFS distance; ``outs``: random
nodes), each explained checked (``flow.why``; rules: ``program.why``, the proof tree): median
and p99 (target <= 100 ms and <= 300 ms, issue 29), and the slowest record.  An SCC edge is
explained by a shortest cycle through it (the algorithm's witness, ``engine/why/witness.py``),
and the grid's cycles are short (a block: 4 edges), so the grid's ``scc`` row does not ask
for long ones: ``scc_cycles`` does, on its own 20,000-edge graph (:func:`long_cycle_edges`,
every cycle at least 100 edges), 100 random edges.  Per kind, where the time
went (tracing, the checking replay, the collection after it: ``Explanation.timings``) and
the explanations' sizes (input records, derivation steps); a kind stops after
``KIND_BUDGET_S``.  ``--variant scc,rules_dist`` runs only those kinds (same queries).
"""
from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from collections.abc import Mapping

import numpy as np

from .datasets import DatasetUnavailable, edges as dataset_edges, events
from .rss import resident_mb


def _retained_input_kb(flow) -> float:
    total = 0
    for epoch in flow.statistics.epochs[-2:]:
        for batches in flow.statistics.inputs(epoch).values():
            for b in batches:
                total += sum(c.nbytes for c in b.cols) + b.diffs.nbytes
    return total / 1024.0


def _twitter(args):
    import ddlab
    from ddlab.algorithms import connected_components

    ev = events("twitter24h").sort_values("time", kind="stable")
    src, dst, when = ev["src"].to_numpy(), ev["dst"].to_numpy(), ev["time"].to_numpy()
    width, step = 3600, 60
    flow = ddlab.Dataflow("why-bench")
    edges = flow.input("edges", columns=["src", "dst"])
    cc = connected_components(edges)
    view = cc.view()
    held: Counter = Counter()

    def move_to(start):
        nonlocal held
        lo, hi = np.searchsorted(when, [start, start + width])
        want = Counter(zip(src[lo:hi].tolist(), dst[lo:hi].tolist()))
        ups = [(e, m) for e, m in (want - held).items()] + \
            [(e, -m) for e, m in (held - want).items()]
        if ups:
            edges.update(ups)
        held = want
        flow.step()

    start = 12 * 3600
    positions = [start + step * k for k in range(61)] + \
        [start + step * (60 - k) for k in range(1, 31)]
    for p in positions:
        move_to(p)
    return flow, cc, view, held, {"window": "1h", "step": "1min", "moves": len(positions)}


def _random(args, name):
    import ddlab
    from ddlab.algorithms import connected_components

    df = dataset_edges(name, seed=args.seed)
    flow = ddlab.Dataflow("why-bench", max_rows_per_epoch=None)
    edges = flow.input("edges", columns=["src", "dst"])
    cc = connected_components(edges)
    view = cc.view()
    edges.insert(df)
    t = time.perf_counter()
    flow.step()
    from_scratch = time.perf_counter() - t
    held = Counter(zip(df["src"].tolist(), df["dst"].tolist()))
    rng = np.random.default_rng(args.seed + 1)
    nodes = int(df[["src", "dst"]].max().max()) + 1
    present = list(held)
    for i in range(20):
        if i % 2 == 0:
            e = (int(rng.integers(nodes)), int(rng.integers(nodes)))
            edges.insert([e])
            held[e] += 1
        else:
            e = present[int(rng.integers(len(present)))]
            if held[e] > 0:
                edges.remove([e])
                held[e] -= 1
        flow.step()
    return flow, cc, view, held, {"from_scratch_s": round(from_scratch, 2), "updates": 20}


#: the long-path grid: rows x columns, and the diagonal edges added to reach 20,000 edges
GRID, DIAGONALS = (100, 100), 200
#: the shortest explanation path a long-path query asks for
LONG_PATH = 100

RULES = """
.input edge(src, dst) from edges
.input root(v) from roots
reach(y) :- root(y).
reach(y) :- reach(x), edge(x, y).
dist(y, 0) :- root(y).
dist(y, min(d + 1)) :- dist(x, d), edge(x, y).
outs(x, count(y)) :- edge(x, y).
.output reach, dist, outs
"""


def long_path_edges(seed: int = 0) -> list:
    """The long-path graph's 20,000 directed edges (see the module docstring)."""
    rows, cols = GRID
    rng = np.random.default_rng(seed)
    ids = rng.permutation(rows * cols)

    def node(r, c):
        return int(ids[r * cols + c])

    out = []
    for r in range(rows):
        for c in range(cols - 1):
            a, b = node(r, c), node(r, c + 1)
            out.append((a, b) if r % 2 == 0 else (b, a))
    for c in range(cols):
        for r in range(rows - 1):
            a, b = node(r, c), node(r + 1, c)
            out.append((a, b) if c % 2 == 1 else (b, a))
    taken, total = set(out), len(out) + DIAGONALS
    while len(out) < total:
        r, c = int(rng.integers(rows - 1)), int(rng.integers(cols - 1))
        e = (node(r, c), node(r + 1, c + 1))
        if e not in taken:
            taken.add(e)
            out.append(e)
    return out


#: seconds one collection kind's queries may take before the rest are left out (the row says
#: how many ran): a slow engine is reported, not waited for
KIND_BUDGET_S = 240


#: the parts of an explanation's time (``Explanation.timings``) the benchmark reports
PARTS = ("trace", "check", "collect")


def _timed(name, explain, records) -> dict:
    """Median, p99 and max milliseconds of ``explain(record)`` over ``records`` (those that
    ran within :data:`KIND_BUDGET_S`), and the slowest record; the medians of where the time
    went (:data:`PARTS`, and the ``other`` rest: reading whether the record is there, the
    answer's frames, a rules proof's tree and the collection after it), of the explanation's
    input records and of its derivation steps (what a miss is made of: counts that do not
    depend on the machine); progress on stderr."""
    lat, parts, sizes, steps = [], {p: [] for p in PARTS + ("other",)}, [], []
    start = time.perf_counter()
    for rec in records:
        t = time.perf_counter()
        answer = explain(rec)
        lat.append((time.perf_counter() - t) * 1000)
        assert answer.present, (name, rec)
        why = getattr(answer, "explanation", answer)   # a rules proof holds the engine's
        for p in PARTS:
            parts[p].append(why.timings.get(p, 0.0) * 1000)
        parts["other"].append(lat[-1] - sum(parts[p][-1] for p in PARTS))
        sizes.append(why.size)
        steps.append(len(why.steps))
        if time.perf_counter() - start > KIND_BUDGET_S:
            break
    slowest = records[int(np.argmax(lat))]
    lat = np.array(lat)
    split = {f"{p}_median_ms": round(float(np.median(v)), 1) for p, v in parts.items()}
    print(f"why long-paths {name}: {len(lat)} queries, median {np.median(lat):.1f} ms "
          f"({', '.join(f'{k[:-10]} {v}' for k, v in split.items())}), "
          f"p99 {np.percentile(lat, 99):.1f} ms, max {lat.max():.1f} ms ({slowest!r}); "
          f"median {np.median(sizes):.0f} input records, {np.median(steps):.0f} steps",
          file=sys.stderr, flush=True)
    return {"median_ms": round(float(np.median(lat)), 1),
            "p99_ms": round(float(np.percentile(lat, 99)), 1),
            "max_ms": round(float(lat.max()), 1), "slowest": repr(slowest),
            "queries": len(lat), **split,
            "inputs_median": float(np.median(sizes)), "steps_median": float(np.median(steps))}


def _far(distances: dict, rng, n: int = 100) -> list:
    """Up to ``n`` nodes at distance >= LONG_PATH (sorted, then sampled)."""
    pool = sorted(v for v, d in distances.items() if d >= LONG_PATH)
    return [int(x) for x in rng.choice(pool, size=min(n, len(pool)), replace=False)]


#: the collection kinds of the long-path benchmark, in the order they run
LONG_PATH_KINDS = ("cc", "scc", "scc_cycles", "reach", "sssp", "rules_reach", "rules_dist",
                   "rules_count")


#: the long-cycle graph: a ring of RING nodes, each with a chord CHORD nodes ahead
RING, CHORD = 10_000, 100


def long_cycle_edges(seed: int = 0) -> list:
    """20,000 directed edges where every cycle has at least ``CHORD`` (100) edges: a ring of
    10,000 nodes (ids shuffled), each node with an edge to the next and a chord to the node
    100 ahead.  A cycle goes round the ring a whole number of times, and each edge advances
    at most 100 places of 10,000.  Strongly connected: one component, whose shortest cycles
    through an edge have 100 edges (a chord) or 199 (a ring edge)."""
    ids = np.random.default_rng(seed + 1).permutation(RING)
    return [(int(ids[i]), int(ids[(i + step) % RING])) for step in (1, CHORD)
            for i in range(RING)]


def long_path_kinds(seed: int = 0, only=LONG_PATH_KINDS):
    """``(graph facts, {kind: (explain(record), records)})`` for the kinds in ``only`` (each
    kind's flow built and run once; the records sampled as the full run samples them, so a
    kind's queries are the same whichever kinds are chosen)."""
    import networkx as nx

    import ddlab
    from ddlab.algorithms import (connected_components, reachability, shortest_paths,
                                  strongly_connected_components)

    unknown = sorted(set(only) - set(LONG_PATH_KINDS))
    if unknown:
        raise SystemExit(f"why long-paths: unknown kind(s) {', '.join(unknown)} (kinds: "
                         f"{', '.join(LONG_PATH_KINDS)})")
    edge_list = long_path_edges(seed)
    digraph = nx.DiGraph(edge_list)
    rng = np.random.default_rng(seed)
    root = min(digraph.nodes)
    facts = {"edges": len(edge_list), "nodes": digraph.number_of_nodes()}

    def flow_with(build, weighted=False, edge_list=edge_list):
        flow = ddlab.Dataflow("why-long-paths")
        edges = flow.input("edges", columns=["src", "dst", "w"] if weighted else ["src", "dst"])
        roots = flow.input("roots", columns=["v"])
        out = build(edges, roots)
        views = [c.view() for c in (out.values() if isinstance(out, Mapping) else [out])]
        edges.insert([e + (1,) for e in edge_list] if weighted else edge_list)
        roots.insert([root])
        flow.step()
        return flow, out, views

    forward = nx.single_source_shortest_path_length(digraph, root)
    undirected = nx.single_source_shortest_path_length(digraph.to_undirected(), root)
    backward = nx.single_source_shortest_path_length(digraph.reverse(copy=False), root)
    # an SCC edge (u, v) of the component far from the smallest node both ways (what the
    # trims' derivation would hold); its explanation is a cycle through it, short here
    far_both = {u: min(forward[u], backward[u]) for u in forward if u in backward}
    # every kind's records are drawn in the same order whichever run: the same queries
    samples = {
        "cc": [(v, root) for v in _far(undirected, rng)],
        "scc": [next(iter(digraph.out_edges(u))) for u in _far(far_both, rng)],
        "reach": [(v, root) for v in _far(forward, rng)],
        "sssp": [(v, forward[v]) for v in _far(forward, rng)],
        "rules_reach": [v for v in _far(forward, rng)],
        "rules_dist": [(v, forward[v]) for v in _far(forward, rng)],
    }
    outs = [int(x) for x in rng.choice(sorted(digraph.nodes), size=100, replace=False)]
    samples["rules_count"] = [(v, digraph.out_degree(v)) for v in outs]
    cycles = long_cycle_edges(seed)
    picks = np.random.default_rng(seed + 2).choice(len(cycles), size=100, replace=False)
    samples["scc_cycles"] = [cycles[int(i)] for i in picks]
    builders = {"cc": connected_components, "scc": strongly_connected_components,
                "reach": reachability, "sssp": shortest_paths}
    kinds, program = {}, None
    for name in LONG_PATH_KINDS:
        if name not in only:
            continue
        if name == "scc_cycles":
            flow, out, _ = flow_with(lambda e, r: strongly_connected_components(e),
                                     edge_list=cycles)
            kinds[name] = (lambda rec, f=flow, c=out: f.why(c, rec), samples[name])
            continue
        if name in builders:
            algorithm = builders[name]
            flow, out, _ = flow_with(
                (lambda e, r, a=algorithm: a(e, r)) if name in ("reach", "sssp") else
                (lambda e, r, a=algorithm: a(e)), weighted=name == "sssp")
            kinds[name] = (lambda rec, f=flow, c=out: f.why(c, rec), samples[name])
            continue
        if program is None:
            _, program, _ = flow_with(lambda e, r: ddlab.rules(RULES, {"edges": e, "roots": r}))
        relation = name.split("_", 1)[1].replace("count", "outs")
        kinds[name] = (lambda rec, p=program, n=relation: p.why(n, rec), samples[name])
    return facts, kinds


def long_paths(args) -> dict:
    """Every collection kind explained on the long-path graph (see the module docstring);
    ``--variant cc,scc`` runs only those kinds."""
    only = tuple(args.variant.split(",")) if args.variant else LONG_PATH_KINDS
    facts, kinds = long_path_kinds(args.seed, only)
    result = {"workload": "why", "dataset": "long-paths-20k", **facts}
    for name, (explain, records) in kinds.items():
        for key, value in _timed(name, explain, records).items():
            result[f"{name}_{key}"] = value
    return result


def run(args):
    import networkx as nx

    from ddlab.engine import statistics

    dataset = args.dataset or "twitter24h"
    if dataset == "long-paths-20k":
        return long_paths(args)
    variant = args.variant or "default"
    if variant not in ("default", "without"):
        raise SystemExit("why: --variant default or without (no input-change retention)")
    if variant == "without":
        statistics.INPUT_EPOCHS = 0
    try:
        if dataset == "twitter24h":
            flow, cc, view, held, info = _twitter(args)
        elif dataset.startswith("random-"):
            flow, cc, view, held, info = _random(args, dataset)
        else:
            raise SystemExit("why: --dataset twitter24h or random-100k-500k")
    except DatasetUnavailable as err:
        return {"workload": "why", "dataset": dataset, "variant": variant,
                "skipped": f"dataset absent: {err}"}
    gc.collect()
    rss_setup = resident_mb()
    result = {"workload": "why", "dataset": dataset, "variant": variant, **info,
              "edges": sum(1 for m in held.values() if m > 0),
              "rss_after_setup_mb": round(rss_setup, 1),
              "retained_input_kb": round(_retained_input_kb(flow), 2),
              "retained_updates": flow.retained_updates()}
    if variant == "without":
        return result
    graph = nx.Graph()
    graph.add_edges_from(e for e, m in held.items() if m > 0)
    labels = dict(view.to_dict())
    label_of = {n: lab for (n, lab) in labels}
    rng = np.random.default_rng(args.seed)
    if dataset == "twitter24h":    # nodes of the larger components: labels worth explaining
        comps = sorted(nx.connected_components(graph), key=len, reverse=True)
        pool = sorted(n for c in comps[:20] for n in c)
    else:
        pool = sorted(graph.nodes)
    queries = [int(x) for x in rng.choice(pool, size=min(100, len(pool)), replace=False)]
    checked, sizes, lengths, concise = [], [], [], []
    for node in queries:
        rec = (node, label_of[node])
        t = time.perf_counter()
        why = flow.why(cc, rec)
        checked.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        flow.why(cc, rec, verify=False)
        concise.append((time.perf_counter() - t) * 1000)
        assert why.present and why.verified
        n_edges = len(why.inputs.get("edges", ()))
        sizes.append(n_edges)
        lengths.append((n_edges, max(1, nx.shortest_path_length(graph, rec[1], node))))
    gc.collect()
    rss_queries = resident_mb()
    t = time.perf_counter()
    loops = flow.why_loop()
    why_loop_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    cost = flow.why_cost()
    why_cost_ms = (time.perf_counter() - t) * 1000
    lat, unc = np.array(checked), np.array(concise)
    result.update({
        "queries": len(queries),
        "why_median_ms": round(float(np.median(lat)), 2),
        "why_p90_ms": round(float(np.percentile(lat, 90)), 2),
        "why_max_ms": round(float(lat.max()), 2),
        "why_unchecked_median_ms": round(float(np.median(unc)), 2),
        "explanation_edges_median": float(np.median(sizes)),
        "explanation_edges_max": int(max(sizes)),
        "path_equals_bfs_distance": sum(a == b for a, b in lengths) / len(lengths),
        "why_loop_ms": round(why_loop_ms, 1), "why_loop_agrees": all(a.agrees for a in loops),
        "why_cost_ms": round(why_cost_ms, 1), "why_cost_adds_up": cost.adds_up(),
        "rss_after_queries_mb": round(rss_queries, 1),
        "rss_after_why_loop_mb": round(resident_mb(), 1),
    })
    return result
