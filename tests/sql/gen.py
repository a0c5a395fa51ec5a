"""Random schemas, queries from the supported grammar and update streams for the SQL fuzzer.

Tables ``t0``, ``t1``, ``t2``: integer columns (small values, so joins and groups meet) and
one string column ``s``; every column may hold NULL.  Queries are written in Spark's dialect
and avoid what the two engines define differently on purpose (division by zero: Spark and
ddlab give NULL, DuckDB infinity); ORDER BY ... LIMIT orders by every output column, so the
answer is one multiset whatever breaks ties.
"""
from __future__ import annotations

import random

INT_DOMAIN = [0, 1, 2, 3, None]
STR_DOMAIN = ["x", "y", "z", None]


def schema(rng: random.Random) -> dict:
    """Table name -> column names (``k`` a join key in every table, ``s`` a string)."""
    tables = {}
    for i in range(3):
        cols = ["k"] + [f"{c}{i}" for c in "ab"[: rng.randint(1, 2)]] + ["s"]
        tables[f"t{i}"] = cols
    return tables


def value(rng, col):
    return rng.choice(STR_DOMAIN if col == "s" else INT_DOMAIN)


def row(rng, cols):
    return tuple(value(rng, c) for c in cols)


class Query:
    """A random query over ``tables`` (name -> columns)."""

    def __init__(self, rng: random.Random, tables: dict):
        self.rng, self.tables = rng, tables

    # -- scalar expressions over int columns ``cols`` (qualified names) ----------------------
    def num(self, cols, depth=0):
        r = self.rng
        choice = r.randint(0, 7 if depth < 2 else 1)
        if choice == 0:
            return r.choice(cols)
        if choice == 1:
            return str(r.randint(-1, 3))
        if choice in (2, 3):
            return f"({self.num(cols, depth + 1)} {r.choice('+-*')} {self.num(cols, depth + 1)})"
        if choice == 4:
            return f"COALESCE({self.num(cols, depth + 1)}, {self.num(cols, depth + 1)})"
        if choice == 5:
            return (f"CASE WHEN {self.pred(cols, depth + 1)} THEN {self.num(cols, depth + 1)} "
                    f"ELSE {self.num(cols, depth + 1)} END")
        if choice == 6:
            return f"CASE WHEN {self.pred(cols, depth + 1)} THEN {self.num(cols, depth + 1)} END"
        if r.random() < 0.5:
            return f"{r.choice(['GREATEST', 'LEAST'])}({self.num(cols, depth + 1)}, {self.num(cols, depth + 1)})"
        return f"ABS({self.num(cols, depth + 1)})"

    def pred(self, cols, depth=0):
        r = self.rng
        choice = r.randint(0, 6 if depth < 2 else 1)
        if choice <= 1:
            return f"{self.num(cols, depth + 1)} {r.choice(['=', '<>', '<', '<=', '>', '>='])} " \
                   f"{self.num(cols, depth + 1)}"
        if choice == 2:
            return f"{r.choice(cols)} IS {r.choice(['', 'NOT '])}NULL"
        if choice == 3:
            return f"({self.pred(cols, depth + 1)} {r.choice(['AND', 'OR'])} {self.pred(cols, depth + 1)})"
        if choice == 4:
            return f"NOT ({self.pred(cols, depth + 1)})"
        if choice == 5:
            return f"{r.choice(cols)} {r.choice(['', 'NOT '])}IN (1, 2{r.choice(['', ', NULL'])})"
        return f"{r.choice(cols)} BETWEEN {r.randint(0, 1)} AND {r.randint(1, 3)}"

    # -- FROM ------------------------------------------------------------------------------
    def from_clause(self):
        """``(text, int columns, string columns)`` with qualified names."""
        r = self.rng
        names = list(self.tables)
        first = r.choice(names)
        text = f"{first} AS x"
        ints = [f"x.{c}" for c in self.tables[first] if c != "s"]
        strs = ["x.s"]
        if r.random() < 0.6:
            second = r.choice(names)
            kind = r.choice(["JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN"])
            on = "x.k = y.k"
            if r.random() < 0.3:
                on += f" AND {self.pred(ints + [f'y.{c}' for c in self.tables[second] if c != 's'], 1)}"
            text += f" {kind} {second} AS y ON {on}"
            ints += [f"y.{c}" for c in self.tables[second] if c != "s"]
            strs.append("y.s")
        return text, ints, strs

    def where(self, ints, strs):
        r = self.rng
        parts = []
        if r.random() < 0.5:
            parts.append(self.pred(ints))
        if r.random() < 0.3:
            parts.append(f"{r.choice(strs)} {r.choice(['=', '<>'])} '{r.choice('xy')}'")
        if r.random() < 0.15:
            parts.append(f"{r.choice(strs)} {r.choice(['', 'NOT '])}LIKE '{r.choice(['x%', '_', '%z'])}'")
        if r.random() < 0.3:
            parts.append(self.subquery_pred(ints))
        return f" WHERE {' AND '.join(parts)}" if parts else ""

    def subquery_pred(self, ints):
        r = self.rng
        t = r.choice(list(self.tables))
        col = r.choice([c for c in self.tables[t] if c != "s"])
        outer = r.choice(ints)
        kind = r.randint(0, 3)
        inner_where = f" WHERE z.{col} IS NOT NULL" if r.random() < 0.3 else ""
        if kind == 0:
            return f"{outer} IN (SELECT z.{col} FROM {t} AS z{inner_where})"
        if kind == 1:
            return f"{outer} NOT IN (SELECT z.{col} FROM {t} AS z{inner_where})"
        cond = f"z.{col} = {outer}"
        if r.random() < 0.4:
            cond += f" AND z.k {r.choice(['<', '>=', '<>'])} {r.randint(0, 2)}"
        return f"{'NOT ' if kind == 3 else ''}EXISTS (SELECT * FROM {t} AS z WHERE {cond})"

    # -- queries ---------------------------------------------------------------------------
    def select(self, width=None):
        r = self.rng
        frm, ints, strs = self.from_clause()
        width = width or r.randint(1, 3)
        items = [self.num(ints) if r.random() < 0.5 else r.choice(ints) for _ in range(width)]
        if r.random() < 0.2 and width > 1:
            items[-1] = r.choice(strs) if width is None else items[-1]
        distinct = "DISTINCT " if r.random() < 0.2 else ""
        cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(items))
        return f"SELECT {distinct}{cols} FROM {frm}{self.where(ints, strs)}"

    def aggregate(self):
        r = self.rng
        frm, ints, strs = self.from_clause()
        groups = r.sample(ints + strs, r.randint(0, 2))
        aggs = []
        for _ in range(r.randint(1, 3)):
            f = r.choice(["COUNT(*)", "COUNT({})", "SUM({})", "MIN({})", "MAX({})", "AVG({})",
                          "COUNT(DISTINCT {})", "SUM(DISTINCT {})", "MIN({})"])
            arg = r.choice(strs) if f.startswith(("MIN", "MAX", "COUNT")) and r.random() < 0.2 \
                else (self.num(ints, 1) if r.random() < 0.3 else r.choice(ints))
            aggs.append(f.format(arg))
        items = ", ".join([f"{g} AS g{i}" for i, g in enumerate(groups)] +
                          [f"{a} AS a{i}" for i, a in enumerate(aggs)])
        text = f"SELECT {items} FROM {frm}{self.where(ints, strs)}"
        if groups:
            text += f" GROUP BY {', '.join(groups)}"
            if r.random() < 0.4:
                having = ["COUNT(*) > 1", f"SUM({r.choice(ints)}) >= 1",
                          f"MIN({r.choice(ints)}) IS NULL"]
                text += f" HAVING {r.choice(having)}"
        return text

    def setop(self):
        r = self.rng
        op = r.choice(["UNION", "UNION ALL", "EXCEPT", "INTERSECT", "EXCEPT ALL", "INTERSECT ALL"])
        w = r.randint(1, 2)
        return f"{self.select(w)} {op} {self.select(w)}"

    def topk(self):
        r = self.rng
        inner = r.choice([self.select, self.aggregate])()
        inner_cols = _output_columns(inner)
        order = ", ".join(f"{c} {r.choice(['ASC', 'DESC'])}"
                          f"{r.choice(['', ' NULLS FIRST', ' NULLS LAST'])}" for c in inner_cols)
        return f"SELECT * FROM ({inner}) AS q ORDER BY {order} LIMIT {r.randint(1, 4)}"

    def row_number(self):
        r = self.rng
        inner = self.select(r.randint(2, 3))
        cols = _output_columns(inner)
        part = r.choice(cols)
        order = ", ".join(f"{c} {r.choice(['ASC', 'DESC'])}" for c in cols)
        return (f"SELECT * FROM (SELECT q.*, ROW_NUMBER() OVER (PARTITION BY {part} ORDER BY "
                f"{order}) AS rn FROM ({inner}) AS q) AS w WHERE rn <= {r.randint(1, 3)}")

    def cte(self):
        r = self.rng
        first = self.select(2)
        return (f"WITH c AS ({first}) SELECT c.c0, COUNT(*) AS n FROM c JOIN c AS d ON "
                f"c.c0 = d.c1 GROUP BY c.c0" if r.random() < 0.5 else
                f"WITH c AS ({first}) SELECT * FROM c WHERE c.c0 {r.choice(['>', '<'])} 1")

    def any(self):
        return self.rng.choice([self.select, self.select, self.aggregate, self.aggregate,
                                self.setop, self.topk, self.row_number, self.cte])()


def _output_columns(query: str) -> list:
    import sqlglot
    return [e.alias_or_name for e in sqlglot.parse_one(query, read="spark").selects]


def updates(rng: random.Random, tables: dict, epochs: int):
    """Per epoch, ``[(table, inserts, removes)]``: removes only of rows present."""
    contents = {t: [] for t in tables}
    out = []
    for _ in range(epochs):
        epoch = []
        for t, cols in tables.items():
            ins = [row(rng, cols) for _ in range(rng.randint(0, 5))]
            rem = rng.sample(contents[t], min(len(contents[t]), rng.randint(0, 2)))
            for x in rem:
                contents[t].remove(x)
            contents[t].extend(ins)
            epoch.append((t, ins, rem))
        out.append(epoch)
    return out
