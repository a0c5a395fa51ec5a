"""Shared by the reliability tests: a program touching every kind of state, and a full
reading of everything a user can observe of a flow (to assert "exactly as before")."""
from __future__ import annotations

import numpy as np

import ddlab
from ddlab.algorithms import (connected_components, connected_components_prioritized,
                              strongly_connected_components)


def build_program(flow=None):
    """Edges and labels feeding CC, prioritized CC, SCC (doubly nested), a join, reduces, a
    user reduce, a threshold, views and a subscriber.  Returns ``(flow, inputs, views, seen)``."""
    flow = flow or ddlab.Dataflow(max_iterations=200)
    edges = flow.input("edges", columns=["src", "dst"])
    labels = flow.input("labels", columns=["node", "name"])
    views = {
        "cc": connected_components(edges).view(),
        "pcc": connected_components_prioritized(edges).view(),
        "scc": strongly_connected_components(edges).view(),
        "named": edges.join(labels, select=(1, 2)).count().view(),
        "degree": edges.project(0).count().view(),
        "fanout": edges.reduce(lambda k, vs: [(len(vs), 1)]).view(),
        "twice": edges.concat(edges).threshold(lambda w: np.where(w > 2, 1, 0)).view(),
        "top": edges.top_k(1).view(),
    }
    seen = []
    edges.map(lambda r: r[0] + r[1]).subscribe(seen.append)
    edges.arrange()  # an arrangement to read .history() from
    return flow, {"edges": edges, "labels": labels}, views, seen


def epochs(n=4, seed=0):
    """Deterministic update batches ``{input: [(record, diff), ...]}``, with deletions."""
    rng = np.random.default_rng(seed)
    live = []
    out = []
    for e in range(n):
        batch = {"edges": [], "labels": []}
        for _ in range(6):
            rec = (int(rng.integers(0, 8)), int(rng.integers(0, 8)))
            batch["edges"].append((rec, 1))
            live.append(rec)
        if e and live:
            gone = live.pop(int(rng.integers(0, len(live))))
            batch["edges"].append((gone, -1))
        batch["labels"].append(((int(rng.integers(0, 8)), f"n{e}"), 1))
        out.append(batch)
    return out


def apply(inputs, batch):
    for name, updates in batch.items():
        if updates:
            inputs[name].update(updates)


def reading(flow, inputs, views, seen=None, feeds=()):
    """Everything observable: views (contents and last changes), epoch, retained state,
    statistics without timings, pending inputs, subscriber deliveries, feed positions."""
    def frame(df):
        df = df.drop(columns=[c for c in df.columns if c == "seconds"]).astype(object)
        return df.where(df.notna(), None).to_dict("list")  # NaN != NaN

    out = {
        "epoch": flow.epoch,
        "retained": flow.retained_updates(),
        "stats": frame(flow.stats()),
        "views": {k: v.to_dict() for k, v in views.items()},
        "changes": {k: sorted(map(tuple, v.changes().itertuples(index=False)), key=repr)
                    for k, v in views.items()},
        "pending": {k: sorted(i.pending_updates(), key=repr) for k, i in inputs.items()},
    }
    log = getattr(flow, "epoch_log", None)
    if log is not None:
        out["epoch_log"] = frame(log())
    if seen is not None:
        out["seen"] = [list(x) for x in seen]
    out["feeds"] = [(f.position, f.epochs) for f in feeds]
    return out
