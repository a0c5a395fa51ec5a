"""``%%dd sql NAME`` and ``%dd explain NAME``: the query's result is a declared collection
kept up to date by inserts, deletions and rebuilds (checked against DuckDB on the same rows),
``%dd why`` explains its rows, errors show line and column and declare nothing."""
from __future__ import annotations

from collections import Counter

import duckdb
import pytest
from IPython.core.error import UsageError

from ddlab.kernel_ext import get_magics
from ..conftest import cell, dd

QUERY = """SELECT e.dept, COUNT(*) AS n, SUM(e.pay) AS total
FROM emp AS e JOIN depts AS d ON e.dept = d.dept
WHERE d.open = 1
GROUP BY e.dept"""


def _duck(emp, depts):
    con = duckdb.connect()
    con.execute("CREATE TABLE emp (name VARCHAR, dept VARCHAR, pay BIGINT)")
    con.execute("CREATE TABLE depts (dept VARCHAR, open BIGINT)")
    con.executemany("INSERT INTO emp VALUES (?, ?, ?)", emp)
    con.executemany("INSERT INTO depts VALUES (?, ?)", depts)
    return Counter(con.execute(QUERY).fetchall())


def _shown(ip, name):
    frame = dd(ip, f"show {name}").frame
    rows = Counter()
    for rec in frame.to_dict("records"):
        m = rec.pop("multiplicity")
        rows[tuple(rec.values())] += m
    return rows


def test_sql_cell_is_a_declared_collection_kept_up_to_date(ip):
    emp = [("ann", "eng", 10), ("bob", "eng", 20), ("cy", "ops", 5), ("di", "hr", 7)]
    depts = [("eng", 1), ("ops", 1), ("hr", 0)]
    dd(ip, "input emp --columns name,dept,pay")
    dd(ip, "input depts --columns dept,open")
    dd(ip, f"insert emp {emp}")
    dd(ip, f"insert depts {depts}")
    out = cell(ip, "sql per_dept", QUERY)
    assert "per_dept" in repr(out)
    session = get_magics(ip).session
    assert "per_dept" in session.derived
    assert _shown(ip, "per_dept") == _duck(emp, depts)
    dd(ip, "remove emp [('bob', 'eng', 20)]")
    dd(ip, "insert depts [('hr', 1)]")
    dd(ip, "step")
    emp.remove(("bob", "eng", 20))
    depts.append(("hr", 1))
    assert _shown(ip, "per_dept") == _duck(emp, depts)
    # other magics accept it: %%dd over it, %dd why, %dd explain
    cell(ip, "big", "per_dept.filter(lambda r: r[2] >= 7)")
    assert len(dd(ip, "show big").frame) == 2
    why = dd(ip, "why per_dept ('eng', 1, 10)")
    assert why.explanation.verified
    assert why.inputs["emp"][["name", "dept"]].values.tolist() == [["ann", "eng"]]
    plan = repr(dd(ip, "explain per_dept"))
    assert "Aggregate by #0: COUNT(*), SUM(#1)" in plan and "Join inner" in plan
    assert "per_dept: join#" in plan


def test_sql_cell_errors_show_line_and_column_and_declare_nothing(ip):
    dd(ip, "input emp --columns name,dept,pay")
    with pytest.raises(UsageError) as info:
        cell(ip, "sql bad", "SELECT name\nFROM emp\nLIMIT 3")
    assert "line 3, column 7" in str(info.value) and "LIMIT without ORDER BY" in str(info.value)
    with pytest.raises(UsageError) as info:
        cell(ip, "sql bad", "SELECT nme FROM emp")
    assert "no column nme" in str(info.value)
    assert "bad" not in get_magics(ip).session.derived


def test_explain_refuses_a_collection_without_a_plan(ip):
    dd(ip, "input emp --columns name,dept,pay")
    with pytest.raises(UsageError) as info:
        dd(ip, "explain emp")
    assert "no plan" in str(info.value)


def test_a_global_aggregate_cell_over_stepped_rows_has_its_row_at_once(ip):
    """The aggregate's hidden one-row input is applied by the cell's first step."""
    dd(ip, "input emp --columns name,dept,pay")
    dd(ip, "insert emp [('ann', 'eng', 10), ('bob', 'ops', 5)]")
    dd(ip, "step")
    cell(ip, "sql totals", "SELECT COUNT(*) AS n, SUM(pay) AS total FROM emp")
    assert _shown(ip, "totals") == Counter({(2, 15): 1})
    dd(ip, "rebuild")
    assert _shown(ip, "totals") == Counter({(2, 15): 1})
    dd(ip, "remove emp [('ann', 'eng', 10), ('bob', 'ops', 5)]")
    dd(ip, "step")
    assert _shown(ip, "totals") == Counter({(0, None): 1})
