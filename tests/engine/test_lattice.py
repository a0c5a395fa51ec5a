"""Lattice laws for product and lexicographic (packed priority) times."""
from hypothesis import given, strategies as st
import numpy as np

from ddlab.engine import lattice

COORD = st.integers(0, 50)
TIME = st.tuples(COORD, COORD, COORD)


@given(TIME, TIME, TIME)
def test_product_lattice_laws(a, b, c):
    lub, glb, leq = lattice.lub, lattice.glb, lattice.leq
    assert lub(a, b) == lub(b, a) and glb(a, b) == glb(b, a)
    assert lub(a, lub(b, c)) == lub(lub(a, b), c)
    assert glb(a, glb(b, c)) == glb(glb(a, b), c)
    assert lub(a, glb(a, b)) == a and glb(a, lub(a, b)) == a
    assert leq(a, lub(a, b)) and leq(glb(a, b), a)
    assert leq(a, b) == (lub(a, b) == b)
    # upper bounds of a and b are above their lub
    if leq(a, c) and leq(b, c):
        assert leq(lub(a, b), c)


@given(st.tuples(COORD, COORD), st.tuples(COORD, COORD))
def test_packed_priority_is_lexicographic(x, y):
    px, py = lattice.pack_priority(*x), lattice.pack_priority(*y)
    assert (px <= py) == (x <= y)          # Python tuples compare lexicographically
    assert lattice.unpack_priority(max(px, py)) == max(x, y)
    assert lattice.unpack_priority(px + 1) == (x[0], x[1] + 1)  # feedback adds one iteration


@given(st.lists(TIME, min_size=1, max_size=10), TIME)
def test_vectorised_order_and_compaction(times, f):
    m = np.array(times, dtype=np.int64)
    assert lattice.leq_rows(m, f).tolist() == [lattice.leq(t, f) for t in times]
    adv = lattice.advance(m, f)
    for t, a in zip(times, adv.tolist()):
        assert tuple(a) == lattice.lub(t, f)
        # compaction is invisible to every reader at or beyond f
        for u in (f, lattice.lub(f, t), tuple(x + 1 for x in f)):
            assert lattice.leq(t, u) == lattice.leq(tuple(a), u)


def test_display_of_prioritized_time():
    t = (3, lattice.pack_priority(5, 2))
    assert lattice.display_time(t, ("epoch", "priority")) == (3, (5, 2))
