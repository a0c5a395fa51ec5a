"""Loops (``engine/loops.py``, ``operators/loops.py``): bodies that return an outer
collection, and mutual recursion (``flow.iterate``), against their definitions."""
from __future__ import annotations

import networkx as nx
import pytest

import ddlab


@pytest.mark.parametrize("how", ["iterate", "prioritize", "flow.iterate"])
def test_loop_body_returning_an_outer_collection(how):
    flow = ddlab.Dataflow()
    seed, outer = flow.input("seed"), flow.input("outer")
    if how == "iterate":
        out = seed.iterate(lambda v: outer)
    elif how == "prioritize":
        out = seed.prioritize(0, lambda v: outer)
    else:
        (out,) = flow.iterate([seed], lambda v: outer)
    view = out.view()
    seed.insert([(1, 1)])
    outer.insert([(2, 2), (3, 0)])
    flow.step()
    assert view.to_dict() == {(2, 2): 1, (3, 0): 1}  # x1 = outer, and it stays there
    outer.remove([(3, 0)])
    flow.step()
    assert view.to_dict() == {(2, 2): 1}



def test_mutual_recursion_even_odd_distances():
    """Two loop variables defined in terms of each other: nodes at even / odd hop counts."""
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    roots = flow.input("roots", columns=["node"])

    def body(even, odd):
        step_from_odd = odd.join(edges, select=(1,)).concat(roots).distinct()
        step_from_even = even.join(edges, select=(1,)).distinct()
        return step_from_odd, step_from_even

    even, odd = flow.iterate([roots, roots.filter(lambda r: False)], body)
    even_view, odd_view = even.view(), odd.view()
    roots.insert([0])
    edges.insert([(0, 1), (1, 2), (2, 3), (3, 1)])
    flow.step()
    g = nx.DiGraph([(0, 1), (1, 2), (2, 3), (3, 1)])
    frontier = {0}
    even_set, odd_set = {0}, set()
    for hop in range(1, 10):
        frontier = {m for n in frontier for m in g.successors(n)}
        (even_set if hop % 2 == 0 else odd_set).update(frontier)
    assert set(even_view.to_dict()) == even_set
    assert set(odd_view.to_dict()) == odd_set
    edges.remove([(3, 1)])
    flow.step()
    assert set(even_view.to_dict()) == {0, 2}
    assert set(odd_view.to_dict()) == {1, 3}

