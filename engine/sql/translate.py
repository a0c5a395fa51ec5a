"""sqlglot's syntax tree -> a logical plan (:mod:`ddlab.engine.plan`).

One pass over a parsed SELECT: FROM items become scans, CTE references or subquery plans
joined left to right (equalities between the two sides become join keys; a WHERE conjunct
is applied as soon as its columns are there, unless a RIGHT/FULL join follows); EXISTS / IN
/ NOT IN conjuncts become semi- and anti-joins (a correlated subquery only through
equalities); GROUP BY and aggregates an :class:`Aggregate` between two projections; ORDER BY
with LIMIT and ``ROW_NUMBER() OVER (...) <= k`` a :class:`TopK`; WITH RECURSIVE groups of
CTEs that read each other a :class:`FixGroup`.  Anything else raises :class:`SqlError` at
the construct's line and column.
"""
from __future__ import annotations

from sqlglot import exp

from ..plan import expr as E
from ..plan.nodes import (AggCall, Aggregate, Distinct, Filter, Fix, FixGroup, Join, Project,
                          Ref, Scan, SemiJoin, SetOp, TopK)
from ..plan.recursion import components
from .errors import SqlError

__all__ = ["Translator"]

_BINARY = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%",
           exp.DPipe: "||", exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=",
           exp.GT: ">", exp.GTE: ">=", exp.And: "AND", exp.Or: "OR"}
_AGGS = {exp.Count: "COUNT", exp.Sum: "SUM", exp.Min: "MIN", exp.Max: "MAX", exp.Avg: "AVG"}
_FUNCS = {exp.Abs: "ABS", exp.Lower: "LOWER", exp.Upper: "UPPER", exp.Length: "LENGTH",
          exp.Trim: "TRIM", exp.Substring: "SUBSTRING", exp.Concat: "CONCAT",
          exp.Least: "LEAST", exp.Greatest: "GREATEST", exp.Year: "YEAR", exp.Month: "MONTH",
          exp.Day: "DAY", exp.DayOfMonth: "DAY"}
#: date arithmetic in days: sqlglot's node -> our function, its two arguments
_DATE_OPS = {exp.TsOrDsAdd: "DATE_ADD", exp.DateAdd: "DATE_ADD", exp.DateDiff: "DATEDIFF"}


class Scope:
    """The fields of a FROM clause so far: ``(qualifier, name)`` per field, in order."""

    def __init__(self, fields, outer: "Scope | None" = None):
        self.fields = list(fields)
        self.outer = outer

    def find(self, name: str, table: str | None):
        hits = [i for i, (q, n) in enumerate(self.fields)
                if n == name.lower() and (table is None or q == table.lower())]
        return hits

    def __add__(self, other: "Scope") -> "Scope":
        return Scope(self.fields + other.fields, self.outer)


class Translator:
    """Translates one statement against ``inputs`` (name -> field names)."""

    def __init__(self, text: str, inputs: dict):
        self.text = text
        self.inputs = {k.lower(): [c.lower() for c in v] for k, v in inputs.items()}
        self.sources = {k.lower(): k for k in inputs}
        self.used: set = set()
        self.ctes: list = [{}]

    # -- errors ------------------------------------------------------------------------
    def error(self, node, message: str):
        return SqlError.at(self.text, node, message)

    def refuse(self, node, what: str | None = None):
        what = what or (node.key.upper() if isinstance(node, exp.Expression) else str(node))
        return self.error(node, f"{what} is not supported in SQL cells")

    # -- statements --------------------------------------------------------------------
    def query(self, node, outer: Scope | None = None, rank_bound: int | None = None):
        """A plan for a query expression (SELECT, set operation, subquery)."""
        if isinstance(node, exp.Subquery):
            return self.query(node.this, outer, rank_bound)
        if isinstance(node, exp.Paren):
            return self.query(node.this, outer, rank_bound)
        pushed = self._with(node)
        try:
            if isinstance(node, exp.Select):
                return self.select(node, outer, rank_bound)
            if isinstance(node, (exp.Union, exp.Except, exp.Intersect)):
                return self.setop(node)
            raise self.refuse(node, f"the statement {node.key.upper()}")
        finally:
            if pushed:
                self.ctes.pop()

    def setop(self, node):
        kind = {exp.Union: "union", exp.Except: "except", exp.Intersect: "intersect"}[type(node)]
        left, right = self.query(node.this), self.query(node.expression)
        if len(left.columns) != len(right.columns):
            raise self.error(node, f"{kind.upper()} of {len(left.columns)} columns and "
                                   f"{len(right.columns)} columns")
        plan = SetOp(kind, left, right, all=not node.args.get("distinct", True))
        return self._order_limit(node, plan, None)

    def _with(self, node) -> bool:
        w = node.args.get("with") or node.args.get("with_")
        if not w:
            return False
        frame: dict = {}
        self.ctes.append(frame)
        ctes = list(w.expressions)
        names = [c.alias_or_name.lower() for c in ctes]
        if not w.args.get("recursive"):
            for cte, name in zip(ctes, names):
                frame[name] = self._cte_plan(cte, self.query(cte.this))
            return True
        # dependencies among this WITH's CTEs decide the recursive groups
        deps = {n: {t.name.lower() for t in c.this.find_all(exp.Table)} & set(names)
                for c, n in zip(ctes, names)}
        for group in [sorted(c, key=names.index) for c in components(names, deps)]:
            recursive = len(group) > 1 or group[0] in deps[group[0]]
            if not recursive:
                cte = ctes[names.index(group[0])]
                frame[group[0]] = self._cte_plan(cte, self.query(cte.this))
                continue
            self._recursive(group, [ctes[names.index(n)] for n in group], frame)
        return True

    def _cte_plan(self, cte, plan):
        cols = [c.name.lower() for c in (cte.args["alias"].columns or [])]
        if cols:
            if len(cols) != len(plan.columns):
                raise self.error(cte, f"CTE {cte.alias_or_name} names {len(cols)} columns "
                                      f"but its query gives {len(plan.columns)}")
            plan = Project(plan, [E.Col(i, n) for i, n in enumerate(plan.columns)], cols)
        return plan

    def _recursive(self, group, ctes, frame):
        terms = {}
        for name, cte in zip(group, ctes):
            terms[name] = list(_union_terms(cte.this, self))
        seeds, columns = {}, {}
        for name, cte in zip(group, ctes):
            base = [t for t in terms[name] if not _reads(t, group)]
            if not base:  # no seed of its own (fed by the others): its names are needed
                cols = [c.name.lower() for c in (cte.args["alias"].columns or [])]
                if not cols:
                    raise self.error(cte, f"recursive CTE {cte.alias_or_name} reads the "
                                          "recursive CTEs in every term: name its columns, "
                                          f"{cte.alias_or_name}(a, b, ...)")
                seeds[name], columns[name] = None, cols
                continue
            plan = self._union_all_distinct([self.query(t) for t in base])
            plan = self._cte_plan(cte, plan)
            seeds[name], columns[name] = plan, plan.columns
        fixgroup = FixGroup(seeds, {}, columns)
        refs = {n: Ref(n, columns[n]) for n in group}
        self.ctes.append(dict(refs))
        try:
            for name in group:
                rec = [t for t in terms[name] if _reads(t, group)]
                plans = []
                for t in rec:
                    p = self.query(t)
                    if len(p.columns) != len(columns[name]):
                        raise self.error(t, f"this term of {name} gives {len(p.columns)} "
                                            f"columns, its seed {len(columns[name])}")
                    _check_monotone(p, self, t)
                    plans.append(Project(p, [E.Col(i, c) for i, c in enumerate(p.columns)],
                                         columns[name]))
                fixgroup.steps[name] = self._union_all_distinct(plans)
        finally:
            self.ctes.pop()
        for name in group:
            frame[name] = Fix(fixgroup, name)

    def _union_all_distinct(self, plans):
        plan = plans[0]
        for p in plans[1:]:
            plan = SetOp("union", plan, p, all=True)
        return plan

    # -- SELECT ------------------------------------------------------------------------
    def select(self, sel: exp.Select, outer: Scope | None, rank_bound: int | None):
        for arg in ("qualify", "windows", "pivots", "laterals", "cluster", "distribute", "sort",
                    "prewhere", "connect", "match", "into", "settings", "locks", "sample"):
            if sel.args.get(arg):
                raise self.refuse(sel.args[arg] if isinstance(sel.args[arg], exp.Expression)
                                  else sel, arg.upper())
        if sel.args.get("offset"):
            raise self.refuse(sel.args["offset"], "OFFSET")
        distinct = sel.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise self.refuse(distinct, "DISTINCT ON")
        where = sel.args.get("where")
        conjuncts = _conjuncts(where.this) if where is not None else []
        # ROW_NUMBER() <= k over a subquery: take the bound out of WHERE
        from_ = sel.args.get("from") or sel.args.get("from_")
        if from_ is None:
            raise self.refuse(sel, "SELECT without FROM")
        plan, scope, conjuncts = self.from_clause(sel, from_, conjuncts, outer)
        for c in conjuncts:
            plan = self._where_conjunct(plan, scope, c)
        items = list(sel.expressions)
        if any(isinstance(i, exp.Star) for i in items) or any(
                isinstance(i, exp.Column) and isinstance(i.this, exp.Star) for i in items):
            items = self._expand_star(items, scope)
        windows = [i for i in items if isinstance(_unalias(i), exp.Window)]
        if windows:
            plan, scope, items = self._row_number(plan, scope, items, windows, rank_bound)
        aggs = [a for i in items for a in _aggregates(i)]
        having = sel.args.get("having")
        group = sel.args.get("group")
        if group is not None or aggs or having is not None:
            plan, proj, names = self._aggregate(sel, plan, scope, items, group, having)
        else:
            proj = [self.expr(_unalias(i), scope) for i in items]
            names = _names(items)
            plan = Project(plan, proj, names)
        if distinct is not None:
            plan = Distinct(plan)
        return self._order_limit(sel, plan, items)

    def _expand_star(self, items, scope):
        out = []
        for i in items:
            if isinstance(i, exp.Star):
                out += [exp.column(n, q) for q, n in scope.fields]
            elif isinstance(i, exp.Column) and isinstance(i.this, exp.Star):
                q = i.table.lower()
                out += [exp.column(n, qq) for qq, n in scope.fields if qq == q]
            else:
                out.append(i)
        return out

    # -- FROM and joins ----------------------------------------------------------------
    def relation(self, node, outer):
        """A FROM item: ``(plan, scope)``."""
        if isinstance(node, exp.Table):
            if node.args.get("db") or node.args.get("catalog"):
                raise self.refuse(node, "a qualified table name")
            name = node.name.lower()
            alias = (node.alias or node.name).lower()
            for frame in reversed(self.ctes):
                if name in frame:
                    plan = frame[name]
                    return plan, Scope([(alias, c) for c in plan.columns])
            if name not in self.inputs:
                known = sorted(set(self.sources.values()) |
                               {n for f in self.ctes for n in f})
                raise self.error(node, f"no table {node.name!r}; known: "
                                       f"{', '.join(known) or 'none'}")
            self.used.add(self.sources[name])
            cols = self.inputs[name]
            return Scan(self.sources[name], list(cols)), Scope([(alias, c) for c in cols])
        if isinstance(node, exp.Subquery):
            plan = self.query(node.this)
            alias = (node.alias or "").lower()
            cols = [c.name.lower() for c in (node.args["alias"].columns or [])] \
                if node.args.get("alias") else []
            if cols:
                plan = Project(plan, [E.Col(i, n) for i, n in enumerate(plan.columns)], cols)
            return plan, Scope([(alias, c) for c in plan.columns])
        raise self.refuse(node, f"{node.key.upper()} in FROM")

    def from_clause(self, sel, from_, conjuncts, outer):
        first = from_.this
        rank_bound = None
        if isinstance(first, exp.Subquery) and _has_row_number(first.this):
            first, conjuncts, rank_bound = self._take_rank_bound(sel, first, conjuncts)
        if rank_bound is not None:
            plan = self.query(first.this, rank_bound=rank_bound)
            alias = (first.alias or "").lower()
            scope = Scope([(alias, c) for c in plan.columns])
        else:
            plan, scope = self.relation(first, outer)
        joins = list(sel.args.get("joins") or [])
        late = any(j.side in ("RIGHT", "FULL") for j in joins)
        pending = list(conjuncts)
        if not late:
            plan, pending = self._apply_ready(plan, scope, pending)
        for j in joins:
            if j.args.get("using"):
                raise self.refuse(j, "JOIN ... USING")
            kind = (j.side or "inner").lower()
            if j.kind and j.kind.upper() not in ("INNER", "OUTER", "CROSS"):
                raise self.refuse(j, f"{j.kind.upper()} JOIN")
            right, rscope = self.relation(j.this, outer)
            both = scope + rscope
            on = _conjuncts(j.args["on"]) if j.args.get("on") else []
            if kind == "inner" and not late:
                # WHERE equalities between the two sides are join keys too
                extra = [c for c in pending if self._covered(c, both)]
                pending = [c for c in pending if not self._covered(c, both)]
                on = on + extra
            lkeys, rkeys, rest = [], [], []
            nl = len(scope.fields)
            for c in on:
                pair = self._equi(c, scope, rscope, nl)
                if pair is None:
                    rest.append(c)
                else:
                    lkeys.append(pair[0])
                    rkeys.append(pair[1])
            residual = None
            for c in rest:
                e = self.expr(c, both)
                residual = e if residual is None else E.Binary("AND", residual, e)
            plan = Join(plan, right, lkeys, rkeys, kind, residual)
            scope = both
            if not late:
                plan, pending = self._apply_ready(plan, scope, pending)
        return plan, scope, pending

    def _take_rank_bound(self, sel, sub, conjuncts):
        inner = sub.this
        rn = next(_unalias_name(i) for i in inner.expressions
                  if isinstance(_unalias(i), exp.Window))
        for c in conjuncts:
            bound = _rank_bound(c, rn)
            if bound is not None:
                return sub, [x for x in conjuncts if x is not c], bound
        raise self.error(sub, f"ROW_NUMBER() is maintained only as a top-k: add "
                              f"WHERE {rn} <= k to the query that reads it")

    def _covered(self, c, scope) -> bool:
        if _subqueries(c):
            return False
        try:
            for col in c.find_all(exp.Column):
                if len(scope.find(col.name, col.table or None)) != 1:
                    return False
        except Exception:
            return False
        return True

    def _apply_ready(self, plan, scope, pending):
        rest = []
        for c in pending:
            if self._covered(c, scope):
                plan = Filter(plan, self.expr(c, scope))
            else:
                rest.append(c)
        return plan, rest

    def _equi(self, c, lscope, rscope, nl):
        if not isinstance(c, exp.EQ):
            return None
        a, b = c.this, c.expression
        if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
            return None
        la, lb = lscope.find(a.name, a.table or None), lscope.find(b.name, b.table or None)
        ra, rb = rscope.find(a.name, a.table or None), rscope.find(b.name, b.table or None)
        if len(la) == 1 and not ra and len(rb) == 1 and not lb:
            return la[0], rb[0]
        if len(lb) == 1 and not rb and len(ra) == 1 and not la:
            return lb[0], ra[0]
        return None

    # -- WHERE with subqueries ---------------------------------------------------------
    def _where_conjunct(self, plan, scope, c):
        neg = False
        node = c
        while isinstance(node, exp.Not):
            neg, node = not neg, node.this
        if isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Exists):
            return self._exists(plan, scope, node.this, neg)
        if isinstance(node, exp.In) and node.args.get("query") is not None:
            return self._in(plan, scope, node, neg)
        if _subqueries(c):
            raise self.refuse(_subqueries(c)[0], "a subquery here (only [NOT] EXISTS and "
                                                 "[NOT] IN as WHERE conjuncts)")
        return Filter(plan, self.expr(c, scope))

    def _exists(self, plan, scope, sub, anti):
        sub = sub.this if isinstance(sub, exp.Subquery) else sub
        if not isinstance(sub, exp.Select) or sub.args.get("group") or sub.args.get("having") \
                or any(_aggregates(i) for i in sub.expressions) or sub.args.get("limit"):
            if not isinstance(sub, exp.Select):
                raise self.refuse(sub, "EXISTS over a set operation")
            if sub.args.get("limit") or sub.args.get("group") or sub.args.get("having") or \
                    any(_aggregates(i) for i in sub.expressions):
                inner = self.query(sub)
                return SemiJoin(plan, inner, [], [], anti=anti)
        where = sub.args.get("where")
        conjuncts = _conjuncts(where.this) if where is not None else []
        from_ = sub.args.get("from") or sub.args.get("from_")
        # split the correlated equalities from the local conjuncts
        probe = Translator(self.text, {})
        probe.inputs, probe.sources, probe.ctes = self.inputs, self.sources, self.ctes
        _, iscope, _ = probe.from_clause(sub, from_, [], None)
        local, lkeys, rexprs = [], [], []
        for c in conjuncts:
            cols = list(c.find_all(exp.Column))
            outer_cols = [x for x in cols if not iscope.find(x.name, x.table or None)]
            if not outer_cols:
                local.append(c)
                continue
            pair = self._correlation(c, iscope, scope)
            if pair is None:
                raise self.error(c, "a correlated condition other than inner = outer "
                                    "is not supported in SQL cells")
            lkeys.append(pair[0])
            rexprs.append(pair[1])
        inner_sel = sub.copy()
        inner_sel.set("where", exp.Where(this=exp.and_(*local)) if local else None)
        inner_sel.set("expressions", rexprs or [exp.Literal.number(1)])
        inner = self.query(inner_sel)
        rkeys = list(range(len(rexprs)))
        return SemiJoin(plan, inner, lkeys, rkeys, anti=anti)

    def _correlation(self, c, iscope, oscope):
        if not isinstance(c, exp.EQ):
            return None
        for inner, outer in ((c.this, c.expression), (c.expression, c.this)):
            if isinstance(outer, exp.Column) and not iscope.find(outer.name, outer.table or None):
                hits = oscope.find(outer.name, outer.table or None)
                if len(hits) == 1 and all(iscope.find(x.name, x.table or None)
                                          for x in inner.find_all(exp.Column)):
                    return hits[0], inner.copy()
        return None

    def _in(self, plan, scope, node, anti):
        sub = node.args["query"]
        inner = self.query(sub.this if isinstance(sub, exp.Subquery) else sub)
        if len(inner.columns) != 1:
            raise self.error(sub, f"IN needs a subquery of one column, not {len(inner.columns)}")
        arg = node.this
        if isinstance(arg, exp.Column) and len(scope.find(arg.name, arg.table or None)) == 1:
            key = scope.find(arg.name, arg.table or None)[0]
            base = plan
        else:  # an expression: compute it as an extra field, drop it after
            e = self.expr(arg, scope)
            n = len(plan.columns)
            base = Project(plan, [E.Col(i, c) for i, c in enumerate(plan.columns)] + [e],
                           plan.columns + ["in key"])
            key = n
        out = SemiJoin(base, inner, [key], [0], anti=anti, null_aware=anti)
        if base is not plan:
            out = Project(out, [E.Col(i, c) for i, c in enumerate(plan.columns)], plan.columns)
        return out

    # -- GROUP BY ----------------------------------------------------------------------
    def _aggregate(self, sel, plan, scope, items, group, having):
        aliases = {i.alias.lower(): i.this for i in items if isinstance(i, exp.Alias)}
        group_exprs = []
        for g in list(group.expressions) if group is not None else []:
            if isinstance(g, exp.Literal) and not g.is_string:  # GROUP BY 1: a select item
                if not g.this.isdigit() or not 1 <= int(g.this) <= len(items):
                    raise self.error(g, f"GROUP BY {g.this}: there are {len(items)} columns")
                g = _unalias(items[int(g.this) - 1])
            elif isinstance(g, exp.Column) and not g.table and g.name.lower() in aliases \
                    and not scope.find(g.name, None):  # GROUP BY an alias (Spark's default)
                g = aliases[g.name.lower()]
            if _aggregates(g):
                raise self.error(g, "GROUP BY an aggregate")
            group_exprs.append(g)
        self._aliases = aliases
        calls = []
        having_nodes = [having.this] if having is not None else []
        for node in [i for i in items] + having_nodes:
            for a in _aggregates(node):
                if any(a == c for c in calls):
                    continue
                calls.append(a)
        pre = [self.expr(g, scope) for g in group_exprs]
        aggcalls = []
        for a in calls:
            func = _AGGS[type(a)]
            target = a.this
            distinct = isinstance(target, exp.Distinct)
            if distinct:
                if len(target.expressions) != 1:
                    raise self.refuse(a, "an aggregate of several DISTINCT values")
                target = target.expressions[0]
            if isinstance(target, exp.Star) or (func == "COUNT" and target is None):
                aggcalls.append(AggCall("COUNT", None, False))
                continue
            if _aggregates(target):
                raise self.refuse(a, "an aggregate inside an aggregate")
            pre.append(self.expr(target, scope))
            aggcalls.append(AggCall(func, len(pre) - 1, distinct))
        if not pre:  # COUNT(*) alone: one constant field keeps every record non-empty
            pre.append(E.Lit(1))
        ng = len(group_exprs)
        pre_names = [f"g{i}" for i in range(ng)] + [f"a{i}" for i in range(len(pre) - ng)]
        plan = Project(plan, pre, pre_names)
        names = [f"g{i}" for i in range(ng)] + [str(c).lower() for c in aggcalls]
        plan = Aggregate(plan, list(range(ng)), aggcalls, names)

        def post(node):
            return self._post_agg(node, group_exprs, calls, scope, ng)
        if having is not None:
            plan = Filter(plan, post(having.this))
        proj = [post(_unalias(i)) for i in items]
        out = _names(items)
        return Project(plan, proj, out), proj, out

    def _post_agg(self, node, group_exprs, calls, scope, ng):
        """An expression over the aggregate's output: group expressions and aggregate calls
        become its fields; any other column is an error (not grouped)."""
        for i, g in enumerate(group_exprs):
            if node == g:
                return E.Col(i, g.sql())
        for i, a in enumerate(calls):
            if node == a:
                return E.Col(ng + i, a.sql())
        if isinstance(node, exp.Column):
            alias = self._aliases.get(node.name.lower()) if not node.table else None
            if alias is not None and not scope.find(node.name, None):  # HAVING n > 1
                return self._post_agg(alias, group_exprs, calls, scope, ng)
            raise self.error(node, f"column {node.sql()} is neither grouped nor inside an "
                                   "aggregate")
        return self.expr(node, scope, lambda n: self._post_agg(n, group_exprs, calls, scope,
                                                               ng))

    # -- ROW_NUMBER --------------------------------------------------------------------
    def _row_number(self, plan, scope, items, windows, bound):
        if len(windows) > 1:
            raise self.refuse(windows[1], "a second window function")
        w = _unalias(windows[0])
        if not isinstance(w.this, exp.RowNumber):
            raise self.refuse(w.this, f"the window function {w.this.key.upper()}")
        if w.args.get("spec"):
            raise self.refuse(w, "a window frame")
        if bound is None:
            raise self.error(w, "ROW_NUMBER() is maintained only as a top-k: read it from an "
                                "enclosing query with WHERE rn <= k")
        order = w.args.get("order")
        if order is None:
            raise self.error(w, "ROW_NUMBER() without ORDER BY is not deterministic")
        n = len(plan.columns)
        extra, part, keys = [], [], []
        for p in w.args.get("partition_by") or []:
            extra.append(self.expr(p, scope))
            part.append(n + len(extra) - 1)
        for o in order.expressions:
            extra.append(self.expr(o.this, scope))
            keys.append((n + len(extra) - 1, bool(o.args.get("desc")),
                         bool(o.args.get("nulls_first"))))
        names = plan.columns + [f"w{i}" for i in range(len(extra))]
        plan = Project(plan, [E.Col(i, c) for i, c in enumerate(plan.columns)] + extra, names)
        plan = TopK(plan, part, keys, bound, rank_column="row_number")
        scope = Scope(scope.fields + [("", f"\x00w{i}") for i in range(len(extra))]
                      + [("", "\x00rn")])
        rn = exp.column("\x00rn")
        items = [exp.alias_(rn, _unalias_name(i)) if i is windows[0] else i for i in items]
        return plan, scope, items

    # -- ORDER BY ... LIMIT ------------------------------------------------------------
    def _order_limit(self, node, plan, items):
        order, limit = node.args.get("order"), node.args.get("limit")
        if limit is None:
            return plan  # ORDER BY alone: a maintained collection has no order
        if order is None:
            raise self.error(limit, "LIMIT without ORDER BY is not deterministic; add ORDER BY")
        k = limit.expression
        if not (isinstance(k, exp.Literal) and not k.is_string and k.this.isdigit()):
            raise self.refuse(k, "a LIMIT that is not a whole number")
        keys = []
        for o in order.expressions:
            field = self._output_field(o.this, plan, items)
            keys.append((field, bool(o.args.get("desc")), bool(o.args.get("nulls_first"))))
        return TopK(plan, [], keys, int(k.this))

    def _output_field(self, e, plan, items):
        if isinstance(e, exp.Literal) and not e.is_string:
            i = int(e.this)
            if not 1 <= i <= len(plan.columns):
                raise self.error(e, f"ORDER BY {i}: there are {len(plan.columns)} columns")
            return i - 1
        if isinstance(e, exp.Column) and not e.table:
            hits = [i for i, c in enumerate(plan.columns) if c == e.name.lower()]
            if len(hits) == 1:
                return hits[0]
        for i, item in enumerate(items or []):
            if _unalias(item) == e:
                return i
        raise self.error(e, f"ORDER BY {e.sql()}: order by an output column (its name, "
                            "alias or position)")

    # -- expressions -------------------------------------------------------------------
    def expr(self, node, scope: Scope, hook=None):
        """A plan expression; ``hook`` translates sub-expressions first (aggregates)."""
        sub = (lambda n: hook(n)) if hook else (lambda n: self.expr(n, scope))
        if isinstance(node, exp.Paren):
            return sub(node.this)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise self.refuse(node, "* here")
            hits = scope.find(node.name, node.table or None)
            if len(hits) > 1:
                raise self.error(node, f"column {node.sql()} is ambiguous; qualify it")
            if not hits:
                raise self.error(node, f"no column {node.sql()}; there are "
                                       f"{', '.join(n for _, n in scope.fields if n[:1] != chr(0))}")
            return E.Col(hits[0], node.name.lower())
        if isinstance(node, exp.Literal):
            if node.is_string:
                return E.Lit(node.this)
            text = node.this
            return E.Lit(float(text) if any(ch in text for ch in ".eE") else int(text))
        if isinstance(node, exp.Null):
            return E.Lit(None)
        if isinstance(node, exp.Boolean):
            return E.Lit(bool(node.this))
        op = _BINARY.get(type(node))
        if op is not None:
            return E.Binary(op, sub(node.this), sub(node.expression))
        if isinstance(node, exp.Not):
            return E.Not(sub(node.this))
        if isinstance(node, (exp.Like, exp.ILike)):
            if node.args.get("escape"):
                raise self.refuse(node, "LIKE ... ESCAPE")
            return E.Like(sub(node.this), sub(node.expression),
                          negated=bool(node.args.get("negate")),
                          insensitive=isinstance(node, exp.ILike))
        if isinstance(node, exp.Neg):
            return E.Neg(sub(node.this))
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise self.refuse(node, "IS other than IS [NOT] NULL")
            return E.IsNull(sub(node.this))
        if isinstance(node, exp.Between):
            a = sub(node.this)
            return E.Binary("AND", E.Binary(">=", a, sub(node.args["low"])),
                            E.Binary("<=", a, sub(node.args["high"])))
        if isinstance(node, exp.Case):
            if node.this is not None:  # CASE x WHEN v THEN ...
                x = sub(node.this)
                whens = tuple((E.Binary("=", x, sub(i.this)), sub(i.args["true"]))
                              for i in node.args["ifs"])
            else:
                whens = tuple((sub(i.this), sub(i.args["true"])) for i in node.args["ifs"])
            default = node.args.get("default")
            return E.Case(whens, sub(default) if default is not None else E.Lit(None))
        if isinstance(node, exp.If):
            default = node.args.get("false")
            return E.Case(((sub(node.this), sub(node.args["true"])),),
                          sub(default) if default is not None else E.Lit(None))
        if isinstance(node, exp.Coalesce):
            return E.Coalesce(tuple(sub(a) for a in [node.this, *node.expressions]))
        if isinstance(node, exp.In):
            if node.args.get("query") is not None:
                raise self.refuse(node, "IN (subquery) here (only as a WHERE conjunct)")
            return E.InList(sub(node.this), tuple(sub(v) for v in node.expressions))
        if isinstance(node, exp.TsOrDsToDate):
            if node.args.get("format") is not None:
                raise self.refuse(node, "TO_DATE with a format")
            return E.Func("TO_DATE", (sub(node.this),))
        name = _DATE_OPS.get(type(node))
        if name is not None:
            unit = node.args.get("unit")
            if unit is not None and unit.name.upper() not in ("DAY", "'DAY'"):
                raise self.refuse(node, f"{name} in {unit.name}")
            return E.Func(name, (sub(node.this), sub(node.expression)))
        name = _FUNCS.get(type(node))
        if name is not None:
            args = [a for a in [node.this, *node.expressions] if a is not None] \
                if name in ("CONCAT", "LEAST", "GREATEST") else \
                [node.this] + [node.args[k] for k in ("start", "length")
                               if node.args.get(k) is not None]
            if name == "TRIM" and (node.args.get("expression") or node.args.get("position")):
                raise self.refuse(node, "TRIM with characters or a position")
            return E.Func(name, tuple(sub(a) for a in args))
        if type(node) in _AGGS:
            raise self.error(node, f"aggregate {node.sql()} is not allowed here")
        if isinstance(node, exp.Window):
            raise self.refuse(node, "a window function here")
        if isinstance(node, (exp.Rand, exp.CurrentTimestamp, exp.CurrentDate, exp.Uuid)):
            raise self.refuse(node, f"the non-deterministic function {node.key.upper()}")
        if isinstance(node, exp.Anonymous):
            raise self.refuse(node, f"the function {node.name.upper()}")
        raise self.refuse(node)


# -- helpers -----------------------------------------------------------------------------
def _unalias(node):
    return node.this if isinstance(node, exp.Alias) else node


def _unalias_name(node) -> str:
    if isinstance(node, exp.Alias):
        return node.alias.lower()
    if isinstance(node, exp.Column):
        return node.name.lower()
    return node.sql().lower()


def _names(items) -> list:
    names = [_unalias_name(i) for i in items]
    seen: dict = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n}_{k}")
    return out


def _conjuncts(node) -> list:
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    if isinstance(node, exp.Paren) and isinstance(node.this, exp.And):
        return _conjuncts(node.this)
    return [node]


def _aggregates(node) -> list:
    """The outermost aggregate calls in ``node`` (not inside subqueries)."""
    if type(node) in _AGGS:
        return [node]
    if isinstance(node, (exp.Subquery, exp.Select, exp.Window)):
        return []
    out = []
    for child in node.iter_expressions():
        out += _aggregates(child)
    return out


def _subqueries(node) -> list:
    return [n for n in node.find_all(exp.Select, exp.Exists)]


def _has_row_number(node) -> bool:
    return isinstance(node, exp.Select) and any(
        isinstance(_unalias(i), exp.Window) for i in node.expressions)


def _rank_bound(c, rn: str):
    """k from ``rn <= k``, ``rn < k``, ``rn = 1`` (or mirrored)."""
    pairs = {exp.LTE: 0, exp.LT: -1, exp.EQ: 0, exp.GTE: 0, exp.GT: -1}
    if type(c) not in pairs:
        return None
    a, b = c.this, c.expression
    if isinstance(a, exp.Column) and a.name.lower() == rn and isinstance(b, exp.Literal) \
            and type(c) in (exp.LTE, exp.LT, exp.EQ):
        k = int(b.this) + pairs[type(c)]
    elif isinstance(b, exp.Column) and b.name.lower() == rn and isinstance(a, exp.Literal) \
            and type(c) in (exp.GTE, exp.GT):
        k = int(a.this) + pairs[type(c)]
    else:
        return None
    if isinstance(c, exp.EQ) and k != 1:
        return None
    return k if k >= 1 else None


def _union_terms(node, tr):
    """The terms of a recursive CTE's UNION chain (UNION ALL refused)."""
    if isinstance(node, exp.Union) and not node.args.get("order") and not node.args.get("limit"):
        if not node.args.get("distinct", True):
            raise tr.error(node, "UNION ALL in a recursive CTE is not supported in SQL cells "
                                 "(a maintained recursive query is a set: use UNION)")
        yield from _union_terms(node.this, tr)
        yield from _union_terms(node.expression, tr)
    else:
        yield node


def _reads(node, names) -> bool:
    return any(t.name.lower() in names for t in node.find_all(exp.Table))


def _check_monotone(plan, tr, where):
    """Recursive terms must be monotone for the least fixed point to be what SQL means."""
    from ..plan.nodes import walk
    for n in walk(plan):
        bad = (isinstance(n, Aggregate) and "an aggregate" or isinstance(n, TopK) and "a top-k"
               or isinstance(n, SemiJoin) and n.anti and "NOT EXISTS / NOT IN"
               or isinstance(n, SetOp) and n.kind != "union" and n.kind.upper()
               or isinstance(n, Join) and n.kind != "inner" and f"a {n.kind} outer join")
        if bad and any(isinstance(m, (Ref, Fix)) for m in walk(n)):
            raise tr.error(where, f"{bad} over a recursive CTE is not supported in SQL cells "
                                  "(the recursion must be monotone)")
