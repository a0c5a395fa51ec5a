"""A small flow with nested loops (SCC) beside a plain one (CC), stepped once."""
from __future__ import annotations

import ddlab
from ddlab.algorithms import connected_components, strongly_connected_components


def small_flow():
    flow = ddlab.Dataflow("t")
    edges = flow.input("edges", columns=["src", "dst"])
    scc = strongly_connected_components(edges)
    cc = connected_components(edges)
    views = scc.view(), cc.view()
    edges.insert([(1, 2), (2, 1), (2, 3)])
    flow.step()
    return flow, edges, views
