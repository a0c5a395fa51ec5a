"""DuckDB as the oracle of SQL cells: the same tables, the same query (transpiled from
Spark's dialect by sqlglot), evaluated from scratch; answers compared as multisets of rows
with NULLs as ``None`` and numbers rounded (AVG's float sums differ in the last bits)."""
from __future__ import annotations

import datetime
from collections import Counter

import duckdb
import sqlglot

from ddlab import Dataflow
from ddlab.engine.sql import box_row, plain, sql


def norm(value):
    if isinstance(value, datetime.datetime) and value.time() == datetime.time(0):
        return value.date()  # DuckDB's date + INTERVAL is a TIMESTAMP; Spark's DATE_ADD a DATE
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return round(float(value), 6) + 0.0
    return value


def as_bag(rows) -> Counter:
    return Counter(tuple(norm(v) for v in row) for row in rows)


class Pair:
    """One query maintained by ddlab beside DuckDB tables holding the same rows."""

    def __init__(self, schemas: dict, query: str):
        self.schemas, self.query = schemas, query
        self.flow = Dataflow()
        self.inputs = {t: self.flow.input(t, columns=cols) for t, cols in schemas.items()}
        self.q = sql(query, self.inputs)
        self.view = self.q.result.view()
        self.duck = duckdb.connect()
        for t, cols in schemas.items():
            typed = ", ".join(f"{c} {typ}" for c, typ in cols_typed(cols))
            self.duck.execute(f"CREATE TABLE {t} ({typed})")
        self.contents = {t: Counter() for t in schemas}
        self.duck_query = sqlglot.transpile(query, read="spark", write="duckdb")[0]

    def update(self, table: str, inserts=(), removes=()):
        if inserts:
            self.inputs[table].insert([box_row(r) for r in inserts])
            self.contents[table].update(inserts)
        if removes:
            self.inputs[table].remove([box_row(r) for r in removes])
            self.contents[table].subtract(removes)

    def step(self):
        self.flow.step()
        for t in self.schemas:
            self.duck.execute(f"DELETE FROM {t}")
            rows = list(self.contents[t].elements())
            if rows:
                marks = ", ".join("?" * len(self.schemas[t]))
                self.duck.executemany(f"INSERT INTO {t} VALUES ({marks})", rows)

    def ours(self) -> Counter:
        return as_bag(plain(r) for r, m in self.view.to_dict().items() for _ in range(m))

    def theirs(self) -> Counter:
        return as_bag(self.duck.execute(self.duck_query).fetchall())

    def check(self, where: str = "") -> Counter:
        """Assert the view equals DuckDB's answer; returns the answer."""
        ours, theirs = self.ours(), self.theirs()
        assert ours == theirs, (f"{where}\n{self.query}\nonly ddlab: {ours - theirs}\n"
                                f"only DuckDB: {theirs - ours}")
        return theirs


def cols_typed(cols):
    """Column types by name: ``s`` and ``s_...`` are strings, ``d_...`` dates, the rest
    integers."""
    return [(c, "VARCHAR" if c == "s" or c.startswith("s_") else
             "DATE" if c.startswith("d_") else "BIGINT") for c in cols]
