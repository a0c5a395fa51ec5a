"""The graph oracle every test shares: connected components and strongly connected components
from scratch with networkx, in the shapes ddlab's algorithms return.

Importable from any test as ``graph_oracle`` (pyproject's ``pythonpath`` puts ``tests/support``
on the path), so CC and SCC are defined once for the engine, the magics and the widgets.
"""
from __future__ import annotations

import networkx as nx


def cc_oracle(edges) -> dict:
    """``{(node, smallest node of its weakly connected component): 1}``: what
    ``connected_components`` holds for the edge set ``edges``."""
    out = {}
    for comp in nx.connected_components(nx.Graph(list(edges))):
        low = min(comp)
        out.update({(n, low): 1 for n in comp})
    return out


def scc_oracle(edges) -> dict:
    """``{(src, dst): 1}`` for the edges inside one strongly connected component (a self-loop
    is one): what ``strongly_connected_components`` holds for the edge set ``edges``."""
    edges = set(edges)
    comp = scc_of(edges)
    return {(a, b): 1 for a, b in edges if comp[a] == comp[b]}


def scc_of(edges) -> dict:
    """``{node: smallest node of its strongly connected component}``."""
    g = nx.DiGraph(list(edges))
    return {n: low for c in nx.strongly_connected_components(g) for low in [min(c)] for n in c}
