"""``rules``: transitive closure and shortest paths written as rules (``ddlab.rules``) beside
the same computations written directly with the engine's operators, and beside a from-scratch
recompute in C (scipy: a breadth-first search from every node for the closure's pairs,
Dijkstra for the paths), on a real graph in a sliding window at two window sizes.

For each (query, window size): the first window from scratch, then ``--moves`` window moves
(one epoch each, edges entering and leaving); medians of wall and CPU time per move.  The
compiled and the hand-written flows get the same update batches; their outputs are compared
after every move (they must be equal).  ``rules_vs_hand`` is the ratio of medians (target
<= 1.5); ``recompute_*`` is the from-scratch baseline on the last window.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

import ddlab
from ddlab.engine import algorithms

from .datasets import events as load_events
from .window_workloads import WindowSlider

DAY, HOUR = 86_400, 3_600
#: dataset -> (small window, large window, step) in seconds
WINDOWS = {"collegemsg": (3 * DAY, 14 * DAY, DAY), "twitter24h": (HOUR, 4 * HOUR, 10 * 60),
           "travian": (6 * HOUR, DAY, HOUR)}

#: the first window starts at this quantile of the event times
START_QUANTILE = 0.2

TC = """
.input edge(src, dst) from edges
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
.output path
"""
SSSP = """
.input edge(src, dst, w) from edges
.input root(v) from roots
dist(x, 0) :- root(x).
dist(y, min(d + w)) :- dist(x, d), edge(x, y, w).
.output dist
"""


def _hand_tc(edges):
    return edges.iterate(lambda p: p.project(1, 0).join(edges, select=(1, 2))
                         .concat(edges).distinct(), name="tc")


def _weight(src, dst):
    return (src * 7 + dst * 3) % 5 + 1


def _weighted(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out.insert(2, "w", _weight(out["src"].to_numpy(), out["dst"].to_numpy()))
    return out


def _flows(query: str, set_inputs: bool = True):
    """(flow, edges input, roots input, output view) for the rules and the hand-written;
    ``set_inputs``: the inputs are declared sets (``distinct=True``), else the compiled
    program reads them through a ``distinct`` of its own (``--variant plain-inputs``)."""
    made = {}
    for kind in ("rules", "hand"):
        flow = ddlab.Dataflow(max_rows_per_epoch=None)
        cols = ["src", "dst"] if query == "tc" else ["src", "dst", "w"]
        # the window's edges are a set (a simple graph) and so are the roots: both flows'
        # inputs say so (distinct=True, checked every epoch); the rules read them as they are
        edges = flow.input("edges", columns=cols, distinct=set_inputs)
        roots = flow.input("roots", columns=["v"], distinct=set_inputs)
        if kind == "rules":
            program = ddlab.rules(TC if query == "tc" else SSSP, {"edges": edges, "roots": roots})
            out = program["path" if query == "tc" else "dist"]
        elif query == "tc":
            out = _hand_tc(edges)
        else:
            out = algorithms.shortest_paths(edges, roots)
        made[kind] = (flow, edges, roots, out.view())
    return made


def _timed_step(flow, feed):
    start, cpu = time.perf_counter(), time.process_time()
    feed()
    flow.step()
    return time.perf_counter() - start, time.process_time() - cpu


def _recompute(query, held, root):
    """From scratch with scipy (C): all-pairs reachability by breadth-first search from every
    node (the closure's pairs), or Dijkstra from the root (the reachable nodes)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra, shortest_path

    start = time.perf_counter()
    arr = np.array(sorted(held), dtype=np.int64).reshape(-1, 2)
    nodes, codes = np.unique(arr, return_inverse=True)
    codes = codes.reshape(-1, 2)
    n = len(nodes)
    if query == "tc":
        graph = csr_matrix((np.ones(len(arr)), (codes[:, 0], codes[:, 1])), shape=(n, n))
        hops = shortest_path(graph, unweighted=True)
        pairs = int(np.isfinite(hops).sum() - n)     # reachable pairs i != j
        return time.perf_counter() - start, pairs
    w = _weight(arr[:, 0], arr[:, 1]).astype(float)
    graph = csr_matrix((w, (codes[:, 0], codes[:, 1])), shape=(n, n))
    at = np.searchsorted(nodes, root)
    dist = dijkstra(graph, indices=at) if at < n and nodes[at] == root else np.zeros(1)
    return time.perf_counter() - start, int(np.isfinite(dist).sum())


def _one(query, events, width, step, moves, set_inputs=True):
    slider = WindowSlider(events)
    # start where the data is dense (CollegeMsg's first days hold a handful of messages)
    t0 = int(np.quantile(slider.times, START_QUANTILE))
    window = (t0, t0 + width)
    first = slider.move(None, window)
    flows = _flows(query, set_inputs)
    root = int(first.groupby("src").size().idxmax()) if len(first) else 0
    batch = first if query == "tc" else _weighted(first)
    scratch = {}
    for kind, (flow, edges, roots, _) in flows.items():
        def feed(edges=edges, roots=roots):
            edges.update(batch)
            roots.insert([root])
        scratch[kind] = _timed_step(flow, feed)
    out_size = len(flows["rules"][3])
    assert flows["rules"][3].to_dict() == flows["hand"][3].to_dict()
    per_move = {"rules": [], "hand": []}
    for s in range(1, moves + 1):
        new = (t0 + s * step, t0 + s * step + width)
        delta = slider.move(window, new)
        window = new
        batch = delta if query == "tc" else _weighted(delta)
        for kind, (flow, edges, _, _) in flows.items():
            per_move[kind].append(_timed_step(flow, lambda edges=edges, batch=batch: edges.update(batch)))
        assert flows["rules"][3].to_dict() == flows["hand"][3].to_dict(), f"move {s}"
    held = set(slider.counts)
    recompute_s, recompute_size = _recompute(query, held, root)
    med = {k: float(np.median([w for w, _ in v])) for k, v in per_move.items()}
    cpu = {k: float(np.median([c for _, c in v])) for k, v in per_move.items()}
    return {
        "edges_first_window": int(len(first)), "edges_last_window": len(held),
        "output_first_window": out_size,
        "rules_scratch_s": round(scratch["rules"][0], 3),
        "hand_scratch_s": round(scratch["hand"][0], 3),
        "scratch_rules_vs_hand": round(scratch["rules"][0] / scratch["hand"][0], 2),
        "rules_move_ms": round(med["rules"] * 1000, 2), "hand_move_ms": round(med["hand"] * 1000, 2),
        "rules_move_cpu_ms": round(cpu["rules"] * 1000, 2),
        "hand_move_cpu_ms": round(cpu["hand"] * 1000, 2),
        "move_rules_vs_hand": round(med["rules"] / med["hand"], 2),
        "recompute_s": round(recompute_s, 4), "recompute_output": recompute_size,
        "output_last_window": len(flows["rules"][3]),
        "move_rules_vs_recompute": round(med["rules"] / recompute_s, 3),
    }


def run(args):
    set_inputs = getattr(args, "variant", None) != "plain-inputs"
    dataset = args.dataset or "collegemsg"
    small, large, step = WINDOWS.get(dataset, WINDOWS["collegemsg"])
    events = load_events(dataset)
    moves = args.moves or 20
    result = {"workload": "rules", "dataset": dataset, "moves": moves, "step_s": step,
              "set_inputs": set_inputs}
    for query in ("tc", "sssp"):
        for label, width in (("small", small), ("large", large)):
            for key, value in _one(query, events, width, step, moves, set_inputs).items():
                result[f"{query}_{label}_{key}"] = value
            result[f"{query}_{label}_window_s"] = width
    return result
