"""Graph workloads: from-scratch time, then single-edge updates (half insertions, half
deletions of existing edges, each its own epoch), timed from the call that pushes the change
to the moment its output changes are delivered to a subscriber.  Baselines on the same data:
networkx recomputing from scratch after a change, and scipy.sparse.csgraph for CC."""
from __future__ import annotations

import time

import numpy as np

import ddlab
from ddlab.engine import algorithms

from .datasets import edges as load_edges


def _timed_updates(flow, edge_input, delivered, edge_df, n_updates, seed):
    rng = np.random.default_rng(seed + 1)
    present = edge_df[["src", "dst"]].to_numpy()
    nodes = np.unique(present)
    latencies = []
    existing = set(map(tuple, present.tolist()))
    for i in range(n_updates):
        if i % 2 == 0:  # insert a new edge between existing nodes
            while True:
                u, v = (int(x) for x in rng.choice(nodes, 2))
                if (u, v) not in existing:
                    break
            existing.add((u, v))
            start = time.perf_counter()
            edge_input.insert([(u, v)])
        else:  # delete an existing edge
            u, v = (int(x) for x in present[rng.integers(len(present))])
            while (u, v) not in existing:
                u, v = (int(x) for x in present[rng.integers(len(present))])
            existing.discard((u, v))
            start = time.perf_counter()
            edge_input.remove([(u, v)])
        flow.step()
        assert delivered, "subscriber not called"
        latencies.append((time.perf_counter() - start) * 1000)
        delivered.clear()
    return np.array(latencies), existing


def run_cc(args):
    dataset = args.dataset or "collegemsg"
    edge_df = load_edges(dataset, args.seed)
    flow = ddlab.Dataflow()
    edge_input = flow.input("edges", columns=["src", "dst"])
    labels = algorithms.connected_components(edge_input)
    view = labels.view()
    delivered = []
    labels.subscribe(delivered.append)
    start = time.perf_counter()
    edge_input.insert(edge_df)
    flow.step()
    initial = time.perf_counter() - start
    delivered.clear()
    lat, existing = _timed_updates(flow, edge_input, delivered, edge_df, args.updates, args.seed)
    result = {
        "workload": "cc", "dataset": dataset, "edges": int(len(edge_df)),
        "nodes": int(len(np.unique(edge_df[["src", "dst"]].to_numpy()))),
        "initial_s": round(initial, 3),
        "update_median_ms": round(float(np.median(lat)), 3),
        "update_p99_ms": round(float(np.percentile(lat, 99)), 3),
        "updates": int(len(lat)),
        "retained_updates": flow.retained_updates(),
    }
    result.update(_cc_baselines(existing, view))
    return result


def _cc_baselines(existing, view):
    """Recompute from scratch on the final graph with networkx and scipy; check agreement."""
    out = {}
    edges = np.array(sorted(existing), dtype=np.int64)
    try:
        import networkx as nx

        g = nx.Graph()
        g.add_edges_from(edges.tolist())
        start = time.perf_counter()
        comps = list(nx.connected_components(g))
        out["networkx_recompute_s"] = round(time.perf_counter() - start, 4)
        want = {(n, min(c)): 1 for c in comps for n in c}
        out["matches_networkx"] = view.to_dict() == want
    except ImportError:
        pass
    try:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        start = time.perf_counter()
        ids, inv = np.unique(edges, return_inverse=True)
        inv = inv.reshape(edges.shape)
        m = coo_matrix((np.ones(len(edges)), (inv[:, 0], inv[:, 1])), shape=(len(ids), len(ids)))
        connected_components(m, directed=False)
        out["scipy_s"] = round(time.perf_counter() - start, 4)
    except ImportError:
        pass
    return out
