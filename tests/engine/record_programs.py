"""Record programs for the operator tests: one engine program and its from-scratch oracle per
operator, random update epochs of ``(key, value)`` records (removals of absent records
included: negative multiplicities), and the check that runs a program at the top level,
inside a loop and inside a doubly nested loop.  ``test_linear``, ``test_join`` and
``test_reduce`` each run their operators' rows of :data:`UNARY`."""
from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import strategies as st

import ddlab
from . import oracle

RECORD = st.tuples(st.integers(0, 4), st.integers(0, 6))
EPOCH = st.lists(st.tuples(RECORD, st.sampled_from([1, 1, 1, -1, 2])), max_size=8)
EPOCHS = st.lists(EPOCH, min_size=1, max_size=5)

# name -> (unary engine program, oracle)
UNARY = {
    "map": (lambda c: c.map(lambda r: (r[1], r[0] + r[1])),
            lambda a: oracle.linear(a, lambda r: [(r[1], r[0] + r[1])])),
    "map_to_scalar": (lambda c: c.map(lambda r: r[0] * 10),
                      lambda a: oracle.linear(a, lambda r: [r[0] * 10])),
    "flat_map": (lambda c: c.flat_map(lambda r: [(r[0], i) for i in range(r[1] % 3)]),
                 lambda a: oracle.linear(a, lambda r: [(r[0], i) for i in range(r[1] % 3)])),
    "filter": (lambda c: c.filter(lambda r: r[1] % 2 == 0),
               lambda a: oracle.linear(a, lambda r: [r] if r[1] % 2 == 0 else [])),
    "map_columns": (lambda c: c.map_columns(lambda k, v: (v, k * 2)),
                    lambda a: oracle.linear(a, lambda r: [(r[1], r[0] * 2)])),
    "filter_columns": (lambda c: c.filter_columns(lambda k, v: v > k),
                       lambda a: oracle.linear(a, lambda r: [r] if r[1] > r[0] else [])),
    "project": (lambda c: c.project(1, 0, 0),
                lambda a: oracle.linear(a, lambda r: [(r[1], r[0], r[0])])),
    "negate": (lambda c: c.negate(), lambda a: {r: -m for r, m in a.items()}),
    "concat": (lambda c: c.concat(c.project(1, 0)), lambda a: _concat_swap(a)),
    "consolidate": (lambda c: c.concat(c.negate()).concat(c).consolidate(), lambda a: dict(a)),
    "distinct": (lambda c: c.distinct(), oracle.distinct),
    "count": (lambda c: c.count(), oracle.count),
    "sum": (lambda c: c.sum(), oracle.sum_),
    "min": (lambda c: c.min(), lambda a: oracle.extreme(a, False)),
    "max": (lambda c: c.max(), lambda a: oracle.extreme(a, True)),
    "top_k": (lambda c: c.top_k(2), lambda a: oracle.top_k(a, 2)),
    "bottom_k": (lambda c: c.top_k(1, largest=False), lambda a: oracle.top_k(a, 1, False)),
    "threshold": (lambda c: c.threshold(lambda w: np.where(w >= 2, 1, 0)),
                  lambda a: {r: 1 for r, m in a.items() if m >= 2}),
    "reduce": (lambda c: c.reduce(lambda k, vs: [(sum(v * m for v, m in vs) % 5, 1)]),
               lambda a: {(k, sum(r[1] * m for r, m in rows) % 5): 1
                          for k, rows in oracle.groups(a).items()}),
    "inspect": (lambda c: c.inspect(lambda r, t, d: None), lambda a: dict(a)),
    "self_join": (lambda c: c.join(c), lambda a: oracle.join(a, a)),
    "join_select_tuple": (lambda c: c.join(c.map(lambda r: (r[0], r[1] + 1)), select=(2, 1)),
                          lambda a: oracle.linear(
                              oracle.join(a, oracle.linear(a, lambda r: [(r[0], r[1] + 1)])),
                              lambda r: [(r[2], r[1])])),
    "join_select_fn": (lambda c: c.join(c, select=lambda k, x, y: (k, x * y)),
                       lambda a: oracle.linear(oracle.join(a, a), lambda r: [(r[0], r[1] * r[2])])),
    "union": (lambda c: c.union(c.project(1, 0)),
              lambda a: oracle.setop(a, _swap(a), max)),
    "intersect": (lambda c: c.intersect(c.project(1, 0)),
                  lambda a: oracle.setop(a, _swap(a), min)),
    "except": (lambda c: c.except_(c.project(1, 0)),
               lambda a: oracle.setop(a, _swap(a), lambda x, y: max(x - y, 0))),
    "cogroup": (lambda c: c.cogroup(c.project(1, 0),
                                    lambda k, left, right: [(len(left) * 10 + len(right), 1)]),
                lambda a: _cogroup_oracle(a)),
}


def _swap(a):
    return oracle.linear(a, lambda r: [(r[1], r[0])])


def _concat_swap(a):
    out = Counter(a)
    for r, m in _swap(a).items():
        out[r] += m
    return oracle.clean(out)


def _cogroup_oracle(a):
    left, right = oracle.groups(a), oracle.groups(_swap(a))
    return {(k, len(left.get(k, [])) * 10 + len(right.get(k, []))): 1
            for k in set(left) | set(right)}


def accumulate(epochs):
    acc = Counter()
    for epoch in epochs:
        for record, diff in epoch:
            acc[record] += diff
        yield oracle.clean(acc)


def _in_loop(program, depth):
    """Wrap a program so that it runs inside ``depth`` nested loops (its result is the fixed
    point of a body that recomputes it from the entered input every iteration)."""
    if depth == 0:
        return program

    def wrapped(c):
        inner = _in_loop(program, depth - 1)
        return program(c).iterate(lambda v: inner(c.enter(v)), name=f"wrap{depth}")
    return wrapped


#: row-wise Python is slow under hypothesis; these run at most one loop deep (loops are
#: covered at depth 1)
SHALLOW = ("map", "flat_map", "filter", "inspect", "reduce", "cogroup", "join_select_fn")


def check_operator(name: str, depth: int, epochs) -> None:
    """Run ``UNARY[name]`` inside ``depth`` nested loops over ``epochs``; after every epoch
    the view equals the oracle on the accumulated input."""
    if depth == 2 and name in SHALLOW:
        depth = 1
    program, expect = UNARY[name]
    flow = ddlab.Dataflow()
    records = flow.input("records", columns=["k", "v"])
    view = _in_loop(program, depth)(records).view()
    for epoch, want in zip(epochs, accumulate(epochs)):
        records.update(epoch)
        flow.step()
        assert view.to_dict() == expect(want)
