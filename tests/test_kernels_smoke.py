"""The compiled kernels compile and agree with the numpy path and networkx, without the
engine test package (the lowest-versions job, ``.ci/lowest``, runs this file alone: there
numba 0.60 compiles them against numpy 1.26).  The thorough checks are in
``tests/engine/test_kernels.py``."""
from __future__ import annotations

import random

import networkx as nx
import pytest

import ddlab
from ddlab import algorithms
from ddlab.engine import kernels, testing
from ddlab.engine.testing import tuned

pytestmark = pytest.mark.skipif(not kernels.available(), reason="numba is not installed")


def _epochs(seed: int, nodes: int = 30, steps: int = 6):
    rng = random.Random(seed)
    present: set = set()
    for _ in range(steps):
        adds = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(12)} - present
        rems = set(rng.sample(sorted(present), min(len(present), 5)))
        present = (present | adds) - rems
        yield sorted(adds), sorted(rems), set(present)


def _run(seed: int):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    views = [algorithms.connected_components(edges).view(),
             algorithms.strongly_connected_components(edges).view(),
             edges.count().view(), edges.max().view(), edges.project(1).distinct().view(),
             edges.join(edges.project(1, 0), select=(1, 2)).count(key_columns=2).view()]
    out = []
    for adds, rems, present in _epochs(seed):
        edges.insert(adds)
        edges.remove(rems)
        flow.step()
        out.append(([v.to_dict() for v in views], present))
    return out


@pytest.mark.parametrize("narrow", [None, 8], ids=["int64", "int32-batches"])
@pytest.mark.parametrize("seed", range(4))
def test_kernels_agree_with_the_numpy_path_and_networkx(seed, narrow):
    """``narrow``: spine batches from 8 rows on are stored as int32 (the kernels scan them)."""
    settings = {} if narrow is None else {"NARROW_ROWS": narrow}
    with testing.use_kernels(True), tuned(**settings):
        assert kernels.active(), kernels.status()
        on = _run(seed)
    with testing.use_kernels(False), tuned(**settings):
        off = _run(seed)
    assert [r[0] for r in on] == [r[0] for r in off]
    for views, present in on:
        g = nx.Graph(list(present))
        want = {(n, min(c)): 1 for c in nx.connected_components(g) for n in c}
        assert views[0] == want
        d = nx.DiGraph(list(present))
        comp = {n: i for i, c in enumerate(nx.strongly_connected_components(d)) for n in c}
        assert views[1] == {(a, b): 1 for a, b in present if comp[a] == comp[b]}
