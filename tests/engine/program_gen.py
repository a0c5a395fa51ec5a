"""Random differential dataflow *programs* for the fuzzer, and their from-scratch evaluation.

A program is an expression tree over two inputs ``a`` and ``b`` of records ``(key, value)``
(small non-negative ints), using every operator of the API, with ``iterate`` and
``prioritize`` loops nested at random depths whose bodies read their own variable, outer
variables and outer inputs.  The same tree is built on the engine (:func:`build`) and
evaluated from scratch on plain ``{record: multiplicity}`` dicts (:func:`evaluate`), loops by
iterating the body to its fixed point.  Trees are drawn from hypothesis strategies, so a failing
program shrinks to a small one; ``repr`` of a tree reads as the ddlab code that builds it.

Every record has two int fields; loop bodies end in an operator whose output multiplicities
are bounded (distinct, a reduce or a set operation), so a loop either reaches a fixed point or
cycles, and multiplicities never overflow.
"""
from __future__ import annotations

import time

from collections import Counter
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from . import oracle

M = 5  # values live in 0..M-1 after the value-producing functions


# -- the user functions (named, so a shrunk program prints readably) --------------------------
def _named(name, fn):
    fn.__qualname__ = fn.__name__ = name
    return fn


MAPS = {
    "swap": (lambda r: (r[1], r[0])),
    "bump": (lambda r: (r[0], (r[1] + 1) % M)),
    "mix": (lambda r: ((r[0] + r[1]) % M, r[0])),
    "halve": (lambda r: (r[0] // 2, r[1])),
}
FILTERS = {
    "even_value": (lambda r: r[1] % 2 == 0),
    "key_below_value": (lambda r: r[0] < r[1]),
    "not_key_3": (lambda r: r[0] != 3),
}
FLAT_MAPS = {
    "fan2": (lambda r: [(r[0], r[1]), (r[0], (r[1] + 2) % M)]),
    "drop_odd": (lambda r: [r] if r[1] % 2 == 0 else []),
    "key_twice": (lambda r: [(r[0], r[0]), (r[1], r[1])]),
}
MAP_COLUMNS = {
    "col_swap": (lambda k, v: (v, k)),
    "col_sum": (lambda k, v: (k, (k + v) % M)),
}
FILTER_COLUMNS = {
    "col_small_key": (lambda k, v: k < 3),
    "col_distinct_fields": (lambda k, v: k != v),
}
THRESHOLDS = {
    "at_least_2": (lambda w: np.where(w >= 2, 1, 0), lambda m: 1 if m >= 2 else 0),
    "capped_at_2": (lambda w: np.clip(w, 0, 2), lambda m: min(max(m, 0), 2)),
}


def _reduce_fn(k, vals):
    return [(sum(v * m for v, m in vals) % M, 1)]


def _cogroup_fn(k, left, right):
    return [((sum(m for _, m in left) - sum(m for _, m in right)) % M, 1)]


def _reduce_all_fn(k, vals):
    """A global reduce's function: ``k`` is ``()``, the values the whole records."""
    return [((sum(r[0] * m for r, m in vals) % M, sum(r[1] * m for r, m in vals) % M), 1)]


def _pad(n):
    """A global count's or sum's one field as a two-field record ``(n mod M, 0)``."""
    return np.mod(n, M), np.zeros_like(n)


def _select_fn(k, x, y):
    return (k, (x + y) % M)


def _priority(*cols):
    return np.abs(cols[0]).astype(np.int64) % 3


for _table in (MAPS, FILTERS, FLAT_MAPS, MAP_COLUMNS, FILTER_COLUMNS):
    for _k, _f in list(_table.items()):
        _table[_k] = _named(_k, _f)


# -- the tree ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    op: str
    args: tuple = ()      # child nodes
    param: object = None  # a function name, k, a loop id ...

    def __repr__(self) -> str:
        a = self.args
        if self.op == "input":
            return self.param
        if self.op == "var":
            return f"v{self.param}"
        if self.op in ("iterate", "prioritize"):
            prio = "priority, " if self.op == "prioritize" else ""
            return f"{a[0]!r}.{self.op}({prio}lambda v{self.param}: {a[1]!r})"
        if self.op in BINARY:
            return f"{a[0]!r}.{self.op}({a[1]!r})"
        p = "" if self.param is None else repr(self.param)
        return f"{a[0]!r}.{self.op}({p})"


UNARY = ["map", "filter", "flat_map", "map_columns", "filter_columns", "project", "negate",
         "consolidate", "inspect", "distinct", "threshold", "count", "sum", "min", "max",
         "top_k", "reduce", "count_all", "sum_all", "min_all", "max_all", "top_k_all",
         "reduce_all"]
BINARY = ["concat", "join", "join_fn", "join_step", "union", "intersect", "except_", "cogroup"]
#: operators whose output multiplicities are bounded (by a constant, or by a leaf's): loop
#: bodies end in one, so multiplicities cannot grow from iteration to iteration
BOUNDED = ["distinct", "threshold", "count", "min", "max", "top_k", "reduce", "intersect",
           "cogroup", "count_all", "min_all", "max_all", "top_k_all", "reduce_all"]
PARAMS = {"map": list(MAPS), "filter": list(FILTERS), "flat_map": list(FLAT_MAPS),
          "map_columns": list(MAP_COLUMNS), "filter_columns": list(FILTER_COLUMNS),
          "threshold": list(THRESHOLDS), "top_k": [1, 2], "top_k_all": [1, 2]}


@st.composite
def programs(draw, max_loop_depth: int = 2, size: int = 6, _vars=(), _depth=0):
    """A random program tree (see the module docstring)."""
    leaves = [Node("input", (), "a"), Node("input", (), "b")] + [Node("var", (), v) for v in _vars]
    if size <= 1:
        # inside a loop, prefer the loop's own variable
        if _vars and draw(st.booleans()):
            return Node("var", (), _vars[-1])
        return draw(st.sampled_from(leaves))
    kinds = ["unary", "binary", "leaf"]
    if _depth < max_loop_depth:
        kinds.append("loop")
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        return draw(programs(max_loop_depth, 1, _vars, _depth))
    if kind == "unary":
        op = draw(st.sampled_from(UNARY))
        child = draw(programs(max_loop_depth, size - 1, _vars, _depth))
        if op == "project":
            return Node("project", (child,), (1, 0))
        param = draw(st.sampled_from(PARAMS[op])) if op in PARAMS else None
        return Node(op, (child,), param)
    if kind == "binary":
        op = draw(st.sampled_from(BINARY))
        split = draw(st.integers(1, max(1, size - 2)))
        left = draw(programs(max_loop_depth, split, _vars, _depth))
        right = draw(programs(max_loop_depth, max(1, size - 1 - split), _vars, _depth))
        return Node(op, (left, right))
    loop_id = _depth + 1
    op = draw(st.sampled_from(["iterate", "prioritize"]))
    seed = draw(programs(max_loop_depth, max(1, size // 3), _vars, _depth))
    if draw(st.booleans()):
        inner = draw(programs(max_loop_depth, max(1, size - 2), _vars + (loop_id,), _depth + 1))
    else:  # propagation along edges, which takes many iterations: v + v.join(edges)
        var = Node("var", (), loop_id)
        edges = draw(programs(max_loop_depth, max(1, size - 4), _vars + (loop_id,), _depth + 1))
        inner = Node("concat", (var, Node("join_step", (var, edges))))
    last = draw(st.sampled_from(BOUNDED))
    if last in BINARY:
        other = draw(programs(max_loop_depth, 1, _vars + (loop_id,), _depth + 1))
        body = Node(last, (inner, other))
    else:
        body = Node(last, (inner,), draw(st.sampled_from(PARAMS[last])) if last in PARAMS
                    else None)
    return Node(op, (seed, body), loop_id)


RECORD = st.tuples(st.integers(0, M - 1), st.integers(0, M - 1))
UPDATE = st.tuples(st.sampled_from(["a", "b"]), RECORD, st.sampled_from([1, 1, 1, -1, 2]))
#: epochs of updates; each epoch is given to the engine in one or more batches
EPOCHS = st.lists(st.lists(st.lists(UPDATE, max_size=5), min_size=1, max_size=3),
                  min_size=1, max_size=4)


# -- the engine side --------------------------------------------------------------------------
def build(node: Node, inputs: dict, env: dict | None = None):
    """The engine collection of ``node`` (inputs by name, loop variables in ``env``)."""
    env = env or {}
    op, a, p = node.op, node.args, node.param
    if op == "input":
        return inputs[p]
    if op == "var":
        return env[p]
    if op in ("iterate", "prioritize"):
        seed = build(a[0], inputs, env)
        if env:  # a loop inside a loop: build it in the innermost loop (its body may read it)
            seed = seed.enter(env[max(env)])

        def body(v):
            return build(a[1], inputs, {**env, p: v})
        if op == "iterate":
            return seed.iterate(body)
        return seed.prioritize(_priority, body)
    if op in BINARY:
        left, right = build(a[0], inputs, env), build(a[1], inputs, env)
        if op == "concat":
            return left.concat(right)
        if op == "join":
            return left.join(right, select=(0, 2))
        if op == "join_fn":
            return left.join(right, select=_select_fn)
        if op == "join_step":
            return left.join(right, select=(2, 1))
        if op == "cogroup":
            return left.cogroup(right, _cogroup_fn)
        return getattr(left, op)(right)
    c = build(a[0], inputs, env)
    if op == "map":
        return c.map(MAPS[p])
    if op == "filter":
        return c.filter(FILTERS[p])
    if op == "flat_map":
        return c.flat_map(FLAT_MAPS[p])
    if op == "map_columns":
        return c.map_columns(MAP_COLUMNS[p])
    if op == "filter_columns":
        return c.filter_columns(FILTER_COLUMNS[p])
    if op == "project":
        return c.project(*p)
    if op == "inspect":
        return c.inspect(lambda r, t, d: None)
    if op == "threshold":
        return c.threshold(THRESHOLDS[p][0])
    if op == "top_k":
        return c.top_k(p)
    if op == "reduce":
        return c.reduce(_reduce_fn)
    # global aggregates (key_columns=0: one group, the whole collection), padded back to
    # two fields where they give one
    if op == "count_all":
        return c.count(key_columns=0).map_columns(_pad)
    if op == "sum_all":
        return c.project(1).sum(key_columns=0).map_columns(_pad)
    if op in ("min_all", "max_all"):
        return getattr(c, op[:3])(key_columns=0)
    if op == "top_k_all":
        return c.top_k(p, key_columns=0)
    if op == "reduce_all":
        return c.reduce(_reduce_all_fn, key_columns=0)
    return getattr(c, op)()  # negate, consolidate, distinct, count, sum, min, max


# -- the from-scratch side --------------------------------------------------------------------
#: When set (a ``time.process_time()`` value), a from-scratch evaluation still running then gives
#: up as a slow fixed point: a few random programs grow joins whose pure-Python evaluation
#: would take minutes, and the fuzzer's time is better spent on other programs.
ORACLE_DEADLINE: list = [None]


def _check_deadline() -> None:
    deadline = ORACLE_DEADLINE[0]
    if deadline is not None and time.process_time() > deadline:
        raise Diverges(cycle=False)


class Diverges(Exception):
    """The from-scratch evaluation found no fixed point (``cycle`` tells whether it repeats)."""

    def __init__(self, cycle: bool):
        super().__init__("cycle" if cycle else "no fixed point within the bound")
        self.cycle = cycle


def _clean(d) -> dict:
    return {k: v for k, v in d.items() if v}


def _linear(c, fn):
    return oracle.linear(c, fn)


def evaluate(node: Node, data: dict, env: dict | None = None, bound: int = 40,
             iterations: list | None = None) -> dict:
    """``{record: multiplicity}`` of ``node`` on accumulated inputs ``data``; loops iterate
    their body to the fixed point (``Diverges`` if none within ``bound`` iterations).  The
    largest iteration count seen is appended to ``iterations``."""
    env = env or {}
    op, a, p = node.op, node.args, node.param

    def ev(n, e=env):
        _check_deadline()
        return evaluate(n, data, e, bound, iterations)

    if op == "input":
        return dict(data[p])
    if op == "var":
        return dict(env[p])
    if op in ("iterate", "prioritize"):
        seed = ev(a[0])
        if op == "iterate":
            return _fixed_point(lambda x: ev(a[1], {**env, p: x}), seed, bound, iterations)
        # priority classes in order, each starting from the previous fixed point plus its seeds
        x: dict = {}
        # class 0 always runs: outer collections enter the loop at (priority 0, iteration 0)
        classes = sorted({0} | {abs(r[0]) % 3 for r in seed})
        for q in classes:
            start = Counter(x)
            for r, m in seed.items():
                if abs(r[0]) % 3 == q:
                    start[r] += m
            x = _fixed_point(lambda y: ev(a[1], {**env, p: y}), _clean(start), bound, iterations)
        return x
    if op in BINARY:
        left, right = ev(a[0]), ev(a[1])
        if op == "concat":
            out = Counter(left)
            for r, m in right.items():
                out[r] += m
            return _clean(out)
        if op in ("join", "join_fn", "join_step"):
            joined = oracle.join(left, right)
            if op == "join":
                return _linear(joined, lambda r: [(r[0], r[2])])
            if op == "join_step":
                return _linear(joined, lambda r: [(r[2], r[1])])
            return _linear(joined, lambda r: [_select_fn(r[0], r[1], r[2])])
        if op == "cogroup":
            gl, gr = oracle.groups(left), oracle.groups(right)
            out = Counter()
            for k in set(gl) | set(gr):
                lv = [(r[1], m) for r, m in gl.get(k, [])]
                rv = [(r[1], m) for r, m in gr.get(k, [])]
                for v, m in _cogroup_fn(k, lv, rv):
                    out[(k, v)] += m
            return _clean(out)
        fn = {"union": max, "intersect": min, "except_": lambda x, y: max(x - y, 0)}[op]
        return oracle.setop(left, right, fn)
    c = ev(a[0])
    if op == "map":
        return _linear(c, lambda r: [MAPS[p](r)])
    if op == "filter":
        return _linear(c, lambda r: [r] if FILTERS[p](r) else [])
    if op == "flat_map":
        return _linear(c, FLAT_MAPS[p])
    if op == "map_columns":
        return _linear(c, lambda r: [tuple(int(x) for x in MAP_COLUMNS[p](*r))])
    if op == "filter_columns":
        return _linear(c, lambda r: [r] if FILTER_COLUMNS[p](*r) else [])
    if op == "project":
        return _linear(c, lambda r: [tuple(r[j] for j in p)])
    if op == "negate":
        return {r: -m for r, m in c.items()}
    if op in ("consolidate", "inspect"):
        return c
    if op == "distinct":
        return oracle.distinct(c)
    if op == "threshold":
        return _clean({r: THRESHOLDS[p][1](m) for r, m in c.items()})
    if op == "count":
        return oracle.count(c)
    if op == "sum":
        return oracle.sum_(c)
    if op in ("min", "max"):
        return oracle.extreme(c, op == "max")
    if op == "top_k":
        return oracle.top_k(c, p)
    if op == "reduce":
        out = Counter()
        for k, rows in oracle.groups(c).items():
            for v, m in _reduce_fn(k, [(r[1], mm) for r, mm in rows]):
                out[(k, v)] += m
        return _clean(out)
    present = {r: m for r, m in c.items() if m}
    if op == "count_all":
        total = sum(present.values())
        return {(total % M, 0): 1} if total else {}
    if op == "sum_all":
        values = Counter()
        for r, m in present.items():
            values[r[1]] += m
        values = _clean(values)
        return {(sum(v * m for v, m in values.items()) % M, 0): 1} if values else {}
    if op in ("min_all", "max_all"):
        positive = [r for r, m in present.items() if m > 0]
        return {(max if op == "max_all" else min)(positive): 1} if positive else {}
    if op == "top_k_all":
        out, left = Counter(), p
        for r in sorted((r for r, m in present.items() if m > 0), reverse=True):
            take = min(present[r], left)
            if take > 0:
                out[r] += take
            left -= take
        return dict(out)
    if op == "reduce_all":
        return {_reduce_all_fn((), list(present.items()))[0][0]: 1} if present else {}
    raise AssertionError(op)


def _fixed_point(body, x, bound, iterations):
    seen = [x]
    for i in range(1, bound + 1):
        _check_deadline()
        nxt = body(x)
        if nxt == x:
            if iterations is not None:
                iterations.append(i)
            return x
        x = nxt
        if x in seen:
            raise Diverges(cycle=True)
        seen.append(x)
    raise Diverges(cycle=False)


def count_nodes(node: Node) -> int:
    return 1 + sum(count_nodes(c) for c in node.args)


def loop_depth(node: Node) -> int:
    inner = max((loop_depth(c) for c in node.args), default=0)
    return inner + (1 if node.op in ("iterate", "prioritize") else 0)
