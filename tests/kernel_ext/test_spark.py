"""The magics on Spark: CollegeMsg by name with a sliding window (CC and SCC checked against
networkx at every position visited), and the other source kinds (a CSV path with a column
mapping, a SQL query, Spark and pandas DataFrame variables)."""
from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from ddlab.kernel_ext import get_magics

from .conftest import as_dict, cc_oracle, cell, collegemsg_events, dd, scc_oracle, user_state

pytestmark = pytest.mark.spark

DAY = 86_400


def window_edges(events: pd.DataFrame, k: int, width: int = 7 * DAY, step: int = DAY) -> set:
    start = int(events["time"].min()) + k * step
    inside = events[(events["time"] >= start) & (events["time"] < start + width)]
    return set(map(tuple, inside[["src", "dst"]].drop_duplicates().itertuples(index=False)))


def check_position(ip, events, k):
    edges = window_edges(events, k)
    shown = dd(ip, "show edges")
    assert as_dict(shown.frame) == {e: 1 for e in edges}, f"window {k}"
    assert as_dict(dd(ip, "show cc").frame) == cc_oracle(edges), f"cc at window {k}"
    assert as_dict(dd(ip, "show scc").frame) == scc_oracle(edges), f"scc at window {k}"
    return edges


def test_collegemsg_window_cc_and_scc_step_forward_and_backward(ip, spark):
    events = collegemsg_events()
    declared = dd(ip, "input edges --from collegemsg --window 7d --step 1d")
    text = repr(declared)
    assert "59,835 rows read, 59,835 loaded, 0 malformed" in text
    assert "window 1w stepping 1d: 188 positions" in text
    assert "collegemsg" in declared._repr_html_()
    feed = get_magics(ip).session.state.handles["edges"].feed
    assert feed.position == -1

    out = cell(ip, "cc", "connected_components(edges)")
    first = out.first.lines[0]
    assert first.window["position"] == 0 and first.changes["edges"][1] == 0
    cell(ip, "scc", "strongly_connected_components(edges)")
    check_position(ip, events, 0)

    forward = dd(ip, "step 3")
    assert [line.window["position"] for line in forward.lines] == [1, 2, 3]
    assert [line.epoch for line in forward.lines] == [1, 2, 3]
    prev = window_edges(events, 2)
    now = check_position(ip, events, 3)
    assert forward.lines[-1].changes["edges"] == (len(now - prev), len(prev - now))
    assert "window 3/187" in forward.lines[-1].text()

    back = dd(ip, "step -1")
    assert back.lines[0].window["position"] == 2 and back.lines[0].epoch == 4
    assert back.lines[0].changes["edges"] == (len(prev - now), len(now - prev))
    check_position(ip, events, 2)

    jump = dd(ip, "step --to 12")
    assert jump.epochs == 1 and jump.lines[0].window["position"] == 12
    edges12 = check_position(ip, events, 12)

    # displays carry the counts
    html = dd(ip, "show scc")._repr_html_()
    n = len(scc_oracle(edges12))
    assert f"{n:,} records" in html and "after epoch 5" in html
    assert f"{len(edges12):,} records" in dd(ip, "show edges")._repr_html_()
    changes = dd(ip, "changes edges")
    assert (changes.additions, changes.retractions) == jump.lines[0].changes["edges"]
    step_html = jump._repr_html_()
    assert "window 12/187" in step_html and "#e6ffec" in step_html
    trace = dd(ip, "trace scc")
    assert trace.by_time["updates"].sum() == n
    assert list(trace.lattices) == ["root/scc"] and 5 in trace.lattices["root/scc"].columns
    g = dd(ip, "graph")
    assert g.svg.count('class="ddlab-loop"') == 4
    status = dd(ip, "status")
    assert "position 12/187" in repr(status)

    # a rebuild keeps the window position and the contents
    dd(ip, "rebuild")
    check_position(ip, events, 12)
    assert get_magics(ip).session.state.handles["edges"].feed.position == 12
    nxt = dd(ip, "step")
    assert nxt.lines[0].window["position"] == 13
    check_position(ip, events, 13)


def test_csv_path_with_column_mapping_and_window(ip, spark, tmp_path):
    path = tmp_path / "msgs.csv"
    rows = [("a1", 1, 2, "2024-01-01 00:10:00"), ("a2", 2, 3, "2024-01-01 00:40:00"),
            ("a3", 3, 1, "2024-01-01 01:20:00"), ("a4", 4, 5, "2024-01-01 02:05:00")]
    pd.DataFrame(rows, columns=["id", "from", "to", "when"]).to_csv(path, index=False)

    before = user_state(ip)
    with capture_output(), pytest.raises(UsageError) as info:
        ip.run_line_magic("dd", f"input msgs --from {path} --src frm --dst to --time when")
    assert "no column 'frm'" in str(info.value) and "Did you mean 'from'?" in str(info.value)
    assert user_state(ip) == before

    dd(ip, f"input msgs --from {path} --src from --dst to --time when --window 1h --step 30min")
    cell(ip, "cc", "connected_components(msgs)")
    assert as_dict(dd(ip, "show msgs").frame) == {(1, 2): 1, (2, 3): 1}    # [00:10, 01:10)
    dd(ip, "step 2")                                                       # [01:10, 02:10)
    assert as_dict(dd(ip, "show msgs").frame) == {(3, 1): 1, (4, 5): 1}
    assert as_dict(dd(ip, "show cc").frame) == {(1, 1): 1, (3, 1): 1, (4, 4): 1, (5, 4): 1}
    end = dd(ip, "step 10")
    assert "stopped after" in end.note and "last window position" in end.note


def test_sql_spark_and_pandas_frames(ip, spark):
    sdf = spark.createDataFrame(pd.DataFrame({"a": [1, 2, 2], "b": [2, 3, 3], "t": [0, 5, 9]}))
    sdf.createOrReplaceTempView("ddlab_kext_events")
    dd(ip, 'input q --sql "SELECT a AS src, b AS dst, t AS time FROM ddlab_kext_events"')
    ip.user_ns["sdf"] = sdf
    dd(ip, "input s --from sdf --columns b,a")
    dd(ip, "input m --from sdf --src a --dst b --time t --multigraph")
    ip.user_ns["pdf"] = pd.DataFrame({"src": [1, 2, 3], "dst": [2, 3, 4], "time": [0, 10, 20]})
    dd(ip, "input w --from pdf --window 10 --step 10")
    dd(ip, "step")
    assert as_dict(dd(ip, "show q").frame) == {(1, 2): 1, (2, 3): 1}
    assert as_dict(dd(ip, "show s").frame) == {(2, 1): 1, (3, 2): 1}
    assert as_dict(dd(ip, "show m").frame) == {(1, 2): 1, (2, 3): 2}
    assert as_dict(dd(ip, "show w").frame) == {(1, 2): 1}
    dd(ip, "step")
    assert as_dict(dd(ip, "show w").frame) == {(2, 3): 1}


def test_spark_errors_are_one_line(ip, spark):
    before = user_state(ip)
    with capture_output(), pytest.raises(UsageError) as info:
        ip.run_line_magic("dd", 'input q --sql "SELECT * FROM no_such_table_here"')
    message = str(info.value)
    assert "\n" not in message and "loading Spark SQL query failed" in message
    assert "no_such_table_here" in message.lower()
    ip.user_ns["sdf"] = spark.createDataFrame(pd.DataFrame({"x": [1], "y": [2]}))
    with capture_output(), pytest.raises(UsageError, match="Did you mean 'y'"):
        ip.run_line_magic("dd", "input s --from sdf --columns x,yy")
    with capture_output(), pytest.raises(UsageError, match="no column 'src'"):
        ip.run_line_magic("dd", "input s --from sdf --window 1d --step 1d")
    before["ns"]["sdf"] = id(ip.user_ns["sdf"])
    assert user_state(ip) == before
