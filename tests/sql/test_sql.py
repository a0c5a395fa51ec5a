"""SQL cells: recursive queries against DuckDB's WITH RECURSIVE and networkx, errors that
name the construct, line and column, explain and why on a SQL view, and defects found by the
fuzzer (each failed before its fix)."""
from __future__ import annotations

import random
from collections import Counter

import duckdb
import networkx as nx
import pytest

from ddlab import Dataflow
from ddlab.engine.errors import DataflowError
from ddlab.engine.sql import SqlError, plain, sql

from .oracle import Pair

REACH = """WITH RECURSIVE reach(node) AS (
    SELECT src FROM edges WHERE src = 0
    UNION
    SELECT edges.dst FROM reach JOIN edges ON reach.node = edges.src)
SELECT node FROM reach"""


def _bag(view):
    return Counter(plain(r) for r, m in view.to_dict().items() for _ in range(m))


def _edge_stream(seed, n=12, epochs=6):
    rng = random.Random(seed)
    edges = set()
    for _ in range(epochs):
        ins = {(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(1, 6))} - edges
        rem = set(rng.sample(sorted(edges), min(len(edges), rng.randint(0, 3))))
        edges = (edges - rem) | ins
        yield sorted(ins), sorted(rem), set(edges)


@pytest.mark.parametrize("seed", range(3))
def test_recursive_reachability_equals_duckdb_and_networkx(seed):
    pair = Pair({"edges": ["src", "dst"]}, REACH)
    for ins, rem, edges in _edge_stream(seed):
        pair.update("edges", ins, rem)
        pair.step()
        answer = pair.check()
        graph = nx.DiGraph(list(edges))
        expected = ({0} | nx.descendants(graph, 0)) if 0 in graph and any(
            s == 0 for s, _ in edges) else set()
        assert {row[0] for row in answer} == expected
    assert pair.q.loops  # one engine loop for the recursive CTE


def test_connected_components_in_sql_equal_networkx():
    flow = Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    q = sql("""WITH RECURSIVE link(a, b) AS (
                   SELECT src, dst FROM edges UNION SELECT dst, src FROM edges
                   UNION SELECT src, src FROM edges UNION SELECT dst, dst FROM edges),
               reach(a, b) AS (
                   SELECT a, b FROM link
                   UNION SELECT reach.a, link.b FROM reach JOIN link ON reach.b = link.a)
               SELECT a AS node, MIN(b) AS label FROM reach GROUP BY a""", {"edges": edges})
    view = q.result.view()
    for ins, rem, current in _edge_stream(7, n=15, epochs=5):
        edges.insert(ins)
        edges.remove(rem)
        flow.step()
        graph = nx.Graph(list(current))
        expected = Counter((v, min(c)) for c in nx.connected_components(graph) for v in c)
        assert _bag(view) == expected


def test_mutually_recursive_ctes_equal_networkx():
    """Nodes at an even and at an odd distance from 0 (walks, not shortest paths): two CTEs
    that read each other, one engine loop with two variables."""
    flow = Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    q = sql("""WITH RECURSIVE
        even(node) AS (SELECT 0 FROM edges UNION
                       SELECT edges.dst FROM odd JOIN edges ON odd.node = edges.src),
        odd(node) AS (SELECT edges.dst FROM even JOIN edges ON even.node = edges.src)
        SELECT 'even' AS parity, node FROM even UNION ALL SELECT 'odd', node FROM odd""",
            {"edges": edges})
    view = q.result.view()
    assert len(q.loops) == 1
    for ins, rem, current in _edge_stream(3, n=10, epochs=5):
        edges.insert(ins)
        edges.remove(rem)
        flow.step()
        # the product graph of (node, parity) and networkx's reachability on it
        product = nx.DiGraph([((s, p), (d, 1 - p)) for s, d in current for p in (0, 1)])
        start = (0, 0)
        reached = ({start} | nx.descendants(product, start)) if start in product else (
            {start} if current else set())
        expected = Counter(("even" if p == 0 else "odd", v) for v, p in reached)
        assert _bag(view) == expected


def test_avg_over_whole_and_fractional_values():
    """Failed before Float compared equal only to Float: the interner gave Float(3.0) the code
    of Int(3), and the column decoded as Int and Float together (fuzzer seed 50)."""
    pair = Pair({"t": ["k", "b"], "u": ["k", "c"]},
                "SELECT AVG(t.b) AS a1, AVG(1) AS a2, COUNT(*) AS n FROM t JOIN u ON t.k = u.k")
    pair.update("t", [(1, 3), (1, None), (2, 3)])
    pair.update("u", [(1, 0), (2, 0)])
    pair.step()
    pair.check()
    pair.update("t", [(1, 0), (2, 0)])  # AVG 3.0 -> 1.5 in one batch
    pair.step()
    pair.check()


def test_global_aggregate_over_empty_input_is_one_row():
    pair = Pair({"t": ["k", "b"]}, "SELECT COUNT(*) AS n, SUM(b) AS s, MAX(b) AS m FROM t")
    pair.step()
    assert pair.check() == Counter({(0.0, None, None): 1})
    pair.update("t", [(1, 5)])
    pair.step()
    pair.check()
    pair.update("t", removes=[(1, 5)])
    pair.step()
    assert pair.check() == Counter({(0.0, None, None): 1})


def test_not_in_with_null_in_the_subquery_keeps_nothing():
    pair = Pair({"t": ["k"], "u": ["k"]}, "SELECT k FROM t WHERE k NOT IN (SELECT k FROM u)")
    pair.update("t", [(1,), (2,), (None,)])
    pair.step()
    assert len(pair.check()) == 3  # u empty: every row, the NULL one too
    pair.update("u", [(1,)])
    pair.step()
    assert pair.check() == Counter({(2.0,): 1})
    pair.update("u", [(None,)])
    pair.step()
    assert pair.check() == Counter()


@pytest.mark.parametrize("text, construct, line, column", [
    ("SELECT a,\n  RANK() OVER (ORDER BY a) AS r FROM t", "RANK", 2, 3),
    ("SELECT a FROM t\nLIMIT 3", "LIMIT without ORDER BY", 2, 7),
    ("SELECT a, RAND() AS r FROM t", "RAND", 1, 11),
    ("SELECT a FROM t\nWHERE zz > 1", "no column zz", 2, 7),
    ("SELECT a FROM nowhere", "no table 'nowhere'", 1, 15),
    ("SELECT a FROM t ORDER BY a LIMIT 2 OFFSET 1", "OFFSET", 1, 43),
    ("SELECT a, COUNT(*) AS n FROM t GROUP BY b", "neither grouped", 1, 8),
    ("WITH RECURSIVE r(x) AS (SELECT a FROM t UNION ALL SELECT x FROM r) SELECT x FROM r",
     "UNION ALL in a recursive CTE", None, None),
    ("SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) q",
     "ROW_NUMBER", None, None),
    ("SELECT a FROM t WHERE", "cannot parse", None, None),
])
def test_refused_constructs_name_what_and_where(text, construct, line, column):
    flow = Dataflow()
    t = flow.input("t", columns=["a", "b"])
    before = len(flow.operators)
    with pytest.raises(SqlError) as info:
        sql(text, {"t": t})
    err = info.value
    assert construct.lower() in str(err).lower()
    if line is not None:
        assert (err.line, err.column) == (line, column), str(err)
    assert isinstance(err, DataflowError)
    assert len(flow.operators) == before  # nothing built


def test_explain_shows_the_plan_and_its_operators():
    flow = Dataflow()
    t = flow.input("t", columns=["k", "v"])
    q = sql("SELECT k, SUM(v) AS total FROM t WHERE v > 0 GROUP BY k", {"t": t}, name="q")
    text = q.explain()
    assert "Aggregate by #0: SUM(#1)" in text and "Filter (v#1 > 0)" in text
    labels = {op.label for op in flow.operators}
    for line in text.splitlines():
        if " -> " in line:
            assert set(line.split(" -> ")[1].split(", ")) <= labels


def test_why_explains_a_sql_row_by_its_input_rows():
    flow = Dataflow()
    emp = flow.input("emp", columns=["name", "dept"])
    dept = flow.input("dept", columns=["dept", "floor"])
    q = sql("SELECT e.name, d.floor FROM emp AS e JOIN dept AS d ON e.dept = d.dept",
            {"emp": emp, "dept": dept})
    view = q.result.view()
    emp.insert([("ann", "eng"), ("bob", "ops")])
    dept.insert([("eng", 3), ("ops", 1)])
    flow.step()
    (row,) = [r for r in view.to_dict() if r[0] == "ann"]
    why = flow.why(q.result, row)
    assert why.verified
    assert why.inputs["emp"].iloc[:, :2].values.tolist() == [["ann", "eng"]]
    assert why.inputs["dept"].iloc[:, :2].values.tolist() == [["eng", 3]]


def test_spark_order_of_nulls_in_a_top_k():
    """Spark sorts NULLs first ascending, last descending; sqlglot writes that out for DuckDB."""
    pair = Pair({"t": ["a"]}, "SELECT a FROM t ORDER BY a LIMIT 2")
    pair.update("t", [(3,), (None,), (1,)])
    pair.step()
    assert pair.check() == Counter({(None,): 1, (1.0,): 1})


def test_duckdb_agrees_on_the_reach_query_text():
    """The recursive query is valid DuckDB as transpiled (the oracle really runs it)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE edges (src BIGINT, dst BIGINT)")
    con.execute("INSERT INTO edges VALUES (0, 1), (1, 2), (5, 6)")
    assert sorted(con.execute(Pair({"edges": ["src", "dst"]}, REACH).duck_query).fetchall()) \
        == [(0,), (1,), (2,)]


@pytest.mark.parametrize("query", [
    # failed before: GREATEST/LEAST gave NULL when any argument was NULL (Spark and DuckDB
    # skip NULLs)
    "SELECT a, IF(a > 1, 'big', 'small') AS sz, GREATEST(a, b) AS g, LEAST(a, b) AS l FROM t",
    # failed before: COUNT(*) alone projected records of no field ("empty tuple")
    "SELECT COUNT(*) AS n FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.a > 2)",
    "SELECT a, b FROM t WHERE a IN (1, 3) OR s LIKE 'X%' OR s NOT LIKE '_b'",
    "SELECT LOWER(s) AS l, LENGTH(s) AS n, SUBSTRING(s, 2, 2) AS sub, s || 'x' AS d FROM t",
    "SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END AS w, a % 2 AS m FROM t",
    "SELECT a FROM t UNION SELECT b FROM t ORDER BY 1 LIMIT 3",
    # refused before: GROUP BY a position or an alias, HAVING an alias (Spark allows them)
    "SELECT a AS x, COUNT(*) AS n FROM t GROUP BY 1 HAVING n > 1",
    "SELECT a + 1 AS x, SUM(b) AS total FROM t GROUP BY x HAVING total IS NOT NULL",
    "SELECT s, MAX(b) AS m FROM t GROUP BY s HAVING COUNT(*) >= 1 AND m > 1",
])
def test_scalar_functions_and_shapes_equal_duckdb(query):
    pair = Pair({"t": ["a", "b", "s"]}, query)
    pair.update("t", [(1, 2, "Xyz"), (2, None, "ab"), (3, 1, None), (None, 4, "q"),
                      (1, 2, "Xyz")])
    pair.step()
    assert pair.check()
    pair.update("t", removes=[(1, 2, "Xyz")])
    pair.step()
    pair.check()


def test_date_functions_equal_duckdb():
    import datetime

    day = datetime.date
    query = ("SELECT id, YEAR(d_sent) AS y, MONTH(d_sent) AS m, DAY(d_sent) AS dd, "
             "DATE_ADD(d_sent, 3) AS later, DATE_SUB(d_sent, 2) AS earlier, "
             "DATEDIFF(d_read, d_sent) AS waited FROM msgs WHERE YEAR(d_sent) >= 2024")
    pair = Pair({"msgs": ["id", "d_sent", "d_read"]}, query)
    pair.update("msgs", [(1, day(2024, 2, 28), day(2024, 3, 2)), (2, day(2023, 12, 31), None),
                         (3, None, day(2024, 1, 1)), (4, day(2024, 12, 31), day(2024, 12, 31))])
    pair.step()
    assert len(pair.check()) == 2
    pair.update("msgs", removes=[(1, day(2024, 2, 28), day(2024, 3, 2))])
    pair.step()
    pair.check()


def test_why_through_a_recursive_cte_gives_the_path():
    flow = Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    q = sql(REACH, {"edges": edges})
    view = q.result.view()
    edges.insert([(0, 1), (1, 2), (2, 3), (5, 6), (0, 5)])
    flow.step()
    assert sorted(view.to_dict()) == [0, 1, 2, 3, 5, 6]
    why = flow.why(q.result, 3)
    assert why.verified
    assert sorted(why.inputs["edges"].iloc[:, :2].values.tolist()) == [[0, 1], [1, 2], [2, 3]]
    assert "Fix reach" in q.explain() and "Ref reach" in q.explain()
