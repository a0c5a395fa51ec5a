"""The stateless baseline (connected components from scratch each iteration) against networkx."""
from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest

from ddlab.sources import load_dataset, stateless_cc, window_batches

from .conftest import collegemsg_pandas

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("error::FutureWarning")]


def nx_components(edges: pd.DataFrame) -> list[set]:
    graph = nx.Graph()
    graph.add_edges_from(edges[["src", "dst"]].itertuples(index=False))
    return sorted(map(set, nx.connected_components(graph)), key=lambda c: (len(c), min(c)), reverse=True)


def ours(result) -> list[set]:
    return sorted(result.component_sets(), key=lambda c: (len(c), min(c)), reverse=True)


def test_small_graph_with_self_loop_and_string_ids(spark):
    edges = pd.DataFrame({"src": ["a", "b", "d", "x", "e"], "dst": ["b", "c", "c", "x", "f"]})
    result = stateless_cc(edges)
    assert ours(result) == nx_components(edges)
    assert dict(zip(result.labels["node"], result.labels["label"]))["d"] == "a"
    assert result.converged and result.iterations["changed"].iloc[-1] == 0
    assert (result.iterations["records"] == 2 * 4 + 7).all()  # 4 undirected links + 7 nodes, every iteration


def test_collegemsg_windows_equal_networkx(spark):
    events = collegemsg_pandas()
    wb = window_batches(load_dataset("collegemsg"), "7d", "1d")
    for k in (120,):  # a 7-day window of median size (each iteration costs a Spark job)
        start, end = wb.window(k)
        window = events[(events["time"] >= start) & (events["time"] < end)]
        result = stateless_cc(wb.window_records(k))
        assert ours(result) == nx_components(window), f"window {k}"
        it = result.iterations
        assert list(it.columns) == ["iteration", "records", "changed", "seconds"]
        assert it["records"].nunique() == 1 and (it["seconds"] > 0).all() and result.converged
    wb.unpersist()
