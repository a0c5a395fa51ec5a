"""``sql``: a join + group-by query written in SQL (``ddlab.sql``) beside the same program
written with the engine's operators, and beside DuckDB's from-scratch answer of the window,
on a real graph in a sliding window.

The query: per node, how many of its messages went to someone who wrote back (a two-key
self-join, then a count per sender).  The first window from scratch, then ``--moves`` window
moves (one epoch each); medians of wall and CPU time per move.  Both flows get the same
batches and their answers are compared after every move; DuckDB's answer on the last window
is compared too.  Targets (issue 52): ``move_sql_vs_hand`` and ``scratch_sql_vs_hand`` <= 1.5,
``move_sql_vs_duckdb`` <= 0.1.
"""
from __future__ import annotations

import time
from collections import Counter

import duckdb
import numpy as np
import pandas as pd

import ddlab
from ddlab.engine.sql import plain

from .datasets import events as load_events
from .rules_workload import START_QUANTILE, WINDOWS
from .window_workloads import WindowSlider

QUERY = """SELECT e.src, COUNT(*) AS reciprocated
FROM edges AS e JOIN edges AS f ON e.src = f.dst AND e.dst = f.src
GROUP BY e.src"""


def _hand(edges):
    return edges.join(edges.project(1, 0), key_columns=2).project(0).count()


def _flows():
    made = {}
    for kind in ("sql", "hand"):
        flow = ddlab.Dataflow(max_rows_per_epoch=None)
        edges = flow.input("edges", columns=["src", "dst"])
        out = ddlab.sql(QUERY, {"edges": edges}).result if kind == "sql" else _hand(edges)
        made[kind] = (flow, edges, out.view())
    return made


def _answer(view) -> Counter:
    return Counter({plain(r): m for r, m in view.to_dict().items()})


def _timed_step(flow, feed):
    start, cpu = time.perf_counter(), time.process_time()
    feed()
    flow.step()
    return time.perf_counter() - start, time.process_time() - cpu


def _duckdb(held):
    con = duckdb.connect()
    frame = pd.DataFrame(sorted(held), columns=["src", "dst"])  # noqa: F841  (read by name)
    con.execute("CREATE TABLE edges AS SELECT * FROM frame")
    rows = con.execute(QUERY).fetchall()      # once to warm up, then the best of three
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        con.execute(QUERY).fetchall()
        best = min(best, time.perf_counter() - start)
    return best, Counter(rows)


def _one(events, width, step, moves):
    slider = WindowSlider(events)
    t0 = int(np.quantile(slider.times, START_QUANTILE))
    window = (t0, t0 + width)
    first = slider.move(None, window)
    flows = _flows()
    scratch = {kind: _timed_step(flow, lambda e=edges: e.update(first))
               for kind, (flow, edges, _) in flows.items()}
    assert _answer(flows["sql"][2]) == _answer(flows["hand"][2])
    per_move = {"sql": [], "hand": []}
    for s in range(1, moves + 1):
        new = (t0 + s * step, t0 + s * step + width)
        delta = slider.move(window, new)
        window = new
        for kind, (flow, edges, _) in flows.items():
            per_move[kind].append(_timed_step(flow, lambda e=edges, d=delta: e.update(d)))
        assert _answer(flows["sql"][2]) == _answer(flows["hand"][2]), f"move {s}"
    duck_s, duck = _duckdb(set(slider.counts))
    assert duck == _answer(flows["sql"][2])
    med = {k: float(np.median([w for w, _ in v])) for k, v in per_move.items()}
    cpu = {k: float(np.median([c for _, c in v])) for k, v in per_move.items()}
    return {
        "edges_first_window": int(len(first)), "edges_last_window": len(slider.counts),
        "output_last_window": len(flows["sql"][2]),
        "sql_scratch_s": round(scratch["sql"][0], 3), "hand_scratch_s": round(scratch["hand"][0], 3),
        "scratch_sql_vs_hand": round(scratch["sql"][0] / scratch["hand"][0], 2),
        "sql_move_ms": round(med["sql"] * 1000, 2), "hand_move_ms": round(med["hand"] * 1000, 2),
        "sql_move_cpu_ms": round(cpu["sql"] * 1000, 2),
        "hand_move_cpu_ms": round(cpu["hand"] * 1000, 2),
        "move_sql_vs_hand": round(med["sql"] / med["hand"], 2),
        "duckdb_recompute_ms": round(duck_s * 1000, 2),
        "move_sql_vs_duckdb": round(med["sql"] / duck_s, 2),
    }


def run(args):
    dataset = args.dataset or "collegemsg"
    small, large, step = WINDOWS.get(dataset, WINDOWS["collegemsg"])
    events = load_events(dataset)
    moves = args.moves or 20
    result = {"workload": "sql", "dataset": dataset, "moves": moves, "step_s": step}
    for label, width in (("small", small), ("large", large)):
        for key, value in _one(events, width, step, moves).items():
            result[f"{label}_{key}"] = value
        result[f"{label}_window_s"] = width
    return result
