"""The stateless baseline: connected components recomputed from scratch every iteration on Spark.

Why: the papers' Figure 1 compares the work per iteration of a stateless system (every
iteration reprocesses every label) with incremental, prioritized and differential
computation.  This is that "Stateless" line on the user's data, and an independent check of
the engine's components.  Label propagation on the undirected graph: each node's label becomes
the minimum of its own and its neighbours' labels, until no label changes.

Each iteration is one Spark job (a join and a group-by over all edges and labels).  The label
table is small (one row per node), so it comes back to pandas and is re-created for the next
iteration: the query plan stays one iteration long, with no RDD checkpointing (Connect-safe).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd

from .session import get_spark, require_pyspark

__all__ = ["BaselineResult", "stateless_cc"]


@dataclass
class BaselineResult:
    """Final ``labels`` (``node, label``: smallest node id of its component) and per-iteration work.

    ``iterations`` has ``iteration, records, changed, seconds``: ``records`` is the number of
    label records the iteration processed (one per directed edge plus one per node),
    ``changed`` how many labels changed.
    """

    labels: pd.DataFrame
    iterations: pd.DataFrame
    converged: bool

    @property
    def components(self) -> int:
        return int(self.labels["label"].nunique())

    @property
    def total_seconds(self) -> float:
        return float(self.iterations["seconds"].sum())

    def component_sets(self) -> list[set]:
        """The components as sets of nodes (largest first), e.g. to compare with networkx."""
        groups = self.labels.groupby("label")["node"].apply(set).tolist()
        return sorted(groups, key=len, reverse=True)

    def __repr__(self) -> str:
        state = "converged" if self.converged else "NOT converged"
        return (
            f"BaselineResult({len(self.labels):,} nodes, {self.components:,} components, "
            f"{len(self.iterations)} iterations {state}, {self.total_seconds:.2f} s)"
        )


def stateless_cc(edges, *, spark=None, max_iterations: int = 1000) -> BaselineResult:
    """Weakly connected components of ``edges`` (``src, dst``; rows with ``diff <= 0`` ignored).

    ``edges``: a Spark or pandas DataFrame, e.g. ``WindowBatches.window_records(k)``.
    """
    require_pyspark()
    from pyspark.sql import functions as F

    if isinstance(edges, pd.DataFrame):
        spark = spark or get_spark()
        edges = spark.createDataFrame(edges)
    spark = spark or edges.sparkSession
    if "diff" in edges.columns:
        edges = edges.where(F.col("diff") > 0)
    pairs = edges.select(F.col("src").alias("a"), F.col("dst").alias("b"))
    nodes = pairs.select(F.col("a").alias("node")).union(pairs.select(F.col("b").alias("node"))).distinct().toPandas()
    links = (
        pairs.where(F.col("a") != F.col("b"))
        .union(pairs.select(F.col("b").alias("a"), F.col("a").alias("b")).where(F.col("a") != F.col("b")))
        .distinct().cache()
    )
    n_links = links.count()
    labels = nodes.assign(label=nodes["node"]).sort_values("node", ignore_index=True)
    rows, converged = [], False
    for iteration in range(1, max_iterations + 1):
        t0 = time.perf_counter()
        current = spark.createDataFrame(labels)
        proposals = (links.join(current, links["b"] == current["node"])
                     .select(links["a"].alias("node"), current["label"]))
        new = (
            proposals.unionByName(current).groupBy("node").agg(F.min("label").alias("label"))
            .toPandas().sort_values("node", ignore_index=True)
        )
        changed = int((new["label"].to_numpy() != labels["label"].to_numpy()).sum())
        labels = new
        rows.append((iteration, n_links + len(labels), changed, time.perf_counter() - t0))
        if changed == 0:
            converged = True
            break
    links.unpersist()
    iterations = pd.DataFrame(rows, columns=["iteration", "records", "changed", "seconds"])
    return BaselineResult(labels=labels, iterations=iterations, converged=converged)
