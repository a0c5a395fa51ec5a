"""Workload ``spark-windows``: load a dataset and compute every window step's batch on local Spark,
then deliver each step's batch to the engine.

``python -m benchmarks spark-windows --dataset twitter24h --json`` (default twitter24h: 1-hour
window, 1-minute steps; ``collegemsg``: 7-day window, 1-day steps).  Targets: loading plus
all step batches, JVM start included, under 60 s; delivering one step's batch
(``input.update`` from a prepared pandas batch) under 5 ms median.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

WINDOWS = {"twitter24h": ("1h", "1min"), "collegemsg": ("7d", "1d")}


def _ms(values) -> tuple[float, float]:
    arr = np.asarray(values, dtype=float) * 1000.0
    return round(float(np.median(arr)), 3), round(float(np.percentile(arr, 99)), 3)


def run(args) -> dict:
    dataset = (getattr(args, "dataset", None) or "twitter24h").lower()
    if dataset not in WINDOWS:
        raise SystemExit(f"spark-windows: dataset must be one of {sorted(WINDOWS)}, not {dataset!r}")
    width, step = WINDOWS[dataset]

    t0 = perf_counter()
    from ddlab.sources import get_spark, load_dataset, window_batches

    spark = get_spark()  # local[*] unless SPARK_REMOTE / DDLAB_SPARK_MASTER say otherwise
    t_session = perf_counter()
    loaded = load_dataset(dataset)  # includes the report job (one pass over the file)
    t_loaded = perf_counter()
    batches = window_batches(loaded, width, step)  # every step's batch, cached on Spark
    t_windows = perf_counter()

    prepared = [batches.batch(k) for k in range(batches.steps)]  # streamed in chunks
    t_fetched = perf_counter()

    t_multi = perf_counter()
    multi = window_batches(loaded, width, step, multigraph=True)
    multigraph_s = perf_counter() - t_multi
    multi.unpersist()

    figures = {
        "workload": "spark-windows",
        "dataset": dataset,
        "window": width,
        "step": step,
        "events": loaded.report.rows_loaded,
        "steps": batches.steps,
        "update_rows": batches.total_rows,
        "batch_rows_median": int(np.median(batches.sizes)),
        "spark_master": ("connect" if type(spark).__module__.startswith("pyspark.sql.connect")
                         else str(spark.conf.get("spark.master", "connect"))),
        "session_start_s": round(t_session - t0, 2),
        "load_s": round(t_loaded - t_session, 2),
        "window_s": round(t_windows - t_loaded, 2),
        "load_and_window_s": round(t_windows - t0, 2),
        "fetch_all_batches_s": round(t_fetched - t_windows, 3),
        "window_multigraph_warm_s": round(multigraph_s, 2),
    }

    try:
        import ddlab

        Dataflow = ddlab.Dataflow
    except AttributeError:
        figures["deliver_note"] = "ddlab.Dataflow missing: engine delivery not measured"
        return figures

    flow = Dataflow("spark-windows")
    edges = flow.input("edges")
    update_s, step_s = [], []
    for batch in prepared:
        a = perf_counter()
        if len(batch):
            edges.update(batch)
        b = perf_counter()
        flow.step()
        c = perf_counter()
        update_s.append(b - a)
        step_s.append(c - b)
    figures["deliver_median_ms"], figures["deliver_p99_ms"] = _ms(update_s)
    figures["step_median_ms"], figures["step_p99_ms"] = _ms(step_s)
    figures["deliver_all_steps_s"] = round(float(sum(update_s) + sum(step_s)), 3)
    batches.unpersist()
    return figures
