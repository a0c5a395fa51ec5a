"""Graph workloads (Naiad report, Table 2): time to compute from scratch, then single-edge
updates (half insertions of new edges, half deletions of existing ones), each its own epoch,
timed from the call that pushes the change to the moment the output changes reach a
subscriber.  Baselines on the same data, in the same run: networkx recomputing from scratch
(what a user without an incremental engine pays per change) and, for CC,
``scipy.sparse.csgraph`` (C speed, the practical from-scratch limit).  Every run also checks
that ddlab's final answer equals networkx's.

``--updates adversarial`` (CC) replaces the random changes by the hardest ones for label
propagation: deleting, one by one, every edge of the node that holds its component's minimum
label (see :func:`adversarial_deletions`).  CC rows add ``update_vs_scipy`` and
``initial_vs_scipy`` (ours over scipy's from-scratch recompute in the same run);
``--profile`` prints where the updates' time goes (:mod:`benchmarks.profile`).

Memory: ``initial_peak_rss_mb`` is the process's peak right after the from-scratch step;
``rss_before_flow_mb`` what it held before the dataflow existed (Python, numpy, pandas, numba
and the edge frame); ``engine_peak_mb`` the difference, the from-scratch run's own peak;
``peak_rss_mb`` the peak at the end, the harness's sets and checks included."""
from __future__ import annotations

import argparse
import time
from contextlib import nullcontext

import numpy as np

import ddlab
from ddlab.engine import algorithms

from .datasets import edges as load_edges
from .rss import peak_mb, resident_mb
from .work import WorkMeter, python_calls


def _random_updates(args, rows, weighted, present):
    """Single-edge changes: even steps insert a new random edge, odd steps delete an existing
    one.  Yields ``(sign, record)``, updating ``present`` (the caller's set of edge records:
    no second copy of millions of tuples) as it draws."""
    rng = np.random.default_rng(args.seed + 1)
    nodes = np.unique(rows[:, :2])
    pairs = {r[:2] for r in present} if weighted else present
    for i in range(args.updates):
        if i % 2 == 0:
            while True:
                u, v = (int(x) for x in rng.choice(nodes, 2))
                if (u, v) not in pairs:
                    break
            record = (u, v, int(rng.integers(1, 10))) if weighted else (u, v)
            present.add(record)
            pairs.add((u, v))
            yield 1, record
        else:
            while True:
                record = tuple(int(x) for x in rows[rng.integers(len(rows))])
                if record in present:
                    break
            present.discard(record)
            pairs.discard(record[:2])
            yield -1, record


def _components(edge_rows):
    """``(node ids, component index per node)`` of the undirected graph (scipy)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    ids, inv = np.unique(edge_rows[:, :2], return_inverse=True)
    inv = inv.reshape(len(edge_rows), 2)
    m = coo_matrix((np.ones(len(edge_rows)), (inv[:, 0], inv[:, 1])), shape=(len(ids), len(ids)))
    return ids, connected_components(m, directed=False)[1]


def adversarial_deletions(rows, limit: int) -> list[tuple]:
    """The adversarial update sequence for CC: for each component (largest first), delete
    every edge of the node holding its minimum label, one edge per epoch.  While the node
    keeps an edge the labels stay but every label's derivation through that edge must be
    retracted; the last deletion isolates the node and relabels its whole component."""
    ids, comp = _components(rows)
    sizes = np.bincount(comp)
    order = np.argsort(-sizes, kind="stable")
    low = np.full(len(sizes), np.iinfo(np.int64).max)
    np.minimum.at(low, comp, ids)
    out = []
    for c in order:
        m = low[c]
        incident = rows[(rows[:, 0] == m) | (rows[:, 1] == m)]
        out.extend(tuple(int(x) for x in r) for r in incident)
        if len(out) >= limit:
            break
    return out[:limit]


def _run(program, edge_df, args, weighted=False, roots=None, profiler=None):
    """Build ``program`` over an edge input, load ``edge_df``, then time single-edge updates
    (random, or ``--updates adversarial``)."""
    cols = ["src", "dst", "w"] if weighted else ["src", "dst"]
    before = resident_mb(live=True)  # the process and the edge frame, before the flow exists
    # no row budget: plain propagation on 3.4M edges emits more than the default 20M rows
    # per operator in its first epoch, which the budget (a notebook's safety net) refuses
    flow = ddlab.Dataflow(max_rows_per_epoch=None)
    edge_input = flow.input("edges", columns=cols)
    extra = []
    if roots is not None:
        root_input = flow.input("roots", columns=["node"])
        root_input.insert(list(roots))
        extra = [root_input]
    output = program(edge_input, *extra)
    view = output.view()
    delivered = []
    output.subscribe(delivered.append)
    start = time.perf_counter()
    edge_input.insert(edge_df[cols])
    flow.step()
    initial = time.perf_counter() - start
    initial_rss = peak_mb()  # the from-scratch run's peak, before the harness builds its sets
    delivered.clear()

    rows = edge_df[cols].to_numpy()
    present = {tuple(r) for r in rows.tolist()}
    if args.adversarial:
        changes = [(-1, r) for r in adversarial_deletions(rows, args.adversarial_count)]
    else:
        # drawn before timing (and before any profiler starts): the draw is not the engine's;
        # it leaves ``present`` at the final graph, which re-applying the changes keeps
        changes = list(_random_updates(args, rows, weighted, present))
    first_epoch = flow.epoch
    latencies, cpu = [], []
    meter = WorkMeter().start(flow)
    group = max(getattr(args, "in_flight", 1) or 1, 1)
    with profiler or nullcontext():
        for lo in range(0, len(changes), group):
            # ``--in-flight K``: K updates, each its own epoch (advance() between them), run
            # by one step; the time recorded is the step's over K (per update, amortised)
            batch = changes[lo:lo + group]
            start, start_cpu = time.perf_counter(), time.process_time()
            for k, (sign, record) in enumerate(batch):
                if sign > 0:
                    present.add(record)
                    edge_input.insert([record])
                else:
                    present.discard(record)
                    edge_input.remove([record])
                if k + 1 < len(batch):
                    flow.advance()
            flow.step()
            if len(delivered) != len(batch):
                raise AssertionError(f"the subscriber was called {len(delivered)} times for "
                                     f"{len(batch)} epochs")
            latencies.append((time.perf_counter() - start) * 1000 / len(batch))
            cpu.append((time.process_time() - start_cpu) * 1000 / len(batch))
            delivered.clear()
    lat = np.array(latencies)
    work = meter.per_update(flow, len(changes))
    if not args.adversarial:
        # a few more changes of the same kind, counted call by call (never timed)
        extra = argparse.Namespace(**{**vars(args), "updates": 20, "seed": args.seed + 1})
        more = list(_random_updates(extra, rows, weighted, present))

        def apply_more():
            for k, (sign, record) in enumerate(more):
                (edge_input.insert if sign > 0 else edge_input.remove)([record])
                if (k + 1) % group and k + 1 < len(more):
                    flow.advance()
                else:
                    flow.step()
        work.update(python_calls(apply_more, len(more)))
    out = {
        "edges": int(len(edge_df)),
        "nodes": int(len(np.unique(rows[:, :2]))),
        "initial_s": round(initial, 3),
        "initial_peak_rss_mb": initial_rss,
        "rss_before_flow_mb": round(before, 1),
        # what the from-scratch run added above it (its peak, when that is the process's)
        "engine_peak_mb": round(initial_rss - before, 1),
        "update_median_ms": round(float(np.median(lat)), 3),
        "update_p99_ms": round(float(np.percentile(lat, 99)), 3),
        # CPU time of this process: less sensitive than wall time to a busy shared machine
        "update_median_cpu_ms": round(float(np.median(cpu)), 3),
        "updates": int(len(changes)),
        "in_flight": group,
        "retained_updates": flow.retained_updates(),
        "peak_rss_mb": peak_mb(),  # before any baseline allocates
        **work,
    }
    if args.adversarial:
        out["updates_kind"] = "adversarial"
        out["adversarial_median_ms"] = out["update_median_ms"]
        out["adversarial_max_ms"] = round(float(lat.max()), 3)
    if profiler is not None:
        out.update(profiler.report(flow, first_epoch, len(lat)))
    return out, view, present


def _profiler(args):
    if not getattr(args, "profile", False):
        return None
    from .profile import UpdateProfiler

    return UpdateProfiler(True)


def _timed(fn, repeat=3):
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _ratios(out):
    if "networkx_recompute_s" in out:
        out["speedup_vs_networkx"] = round(
            out["networkx_recompute_s"] / (out["update_median_ms"] / 1000.0), 1)
    return out


def run_cc(args):
    dataset = args.dataset or "collegemsg"
    variant = getattr(args, "variant", None) or "auto"
    choice = {"prioritized": True, "plain": False, "auto": None}[variant]
    built = {}

    def program(e):
        built["cc"] = algorithms.connected_components(e, prioritized=choice)
        return built["cc"]

    edge_df = load_edges(dataset, args.seed)
    out, view, present = _run(program, edge_df, args, profiler=_profiler(args))
    out = {"workload": "cc", "dataset": dataset, "variant": variant, **out}
    if choice is None:
        out["choice"] = algorithms.explain_choice(built["cc"])
    edges = np.array(sorted(present), dtype=np.int64).reshape(-1, 2)
    import networkx as nx
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    g = nx.Graph()
    g.add_edges_from(edges.tolist())
    out["networkx_recompute_s"], comps = _timed(lambda: list(nx.connected_components(g)), 1)
    want = {(n, low): 1 for c in comps for low in [min(c)] for n in c}
    out["matches_networkx"] = view.to_dict() == want

    def scipy_cc():
        ids, inv = np.unique(edges, return_inverse=True)
        inv = inv.reshape(edges.shape)
        m = coo_matrix((np.ones(len(edges)), (inv[:, 0], inv[:, 1])), shape=(len(ids), len(ids)))
        return connected_components(m, directed=False)

    out["scipy_s"], _ = _timed(scipy_cc)
    out["speedup_vs_scipy"] = round(out["scipy_s"] / (out["update_median_ms"] / 1000.0), 1)
    out["update_vs_scipy"] = round(out["update_median_ms"] / 1000.0 / out["scipy_s"], 3)
    out["initial_vs_scipy"] = round(out["initial_s"] / out["scipy_s"], 2)
    if "adversarial_max_ms" in out:
        out["adversarial_max_vs_scipy"] = round(out["adversarial_max_ms"] / 1000.0
                                                / out["scipy_s"], 2)
    return _ratios(out)


def run_scc(args):
    dataset = args.dataset or "random-1m-200k"
    edge_df = load_edges(dataset, args.seed)
    built = {}

    def program(e):
        built["scc"] = algorithms.strongly_connected_components(e)
        return built["scc"]

    out, view, present = _run(program, edge_df, args, profiler=_profiler(args))
    out = {"workload": "scc", "dataset": dataset, **out,
           "choice": algorithms.explain_choice(built["scc"])}
    import networkx as nx

    g = nx.DiGraph()
    g.add_edges_from(present)
    out["networkx_recompute_s"], comps = _timed(
        lambda: list(nx.strongly_connected_components(g)), 1)
    comp = {n: i for i, c in enumerate(comps) for n in c}
    out["matches_networkx"] = view.to_dict() == {(a, b): 1 for a, b in present
                                                 if comp[a] == comp[b]}
    edges = np.array(sorted(present), dtype=np.int64).reshape(-1, 2)
    out["scipy_s"], _ = _timed(lambda: scipy_scc(edges))
    out["update_vs_scipy"] = round(out["update_median_ms"] / 1000.0 / out["scipy_s"], 3)
    out["initial_vs_scipy"] = round(out["initial_s"] / out["scipy_s"], 2)
    return _ratios(out)


def scipy_scc(edges: np.ndarray):
    """Strongly connected components from scratch with scipy (the same-run C baseline)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    ids, inv = np.unique(edges, return_inverse=True)
    inv = inv.reshape(edges.shape)
    m = coo_matrix((np.ones(len(edges)), (inv[:, 0], inv[:, 1])), shape=(len(ids), len(ids)))
    return connected_components(m, directed=True, connection="strong")


def run_sssp(args):
    dataset = args.dataset or "random-1m-1m"
    edge_df = load_edges(dataset, args.seed)
    rng = np.random.default_rng(args.seed + 7)
    edge_df = edge_df.assign(w=rng.integers(1, 10, len(edge_df)))
    variant = getattr(args, "variant", None) or "plain"
    program = (algorithms.shortest_paths_prioritized if variant == "prioritized"
               else algorithms.shortest_paths)
    # the sources: the nodes with the largest out-degrees (a random node reaches few others)
    roots = [int(r) for r in edge_df["src"].value_counts().index[:max(1, args.sources)]]
    out, view, present = _run(program, edge_df, args, weighted=True, roots=roots,
                              profiler=_profiler(args))
    out = {"workload": "sssp", "dataset": dataset, "variant": variant, **out,
           "sources": len(roots), "reached": len(view)}
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(roots)
    g.add_weighted_edges_from(present)
    out["networkx_recompute_s"], dist = _timed(
        lambda: nx.multi_source_dijkstra_path_length(g, set(roots)), 1)
    out["matches_networkx"] = view.to_dict() == {(n, d): 1 for n, d in dist.items()}
    return _ratios(out)
