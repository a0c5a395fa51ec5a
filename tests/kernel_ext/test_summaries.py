"""The group-bys behind ``%dd stats`` and ``%dd trace`` against plain recounts of a real flow."""
from __future__ import annotations

import pytest

import ddlab
from ddlab.algorithms import strongly_connected_components
from ddlab.kernel_ext.summaries import change_counts, stats_table, trace_by_time


@pytest.fixture
def raw():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    strongly_connected_components(edges).view()
    edges.insert([(1, 2), (2, 3), (3, 1), (3, 4)])
    flow.step()
    edges.remove([(3, 1)])
    flow.step()
    stats = flow.stats()
    return stats.assign(ms=(stats["seconds"] * 1000).round(3))


def test_per_operator_totals_add_up_and_come_slowest_first(raw):
    table = stats_table(raw, "operator")
    assert table["runs"].sum() == len(raw) and table["in"].sum() == raw["in"].sum()
    assert table["ms"].is_monotonic_decreasing
    one = table.iloc[0]
    rows = raw[raw["operator"] == one["operator"]]
    assert (one["runs"], one["in"], one["out"]) == (len(rows), rows["in"].sum(), rows["out"].sum())


def test_per_iteration_rows_cover_exactly_the_runs_inside_loops(raw):
    table = stats_table(raw, "iteration")
    inside = raw[raw["iteration"].notna()]
    assert table["runs"].sum() == len(inside) and table["out"].sum() == inside["out"].sum()
    assert table["iteration"].dtype.kind == "i" and set(table["epoch"]) == {0, 1}
    assert len(stats_table(raw, "time")) == len(raw)
    with pytest.raises(ValueError, match="by='scope'"):
        stats_table(raw, "scope")


def test_trace_counts_and_change_counts():
    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["x"])
    arranged = xs.arrange()
    view = arranged.view()
    xs.insert([1, 2])
    flow.step()
    xs.remove([1])
    xs.insert([3])
    flow.step()
    by_time = trace_by_time(arranged.history())
    assert by_time["updates"].sum() == len(arranged.history())
    assert by_time["additions"].sum() + by_time["retractions"].sum() == by_time["updates"].sum()
    assert change_counts(view.changes()) == (1, 1)
    assert trace_by_time(arranged.history().iloc[0:0]).empty
