"""Bad input: one clear UsageError naming what was wrong, with a suggestion, and the
namespace, the flow (same object, operators, epoch), the declarations, the contents and the
queued updates all unchanged."""
from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from ddlab.kernel_ext import get_magics

from .conftest import cell, dd, user_state


@pytest.fixture
def ready(ip):
    """edges (3 rows stepped) and cc declared, one more row queued."""
    ip.user_ns["df"] = pd.DataFrame({"Source": [1, 2, 4], "Target": [2, 3, 5], "when": [1, 2, 3]})
    dd(ip, "input edges --from df --src Source --dst Target")
    cell(ip, "cc", "connected_components(edges)")
    dd(ip, "insert edges [(8, 9)] --no-step")
    return ip


def fails(ip, line, body=None, *, match):
    """Run a magic that must fail; returns the message.  Checks nothing changed."""
    before = user_state(ip)
    with capture_output(), pytest.raises(UsageError) as info:
        if body is None:
            ip.run_line_magic("dd", line)
        else:
            ip.run_cell_magic("dd", line, body)
    message = str(info.value)
    assert "\n" not in message.strip(), message
    for m in ([match] if isinstance(match, str) else match):
        assert m in message, message
    assert user_state(ip) == before
    return message


@pytest.mark.parametrize("line", ["show edgs", "changes edgs", "trace edgs", "graph edgs",
                                  "stats edgs", "drop edgs", "insert edgs [(1, 2)]"])
def test_unknown_collection_names_suggest_the_closest(ready, line):
    fails(ready, line, match=["'edgs'", "Did you mean 'edges'?", "Declared: edges"])


def test_unknown_command_suggests_the_closest(ready):
    fails(ready, "stpe 2", match=["'stpe'", "Did you mean 'step'?"])
    fails(ready, "help stpe", match=["Did you mean 'step'?"])


def test_unknown_name_in_a_body(ready):
    fails(ready, "labels", "connected_components(edgs)",
          match=["labels", "NameError", "Did you mean 'edges'?"])
    assert "labels" not in ready.user_ns


@pytest.mark.parametrize("line, match", [
    ("input e2 --from df --src Sorce --dst Target", ["no column 'Sorce'", "Did you mean 'Source'?"]),
    ("input e2 --from df --columns Source,Targte", ["no column 'Targte'", "Did you mean 'Target'?"]),
    ("input e2 --from df --src Source --dst Target --label lbl", ["no column 'lbl'", "Its columns"]),
    ("show cc --sort lable", ["no field 'lable'", "Did you mean 'label'?"]),
])
def test_wrong_column_names(ready, line, match):
    fails(ready, line, match=match)


def test_dataframe_without_the_input_columns(ready):
    ready.user_ns["rows"] = pd.DataFrame({"src": [1], "dest": [2]})
    fails(ready, "insert edges rows", match=["lacks column 'dst'", "Did you mean 'dest'?"])


def test_missing_paths_and_sources_suggest(ready, tmp_path, monkeypatch):
    (tmp_path / "collegemsg.csv").write_text("src,dst,time\n1,2,3\n")
    monkeypatch.chdir(tmp_path)
    fails(ready, "input e2 --from colegemsg.csv", match=["no file 'colegemsg.csv'",
                                                         "Did you mean 'collegemsg.csv'?"])
    fails(ready, f"input e2 --from {tmp_path}/colegemsg.csv",
          match=["no file", f"Did you mean '{tmp_path}/collegemsg.csv'?"])
    fails(ready, "input e2 --from nowhere/x.parquet", match=["no file 'nowhere/x.parquet'",
                                                             "missing folder"])
    fails(ready, "input e2 --from collgemsg", match=["unknown source 'collgemsg'",
                                                     "Did you mean 'collegemsg'?"])
    fails(ready, "input e2 --from dff", match=["unknown source 'dff'", "Did you mean 'df'?"])
    ready.user_ns["numbers"] = [1, 2]
    fails(ready, "input e2 --from numbers", match=["is a list, not a DataFrame"])


@pytest.mark.parametrize("line, match", [
    ("input e2 --from df --window 7x --step 1d", ["--window '7x' is not a duration", "7d"]),
    ("input e2 --from df --window 7d", ["--window needs --step"]),
    ("input e2 --from df --step 1d", ["--step needs --window"]),
    ("input e2 --window 7d --step 1d", ["--window needs a source"]),
    ("input e2 --from df --format xml", ["%dd input", "invalid choice: 'xml'", "--help"]),
    ("input e2 --from df --sql 'SELECT 1'", ["--from or --sql, not both"]),
    ("input", ["%dd input", "required: name", "see %dd input --help"]),
    ("step abc", ["%dd step", "invalid int value: 'abc'"]),
    ("step --to 3", ["--to moves a window, but no input has one"]),
    ("stats --epoch 99", ["--epoch 99 is out of range 0..0"]),
    ("graph --epoch -4", ["out of range"]),
    ("show cc --limit -1", ["--limit -1 is negative"]),
    ("insert edges [(1, 2", ["cannot read the rows"]),
    ("insert edges [(1, 2, 3)]", ["row 0 (1, 2, 3) has 3 fields", "input 'edges' has 2"]),
    ("insert edges", ["no rows given"]),
    ("insert edges new_rows", ["no variable 'new_rows'"]),
    ("insert cc [(1, 2)]", ["'cc' is derived", "edges"]),
])
def test_malformed_options_and_rows(ready, line, match):
    fails(ready, line, match=match)


@pytest.mark.parametrize("line, match", [
    ("input df --from df", ["'df' already names a DataFrame", "del df"]),
    ("input step", ["'step' is a %dd command"]),
    ("input 2x", ["'2x' is not a valid Python name"]),
    ("input cc", ["'cc' is already a derived collection"]),
])
def test_bad_names(ready, line, match):
    fails(ready, line, match=match)


def test_bad_derived_names(ready):
    fails(ready, "edges", "edges.distinct()", match=["'edges' is already an input"])
    fails(ready, "class", "edges", match=["not a valid Python name"])


@pytest.mark.parametrize("body, match", [
    ("edges.map(lambda r: (r[0], 1 // 0))", ["recomputing the flow", "ZeroDivisionError"]),
    ("edges.map(lambda r: (r[0], r[1] // 0 if r[0] == 8 else r[1]))",
     ["first result failed", "ZeroDivisionError", "Nothing was declared"]),
    ("edges.iterate(lambda x: x.map(lambda r: (r[0] + 1, r[1])), max_iterations=5)",
     ["did not converge within 5 iterations"]),
    ("connected_components(edges", ["syntax error"]),
    ("1 + 1", ["must end with an expression giving a Collection, not int"]),
    ("connected_components(edges).view()", ["gives a View"]),
    ("x = 1", ["must end with an expression (or assign bad)"]),
    ("edges.join(42)", ["AttributeError"]),
    ("import ddlab\nddlab.Dataflow().input('z')", ["belongs to another Dataflow"]),
])
def test_bodies_that_fail_leave_nothing_behind(ready, body, match):
    ops_before = len(get_magics(ready).session.flow.operators)
    fails(ready, "bad", body, match=match)
    assert len(get_magics(ready).session.flow.operators) == ops_before
    assert "bad" not in ready.user_ns
    # the flow still works, with the queued row applied by the next step
    r = dd(ready, "step")
    assert r.lines[0].changes["edges"] == (1, 0)


def test_failing_body_at_epoch_zero_keeps_the_queue(ip):
    ip.user_ns["df"] = pd.DataFrame({"src": [1, 2], "dst": [2, 3]})
    dd(ip, "input edges --from df")
    fails(ip, "bad", "edges.map(lambda r: 1 // 0)", match=["ZeroDivisionError"])
    assert get_magics(ip).session.pending() == 2
    out = cell(ip, "cc", "connected_components(edges)")
    assert out.first.lines[0].changes["edges"] == (2, 0)


def test_a_failing_epoch_is_rolled_back(ready):
    cell(ready, "inv", "edges.map(lambda r: (r[0], 100 // (r[1] - 99)))")
    before = user_state(ready)
    with capture_output(), pytest.raises(UsageError) as info:
        ready.run_line_magic("dd", "insert edges [(5, 99)]")
    message = str(info.value)
    assert "failed and was rolled back" in message and "ZeroDivisionError" in message
    assert "1 input update was discarded" in message
    assert user_state(ready) == before


def test_drop_of_a_collection_others_use(ready):
    fails(ready, "drop edges", match=["cannot drop 'edges'", "cc is defined from it"])


def _python_collection_before_any_step(ip):
    """A collection built in Python on the live flow (possible only before data flowed)."""
    dd(ip, "input edges --columns src,dst")
    ip.run_cell("mine = edges.distinct()")
    assert "mine" in ip.user_ns
    return ip


def test_bodies_cannot_touch_the_live_flow_through_python_variables(ip):
    _python_collection_before_any_step(ip)
    fails(ip, "bad", "connected_components(mine)",
          match=["'mine' is a collection of the running dataflow built in Python",
                 "Declare it with %%dd"])


def test_python_operators_after_data_flowed_are_refused_by_the_engine(ready):
    import ddlab

    with capture_output(), pytest.raises(ddlab.DataflowError, match="already sent updates"):
        ready.run_cell("mine = edges.distinct()").raise_error()
    assert "mine" not in ready.user_ns


def test_trace_of_an_unarranged_collection(ready):
    cell(ready, "plain --no-arrange", "edges.distinct()")
    fails(ready, "trace plain", match=["keeps no trace", "--no-arrange"])


def test_undeclared_python_collection_is_named_as_such(ip):
    _python_collection_before_any_step(ip)
    fails(ip, "show mine", match=["'mine' is a Collection built in Python", "%%dd mine"])


def test_empty_cell_body(ready):
    fails(ready, "nothing", "   \n", match=["the cell body is empty"])


def test_short_errors_off_raises_the_underlying_error(ready):
    import ddlab

    get_magics(ready).short_errors = False
    cell(ready, "inv", "edges.map(lambda r: (r[0], 100 // (r[1] - 99)))")
    with capture_output(), pytest.raises(ddlab.OperatorError) as info:
        ready.run_line_magic("dd", "insert edges [(5, 99)]")
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    with capture_output(), pytest.raises(ddlab.OperatorError):
        ready.run_cell_magic("dd", "bad", "edges.map(lambda r: 1 // 0)")
    with capture_output(), pytest.raises(NameError):
        ready.run_cell_magic("dd", "bad", "connected_components(edgs)")
    # plain usage mistakes stay one-line usage errors
    with capture_output(), pytest.raises(UsageError, match="Did you mean 'edges'"):
        ready.run_line_magic("dd", "show edgs")
