"""The reference lines of the iteration plot: the window the current move landed on, computed
from scratch three ways, with the same metric as the differential line.

Why a module of its own: a comparison is only meaningful on the same window with the same
metric (``notes``: CIDR 2013, Figure 1).  For one window's edges, :func:`window_references`
gives, for every loop of the explorer's program, the records in difference per iteration of

- ``incremental``: the program computed from scratch in one epoch of a fresh flow, plain label
  propagation (differences over iterations only);
- ``prioritized``: the same with the prioritized loops;
- ``stateless``: what a system that keeps no state emits: the whole loop variable at every
  iteration, for as many iterations as the computation needs.  A nested loop's counts are
  summed over the outer iterations, as ``flow.loop_differences`` sums the differential line.

The first two are the engine's own ``loop_differences(0, loop)`` (empty iterations listed) on a fresh flow;
the stateless line is counted by :func:`stateless_curves`, a numpy re-execution of the same
label propagation that recomputes every iteration in full (it keeps nothing but the current
variable, as a stateless system does).

Each is timed (wall clock, once, in this process: building the flow and loading the window
included), and so is scipy's compiled recompute of the same components
(:func:`scipy_components`), so a move's time can be set beside what the window costs from
scratch in seconds as well as in records.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import ddlab
from ddlab import algorithms

__all__ = ["ALGORITHMS", "References", "ReferenceCache", "window_references",
           "stateless_curves", "scratch_curves", "scipy_components", "REFERENCE_NAMES", "SCIPY"]

#: Algorithm name -> (the loop scope its result is computed in, the results panel's noun).
ALGORITHMS = {"scc": ("root/scc", "strongly connected components"),
              "cc": ("root/cc", "connected components")}
#: The reference lines, in the order the plot and the status line list them.
REFERENCE_NAMES = ("stateless", "incremental", "prioritized")
#: The name of scipy's compiled recompute in :attr:`References.timings`.
SCIPY = "scipy"


@dataclass(frozen=True)
class References:
    """The reference curves of one window: ``curves[name][loop]`` records in difference per
    iteration (``name`` in :data:`REFERENCE_NAMES`), labelled with the window they are of;
    ``timings[name]``: the seconds each took, and ``timings["scipy"]`` those of scipy's
    compiled recompute of the same components (``None`` without scipy)."""

    position: int
    window: str
    curves: dict
    edges: int
    timings: dict = field(default_factory=dict)
    loops: tuple = field(default=())
    algorithm: str = "scc"

    @property
    def algorithm_name(self) -> str:
        """``"SCC"`` or ``"CC"``: what scipy's compiled run computed."""
        return self.algorithm.upper()

    @property
    def seconds(self) -> float:
        """All of the reference computations, scipy's included."""
        return float(sum(t for t in self.timings.values() if t is not None))

    def curve(self, name: str, loop: str) -> list[int]:
        return list(self.curves.get(name, {}).get(loop, []))

    def totals(self, loop: str) -> dict[str, int]:
        """Records in difference summed over the iterations, per reference line."""
        return {name: int(sum(self.curve(name, loop))) for name in REFERENCE_NAMES}


def window_references(edges: pd.DataFrame, algorithm: str, *, position: int = -1,
                      window: str = "") -> References:
    """The three reference lines of every loop of ``algorithm``'s explorer program (the
    algorithm, then connected components of its result for SCC) on ``edges`` (``src, dst``;
    duplicates ignored: a window is a simple graph)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"references: algorithm {algorithm!r} is not one of {sorted(ALGORITHMS)}")
    records = edges[["src", "dst"]].drop_duplicates()
    runs = {"stateless": lambda: stateless_curves(records, algorithm),
            "incremental": lambda: scratch_curves(records, algorithm, prioritized=False),
            "prioritized": lambda: scratch_curves(records, algorithm, prioritized=True)}
    curves, timings = {}, {}
    for name, run in runs.items():
        curves[name], timings[name] = _timed(run)
    timings[SCIPY] = scipy_components(records, algorithm)[1]
    loops = tuple(curves["incremental"])
    return References(position, window, curves, len(records), timings, loops, algorithm)


class ReferenceCache:
    """The reference lines of the last ``size`` windows computed, by position: a window
    visited again shows them at once (a mapping position -> :class:`References`)."""

    def __init__(self, algorithm: str, size: int = 64):
        self.algorithm, self.size = algorithm, size
        self._kept: OrderedDict[int, References] = OrderedDict()

    def get(self, position: int) -> References | None:
        return self._kept.get(position)

    def __iter__(self):
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def of(self, position: int, window: str, window_view) -> References:
        """Those of ``position`` (whose edges ``window_view`` holds now), computed if not
        kept; the most recently used are kept."""
        refs = self._kept.get(position)
        if refs is None:
            frame = window_view.to_pandas()
            frame = frame[frame["multiplicity"] > 0]
            edges = frame.iloc[:, :2].set_axis(["src", "dst"], axis=1)
            refs = window_references(edges, self.algorithm, position=position, window=window)
            self._kept[position] = refs
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        self._kept.move_to_end(position)
        return refs


def _timed(run):
    start = time.perf_counter()
    out = run()
    return out, time.perf_counter() - start


def scipy_components(records: pd.DataFrame, algorithm: str) -> tuple[np.ndarray | None,
                                                                      float | None]:
    """scipy's compiled recompute of ``records``' components (``src, dst``): strongly
    connected for ``"scc"``, connected for ``"cc"``; ``(label per node in sorted node order,
    seconds)``, the seconds covering the node numbering and the sparse matrix too.
    ``(None, None)`` without scipy."""
    try:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components
    except ImportError:
        return None, None
    start = time.perf_counter()
    ids, dense = np.unique(records[["src", "dst"]].to_numpy(dtype=np.int64).ravel(),
                           return_inverse=True)
    dense = dense.reshape(-1, 2)
    n = len(ids)
    matrix = csr_matrix((np.ones(len(dense), np.int8), (dense[:, 0], dense[:, 1])), shape=(n, n))
    _, labels = connected_components(matrix, directed=True,
                                     connection="strong" if algorithm == "scc" else "weak")
    return labels, time.perf_counter() - start


# -- the engine, from scratch ----------------------------------------------------------------

def _program(edges, algorithm: str, prioritized: bool) -> dict[str, str]:
    """Build the explorer's program on ``edges``; returns explorer loop path -> this flow's
    loop path (CC's prioritized loop has its own name)."""
    result = (algorithms.strongly_connected_components(edges, prioritized=prioritized)
              if algorithm == "scc" else edges)
    if prioritized:
        algorithms.connected_components_prioritized(result).view()
        here = "root/cc-prioritized"
    else:
        algorithms.connected_components(result, prioritized=False).view()
        here = "root/cc"
    loops = {"root/cc": here}
    if algorithm == "scc":
        loops.update({p: p for p in ("root/scc", "root/scc/reach", "root/scc/reach2")})
    return loops


def scratch_curves(records: pd.DataFrame, algorithm: str, *, prioritized: bool) -> dict:
    """Records in difference per iteration of each loop when ``records`` (``src, dst``) are
    computed from scratch in one epoch of a fresh flow (plain or prioritized propagation)."""
    # one worker whatever DDLAB_WORKERS says: a throwaway flow of one epoch gains nothing from
    # forking a team (and the team would outlive the call until a garbage collection)
    flow = ddlab.Dataflow("reference", stats_epochs=1, workers=1)
    edges = flow.input("edges", columns=["src", "dst"])
    loops = _program(edges, algorithm, prioritized)
    if len(records):
        edges.update(records.assign(diff=1))
    flow.step()
    return {mine: [int(r) for r in flow.loop_differences(0, theirs)["records"]]
            for mine, theirs in loops.items()}


# -- the stateless system ----------------------------------------------------------------------

def _propagate(n: int, seeds: np.ndarray, src: np.ndarray, dst: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Min-label propagation along ``src -> dst`` (dense node indices), seeded with each seed
    node's own index, recomputed in full every iteration until the labels stop changing.
    Returns the final labels (``-1``: none), and the variable's size at each iteration that
    changed it (the first iteration always does: it starts from nothing)."""
    none = np.int64(n)                       # larger than every label
    seeded = np.full(n, none, np.int64)
    seeded[seeds] = seeds
    current = np.full(n, none, np.int64)     # the variable: nothing yet
    sizes: list[int] = []
    while True:
        # one iteration of the body from the seeds' side: min(own label, sources' labels);
        # the variable after iteration i is body(variable after i-1), starting from the seeds
        basis = seeded if not sizes else current
        nxt = basis.copy()
        if len(src):
            np.minimum.at(nxt, dst, basis[src])
        if np.array_equal(nxt, current):
            break
        current = nxt
        sizes.append(int(np.count_nonzero(current < none)))
    labels = np.where(current < none, current, -1)
    return labels, current < none, sizes


def _sum_curves(curves: list[list[int]]) -> list[int]:
    out: list[int] = []
    for curve in curves:
        for i, v in enumerate(curve):
            if i < len(out):
                out[i] += v
            else:
                out.append(v)
    return out


def _cc(n: int, src: np.ndarray, dst: np.ndarray, present: np.ndarray) -> list[int]:
    """Stateless label propagation for connected components (undirected), seeds every node."""
    both_src = np.concatenate([src, dst])
    both_dst = np.concatenate([dst, src])
    _, _, sizes = _propagate(n, np.flatnonzero(present), both_src, both_dst)
    return sizes


def stateless_curves(records: pd.DataFrame, algorithm: str) -> dict:
    """For each loop of ``algorithm``'s explorer program: the records a stateless system
    emits per iteration on ``records`` (``src, dst``): the loop variable's size at every
    iteration the computation runs (one label per labelled node in label propagation; the
    remaining edges in SCC's outer loop), nested loops summed over the outer iterations."""
    records = records[["src", "dst"]].drop_duplicates()
    ids, dense = np.unique(records[["src", "dst"]].to_numpy(dtype=np.int64).ravel(),
                           return_inverse=True)
    dense = dense.reshape(-1, 2) if len(records) else np.zeros((0, 2), np.int64)
    n = len(ids)
    src, dst = dense[:, 0].copy(), dense[:, 1].copy()
    if algorithm == "cc":
        present = np.zeros(n, bool)
        present[src] = present[dst] = True
        return {"root/cc": _cc(n, src, dst, present)}
    if algorithm != "scc":
        raise ValueError(f"stateless_curves: algorithm {algorithm!r} is not one of "
                         f"{sorted(ALGORITHMS)}")

    def trim(cycle_src, cycle_dst, full_src, full_dst):
        """The edges of the full graph whose endpoints get the same label propagated along
        the cycle (seeds: the full graph's destinations), reversed; and the inner sizes."""
        labels, has, sizes = _propagate(n, np.unique(full_dst), cycle_src, cycle_dst)
        keep = has[full_src] & has[full_dst] & (labels[full_src] == labels[full_dst])
        return full_dst[keep], full_src[keep], sizes

    outer, reach, reach2 = [], [], []
    cycle = (src, dst)
    previous: set | None = None     # the outer variable before iteration 0: nothing
    while True:
        rev_src, rev_dst, forward_sizes = trim(cycle[0], cycle[1], src, dst)
        out_src, out_dst, backward_sizes = trim(rev_src, rev_dst, dst, src)
        reach.append(forward_sizes)
        reach2.append(backward_sizes)
        now = set(zip(out_src.tolist(), out_dst.tolist()))
        if now == (previous if previous is not None else set()):
            break                    # the body ran once more and changed nothing
        outer.append(len(now))
        previous, cycle = now, (out_src, out_dst)
    final = np.array(sorted(previous or ()), np.int64).reshape(-1, 2)
    present = np.zeros(n, bool)
    present[final[:, 0]] = present[final[:, 1]] = True
    return {"root/scc": outer, "root/scc/reach": _sum_curves(reach),
            "root/scc/reach2": _sum_curves(reach2),
            "root/cc": _cc(n, final[:, 0], final[:, 1], present)}
