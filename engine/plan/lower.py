"""The one lowering: a logical plan (:mod:`.nodes`) onto a flow's engine operators.

Every node becomes ordinary collection operators (``map``/``flat_map``/``filter`` for
row-wise work, ``join``, ``reduce``, ``distinct``, the set operations, one engine ``Loop``
per :class:`~.nodes.FixGroup`), so views, ``why``, ``%dd graph`` and statistics see nothing
special.  :attr:`Lowering.operators` records which operators each node became (for
``explain``).  A node read twice (a CTE) is lowered once.
"""
from __future__ import annotations

from functools import cmp_to_key

from ..collection import Collection
from ..errors import DataflowError
from .nodes import (Aggregate, Distinct, Filter, Fix, Join, Node, Project, Ref, Scan, SemiJoin,
                    SetOp, TopK)
from .values import NULL, Bool, Int, box, box_row, isnull, key_form, unbox, unbox_row

__all__ = ["Lowering", "MARK"]

#: the record of the hidden one-row input that keeps a global aggregate's group (and a
#: NOT IN's status) alive over an empty input; never equal to a user's value
MARK = "\x00ddlab: the unit row\x00"
ZERO = Int(0)


def _rec(r) -> tuple:
    return r if isinstance(r, tuple) else (r,)


class Lowering:
    """Lowers plan nodes onto ``flow``, reading ``inputs`` (name -> collection) for scans.
    ``prefix`` starts every operator's name (``"sql q: "``)."""

    def __init__(self, flow, inputs: dict, prefix: str = ""):
        self.flow, self.inputs, self.prefix = flow, dict(inputs), prefix
        self.operators: dict = {}  # id(node) -> [operator labels]
        self.loops: list = []
        self._memo: dict = {}
        self._refs: dict = {}
        self._unit = None
        self._context = None  # the FixGroup whose loop is being built, and its variables
        self._vars: dict = {}
        self._claimed: set = set()
        self.fused: set = set()  # ids of nodes composed into the operator that reads them

    # -- entry -----------------------------------------------------------------------------
    def lower(self, node: Node) -> Collection:
        key = self._key(node)
        got = self._memo.get(key)
        if got is not None:
            return got
        start = len(self.flow.operators)
        out = getattr(self, "_" + type(node).__name__.lower())(node)
        # the operators built here, less those a nested lower() claimed for its node
        own = [op for op in self.flow.operators[start:] if op.id not in self._claimed]
        self._claimed.update(op.id for op in own)
        self.operators.setdefault(id(node), []).extend(op.label for op in own)
        self._memo[key] = out
        return out

    def _key(self, node):
        ctx = id(self._context) if self._context is not None and self._reads_refs(node) else None
        return (id(node), ctx)

    def rows(self, node: Node):
        """``(collection, fn)``: ``node``'s records are ``fn(record)`` (a stored tuple, or
        None for no record) of ``collection``'s records; ``fn`` None: they are the records
        themselves.  Scans, filters and projections are not built on their own but composed
        into the row-wise operator that reads them (one ``flat_map`` where there would be a
        chain of maps); :attr:`fused` lists them."""
        got = self._memo.get(self._key(node))
        if got is not None:
            return got, None
        if isinstance(node, Scan):
            source = self.inputs.get(node.source)
            if source is None:
                raise DataflowError(f"no input {node.source!r} was given")
            self.fused.add(id(node))
            return source, box_row
        if isinstance(node, Filter):
            base, f = self.rows(node.child)
            pred = node.predicate
            self.fused.add(id(node))

            def keep(r, f=f):
                x = f(r) if f is not None else _rec(r)
                return x if x is not None and pred.eval(unbox_row(x)) is True else None
            return base, keep
        if isinstance(node, Project):
            base, f = self.rows(node.child)
            exprs = tuple(node.exprs)
            self.fused.add(id(node))

            def project(r, f=f):
                x = f(r) if f is not None else _rec(r)
                if x is None:
                    return None
                row = unbox_row(x)
                return tuple(box(e.eval(row)) for e in exprs)
            return base, project
        return self.lower(node), None

    def _materialize(self, node, what: str) -> Collection:
        base, f = self.rows(node)
        self.fused.discard(id(node))
        if f is None:
            return base
        return base.flat_map(lambda r: _one(f(r)), name=self._name(what)).rename(*node.columns)

    def _reads_refs(self, node) -> bool:
        got = self._refs.get(id(node))
        if got is None:
            got = isinstance(node, Ref) or any(self._reads_refs(c) for c in node.inputs
                                              if not isinstance(node, Fix))
            self._refs[id(node)] = got
        return got

    def _name(self, what: str) -> str:
        return f"{self.prefix}{what}"

    def unit(self) -> Collection:
        """A hidden input holding one record ``(0, MARK)`` from the next step on."""
        if self._unit is None:
            self._unit = self.flow.input(self._name("unit"), columns=["key", "mark"])
            self._unit.insert([(ZERO, MARK)])
        return self._unit

    # -- nodes -----------------------------------------------------------------------------
    def _scan(self, node: Scan) -> Collection:
        return self._materialize(node, f"scan {node.source}")

    def _filter(self, node: Filter) -> Collection:
        return self._materialize(node, f"where {node.predicate}")

    def _project(self, node: Project) -> Collection:
        return self._materialize(node, "select")

    def _keyed(self, node, keys, what: str) -> Collection:
        """``(key fields..., record...)`` for the records whose keys hold no NULL (a NULL
        never equals anything); a constant key when there are none."""
        return self._key_rows(node, keys, what, with_record=True)

    def _key_set(self, node, keys, what: str) -> Collection:
        """The set of the keys (as :meth:`_keyed` forms them) of ``node``'s records."""
        return self._key_rows(node, keys, what, with_record=False).distinct()

    def _key_rows(self, node, keys, what: str, with_record: bool) -> Collection:
        base, f = self.rows(node)
        keys = tuple(keys)

        def keyed(r):
            r = f(r) if f is not None else _rec(r)
            if r is None:
                return ()
            if not keys:
                k = (ZERO,)
            else:
                k = tuple(key_form(r[i]) for i in keys)
                if any(map(isnull, k)):
                    return ()
            return (k + r,) if with_record else (k,)
        return base.flat_map(keyed, name=self._name(what))

    def _rows_in(self, coll: Collection, rows: Collection, width: int) -> Collection:
        """The records of ``coll`` (with their multiplicities) that are in the set ``rows``."""
        return coll.join(rows, key_columns=width, name=self._name("rows matched"))

    def _join(self, node: Join) -> Collection:
        wl, wr, n = len(node.left.columns), len(node.right.columns), max(len(node.left_keys), 1)
        lk = self._keyed(node.left, node.left_keys, "join keys (left)")
        rk = self._keyed(node.right, node.right_keys, "join keys (right)")
        out = lk.join(rk, key_columns=n, select=tuple(range(n, n + wl + wr)),
                      name=self._name("join"))
        if node.residual is not None:
            res = node.residual
            out = out.filter(lambda r: res.eval(unbox_row(r)) is True,
                             name=self._name(f"on {res}"))
        parts = [out]
        if node.kind in ("left", "full"):
            left = self.lower(node.left)
            matched = out.map(lambda r: r[:wl], name=self._name("left matched")).distinct()
            parts.append(self._unmatched(left, matched, wl, lambda r: _rec(r) + (NULL,) * wr))
        if node.kind in ("right", "full"):
            right = self.lower(node.right)
            matched = out.map(lambda r: r[wl:], name=self._name("right matched")).distinct()
            parts.append(self._unmatched(right, matched, wr, lambda r: (NULL,) * wl + _rec(r)))
        if len(parts) > 1:
            out = parts[0].concat(*parts[1:], name=self._name(f"{node.kind} outer join"))
        return out.rename(*node.columns)

    def _unmatched(self, side, matched, width, pad):
        gone = self._rows_in(side, matched, width)
        return side.concat(gone.negate()).map(pad, name=self._name("pad with NULL"))

    def _semijoin(self, node: SemiJoin) -> Collection:
        wl, n = len(node.left.columns), max(len(node.left_keys), 1)
        keys = self._key_set(node.right, node.right_keys, "subquery keys")
        lk = self._keyed(node.left, node.left_keys, "keys")
        semi = lk.join(keys, key_columns=n, select=tuple(range(n, n + wl)),
                       name=self._name("semi-join"))
        if not node.anti:
            return semi.rename(*node.columns)
        left = self.lower(node.left)
        if not node.null_aware:
            return left.concat(semi.negate(), name=self._name("anti-join")).rename(*node.columns)
        # NOT IN: every row when the subquery is empty; none when it holds a NULL; otherwise
        # the rows with a non-NULL key not in it
        (col,) = node.right_keys
        (lcol,) = node.left_keys
        right = self.lower(node.right)
        status = right.map(lambda r: (ZERO, Bool(isnull(_rec(r)[col]))),
                           name=self._name("NOT IN status")).concat(self.unit())

        def summary(key, values):
            rows = [(v, m) for v, m in values if _rec(v)[0] != MARK and m > 0]
            nonempty = bool(rows)
            has_null = any(bool(_rec(v)[0]) for v, _ in rows)
            return [((Bool(nonempty), Bool(has_null)), 1)]
        status = status.reduce(summary, name=self._name("NOT IN status"))
        empty = status.filter(lambda r: not r[1]).map(lambda r: ZERO)
        clean = status.filter(lambda r: r[1] and not r[2]).map(lambda r: ZERO)
        nonnull = left.filter(lambda r: not isnull(_rec(r)[lcol]))
        kept = nonnull.concat(semi.negate())
        by_const = lambda c: c.map(lambda r: (ZERO,) + _rec(r))  # noqa: E731
        all_rows = by_const(left).join(empty, select=tuple(range(1, 1 + wl)))
        some = by_const(kept).join(clean, select=tuple(range(1, 1 + wl)))
        return all_rows.concat(some, name=self._name("NOT IN")).rename(*node.columns)

    def _aggregate(self, node: Aggregate) -> Collection:
        groups, aggs = tuple(node.groups), tuple(node.aggs)
        width = len(node.child.columns)
        keyed = self._keyed_all(node.child, groups, "group keys")
        if not groups:
            keyed = keyed.concat(self.unit().map(lambda r: (ZERO,) + (MARK,) * width))
        ng = max(len(groups), 1)

        def aggregate(key, values):
            rows = [(_rec(v), m) for v, m in values if m > 0 and _rec(v)[0] != MARK]
            if groups and not rows:
                return []
            return [(tuple(_aggregate(a, rows) for a in aggs), 1)]
        out = keyed.reduce(aggregate, key_columns=ng, name=self._name(
            "aggregate " + ", ".join(map(str, aggs))))
        if not groups:
            out = out.map(lambda r: r[1:], name=self._name("drop the constant key"))
        return out.rename(*node.columns)

    def _keyed_all(self, node, keys, what):
        """``(key fields..., record...)`` for every record (a NULL key is a group of its own,
        as GROUP BY and PARTITION BY want); a constant key when there are none."""
        base, f = self.rows(node)
        keys = tuple(keys)

        def keyed(r):
            r = f(r) if f is not None else _rec(r)
            if r is None:
                return ()
            return (((ZERO,) if not keys else tuple(r[i] for i in keys)) + r,)
        return base.flat_map(keyed, name=self._name(what))

    def _distinct(self, node: Distinct) -> Collection:
        return self.lower(node.child).distinct(name=self._name("distinct"))

    def _setop(self, node: SetOp) -> Collection:
        a, b = self.lower(node.left), self.lower(node.right)
        if len(node.left.columns) != len(node.right.columns):
            raise DataflowError(f"{node.kind}: {len(node.left.columns)} columns against "
                                f"{len(node.right.columns)}")
        name = self._name(node.describe().lower())
        if node.kind == "union":
            out = a.concat(b, name=name)
            out = out if node.all else out.distinct(name=name)
        elif node.kind == "except":
            out = a.except_(b, name=name) if node.all else a.distinct().except_(
                b.distinct(), name=name)
        else:
            out = a.intersect(b, name=name) if node.all else a.distinct().intersect(
                b.distinct(), name=name)
        return out.rename(*node.columns)

    def _topk(self, node: TopK) -> Collection:
        part, order, k, ranked = tuple(node.partition), tuple(node.order), node.k, \
            node.rank_column is not None
        np_ = max(len(part), 1)
        compare = _order(order)

        def top(key, values):
            rows = sorted(((_rec(v), m) for v, m in values if m > 0),
                          key=cmp_to_key(lambda a, b: compare(a[0], b[0])))
            out, taken = [], 0
            for row, m in rows:
                take = min(m, k - taken)
                if take <= 0:
                    break
                if ranked:
                    out.extend((row + (Int(taken + i + 1),), 1) for i in range(take))
                else:
                    out.append((row, take))
                taken += take
            return out
        keyed = self._keyed_all(node.child, part, "partition")
        out = keyed.reduce(top, key_columns=np_, name=self._name(node.describe()))
        return out.map(lambda r: r[np_:], name=self._name("rows")).rename(*node.columns)

    def _ref(self, node: Ref) -> Collection:
        var = self._vars.get(node.name)
        if var is None:
            raise DataflowError(f"{node.name!r} is read outside its recursive group")
        return var

    def _fix(self, node: Fix) -> Collection:
        group = node.group
        done = self._memo.get(("fix", id(group)))
        if done is None:
            done = self._build_loop(group)
            self._memo[("fix", id(group))] = done
        return done[node.result]

    def _build_loop(self, group) -> dict:
        seeds = {n: self.lower(s).distinct(name=self._name(f"{n} seed")) if s is not None
                 else self.unit().filter(lambda r: False, name=self._name(f"{n} seed (empty)"))
                 for n, s in group.seeds.items()}
        loop = self.flow.loop(self._name("recursive " + ", ".join(group.seeds)).strip())
        self.loops.append(loop.scope.path)
        outer, outer_vars = self._context, self._vars
        self._context, self._vars = group, dict(outer_vars)
        try:
            for n, seed in seeds.items():
                self._vars[n] = loop.variable(seed.rename(*group.columns[n]))
            results = {}
            for n, step in group.steps.items():
                body = self.lower(step) if step is not None else self._vars[n]
                results[n] = self._vars[n].set(body.concat(seeds[n]).distinct(
                    name=self._name(f"{n}")))
            return {n: loop.leave(r).rename(*group.columns[n]) for n, r in results.items()}
        finally:
            self._context, self._vars = outer, outer_vars


def _one(x):
    return () if x is None else (x,)


def _aggregate(call, rows):
    func, arg = call.func, call.arg
    if func == "COUNT" and arg is None:
        return Int(sum(m for _, m in rows))
    values = [(unbox(r[arg]), m) for r, m in rows if not isnull(r[arg])]
    if call.distinct:
        values = [(v, 1) for v in set(v for v, _ in values)]
    if func == "COUNT":
        return Int(sum(m for _, m in values))
    if not values:
        return NULL
    if func == "SUM":
        return box(sum(v * m for v, m in values))
    if func == "AVG":
        return box(sum(v * m for v, m in values) / sum(m for _, m in values))
    if func == "MIN":
        return box(min(v for v, _ in values))
    if func == "MAX":
        return box(max(v for v, _ in values))
    raise DataflowError(f"unknown aggregate {func}")


def _order(order):
    """A comparison of two stored rows by ``order`` ((field, desc, nulls_first), ...), then
    by the whole row (so ties are broken the same way every time)."""
    def compare(a, b):
        for field, desc, nulls_first in order:
            x, y = a[field], b[field]
            nx, ny = isnull(x), isnull(y)
            if nx or ny:
                if nx and ny:
                    continue
                return (-1 if nulls_first else 1) * (1 if nx else -1)
            if x != y:
                c = -1 if x < y else 1
                return -c if desc else c
        ka, kb = tuple(map(_tiekey, a)), tuple(map(_tiekey, b))
        return -1 if ka < kb else (1 if ka > kb else 0)
    return compare


def _tiekey(v):
    return (0, "", 0) if isnull(v) else (1, type(v).__name__ if isinstance(v, str) else "", v)
