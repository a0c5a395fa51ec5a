"""The magics on pandas data (no Spark): declare, derive, step, inspect; results vs networkx."""
from __future__ import annotations

import random

import numpy as np
import pytest
from IPython.utils.capture import capture_output
import pandas as pd

import ddlab
from ddlab.kernel_ext import get_magics

from .conftest import as_dict, cc_oracle, cell, dd, html_of, scc_oracle


def random_edges(rng: random.Random, n: int, nodes: int = 30) -> list[tuple[int, int]]:
    return list({(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(n)})


def test_pandas_input_cc_and_scc_match_networkx_over_epochs(ip):
    rng = random.Random(5)
    edges = random_edges(rng, 40)
    ip.user_ns["df"] = pd.DataFrame(edges, columns=["src", "dst"]).assign(weight=1.5)
    declared = dd(ip, "input edges --from df")
    assert "40 records queued" in repr(declared)
    assert isinstance(ip.user_ns["edges"], ddlab.InputCollection)

    first = cell(ip, "cc", "connected_components(edges)")
    assert first.first is not None and len(first.first.lines) == 1      # one step ran
    assert first.first.lines[0].changes["edges"] == (40, 0)
    assert as_dict(first.show.frame) == cc_oracle(edges)
    assert isinstance(ip.user_ns["cc"], ddlab.Collection)

    scc = cell(ip, "scc", "strongly_connected_components(edges)")
    assert scc.first is None                # nothing queued: the flow was rebuilt instead
    assert as_dict(dd(ip, "show scc").frame) == scc_oracle(edges)
    assert as_dict(dd(ip, "show cc").frame) == cc_oracle(edges)

    present = set(edges)
    for epoch in range(4):
        added = [e for e in random_edges(rng, 6) if e not in present]
        removed = rng.sample(sorted(present), 4)
        ip.user_ns["gone"] = pd.DataFrame(removed, columns=["src", "dst"])
        r1 = dd(ip, f"insert edges {added!r} --no-step")
        assert r1.lines == [] and "queued" in repr(r1)
        r2 = dd(ip, "remove edges gone")
        present = (present | set(added)) - set(removed)
        line = r2.lines[0]
        assert line.changes["edges"] == (len(added), len(removed))
        assert as_dict(dd(ip, "show cc").frame) == cc_oracle(present)
        assert as_dict(dd(ip, "show scc").frame) == scc_oracle(present)
        changes = dd(ip, "changes cc").frame
        assert line.changes["cc"] == (int((changes["diff"] > 0).sum()),
                                      int((changes["diff"] < 0).sum()))
        text = line.text()
        assert text.count("\n") == 0 and f"epoch {line.epoch}" in text and " ms" in text


def test_step_applies_rows_inserted_from_python(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    ip.run_cell("edges.insert([(1, 2), (2, 3)])")
    assert get_magics(ip).session.pending() == 2
    result = dd(ip, "step")
    assert result.lines[0].changes["edges"] == (2, 0)
    assert as_dict(dd(ip, "show cc").frame) == {(1, 1): 1, (2, 1): 1, (3, 1): 1}
    # an engine step report renders through the formatter; a view built after data flowed
    # would miss it, so the engine refuses it
    ip.run_cell("edges.insert([(7, 8)]); report = edges.flow.step()")
    assert "epoch 1" in html_of(ip.user_ns["report"])
    with capture_output(), pytest.raises(ddlab.DataflowError, match="already sent updates"):
        ip.run_cell("v = cc.view()").raise_error()


def test_bodies_see_python_variables_and_may_have_statements(ip):
    ip.user_ns["df"] = pd.DataFrame({"a": [1, 1, 2, 3], "b": [2, 3, 3, 1], "c": list("wxyz")})
    dd(ip, "input pairs --from df --columns a,b")
    ip.user_ns["minimum"] = 2
    cell(ip, "busy", "deg = pairs.project(0).count()\n"
                     "deg.filter(lambda r: r[1] >= minimum)")
    assert as_dict(dd(ip, "show busy").frame) == {(1, 2): 1}
    cell(ip, "named", "named = pairs.map(lambda r: (r[1], r[0]))")
    assert as_dict(dd(ip, "named").frame) == {(2, 1): 1, (3, 1): 1, (3, 2): 1, (1, 3): 1}
    assert "deg" not in ip.user_ns           # helper names stay inside the cell


def test_column_mapping_and_multigraph_from_pandas(ip):
    ip.user_ns["msgs"] = pd.DataFrame({"Source": [1, 1, 2, 5], "Target": [2, 2, 3, 5],
                                       "when": [0, 1, 2, 3]})
    dd(ip, "input simple --from msgs --src Source --dst Target")
    dd(ip, "input multi --from msgs --src Source --dst Target --multigraph")
    dd(ip, "step")
    assert as_dict(dd(ip, "show simple").frame) == {(1, 2): 1, (2, 3): 1, (5, 5): 1}
    shown = dd(ip, "show multi")
    assert as_dict(shown.frame) == {(1, 2): 2, (2, 3): 1, (5, 5): 1}
    assert list(shown.frame.columns) == ["src", "dst", "multiplicity"]
    assert "total multiplicity 4" in shown._repr_html_()


def test_declaring_after_steps_rebuilds_at_the_same_epoch(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "insert edges [(1, 2), (2, 3)]")
    dd(ip, "insert edges [(3, 1)]")
    old_edges = ip.user_ns["edges"]
    flow_before = get_magics(ip).session.flow
    assert flow_before.epoch == 2
    out = cell(ip, "scc", "strongly_connected_components(edges)")
    session = get_magics(ip).session
    assert session.flow is not flow_before and session.flow.epoch == 2
    assert "brought back to epoch 1" in repr(out)
    assert ip.user_ns["edges"] is not old_edges          # the variable follows the new flow
    assert as_dict(dd(ip, "show scc").frame) == {(1, 2): 1, (2, 3): 1, (3, 1): 1}
    assert "earlier dataflow" in html_of(old_edges)     # a stale reference says so
    nxt = dd(ip, "remove edges [(3, 1)]")
    assert nxt.lines[0].epoch == 2 and nxt.lines[0].changes["scc"] == (0, 3)


def test_rebuild_restart_drop_and_reset(ip):
    ip.user_ns["df"] = pd.DataFrame({"src": [1, 2], "dst": [2, 3]})
    dd(ip, "input edges --from df")
    cell(ip, "cc", "connected_components(edges)")
    dd(ip, "insert edges [(4, 5)]")
    before = as_dict(dd(ip, "show cc").frame)
    status = dd(ip, "rebuild")
    s = get_magics(ip).session
    assert s.flow.epoch == 2 and as_dict(dd(ip, "show cc").frame) == before
    assert "after epoch 1" in repr(status)
    dd(ip, "rebuild --restart")
    assert s.flow.epoch == 0 and s.pending("edges") == 2
    assert as_dict(dd(ip, "show cc").frame) == {}
    dd(ip, "step")
    assert as_dict(dd(ip, "show cc").frame) == {(1, 1): 1, (2, 1): 1, (3, 1): 1}

    dd(ip, "drop cc")
    assert "cc" not in ip.user_ns and s.names == ["edges"]
    ip.user_ns["keep"] = ip.user_ns["edges"]
    dd(ip, "reset")
    assert "edges" not in ip.user_ns and s.names == [] and s.flow.epoch == 0


def test_a_name_rebound_by_the_user_is_not_overwritten(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    ip.user_ns["cc"] = "mine"
    dd(ip, "input more --columns a")             # rebuilds; cc is not pushed over "mine"
    assert ip.user_ns["cc"] == "mine"


def test_show_changes_trace_stats_render_counts(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    dd(ip, "insert edges [(1, 2), (2, 3), (4, 5)]")
    r = dd(ip, "insert edges [(3, 4)]")
    shown = dd(ip, "show cc --sort label,node --limit 2")
    html = shown._repr_html_()
    assert "<b>cc</b>" in html and "5 records" in html and "after epoch 1" in html
    assert "showing 2 of 5 rows" in html
    assert "5 records" in repr(shown)
    assert shown.frame["label"].tolist() == [1] * 5

    changes = dd(ip, "changes cc")
    assert (changes.additions, changes.retractions) == (2, 2) == r.lines[0].changes["cc"]
    html = changes._repr_html_()
    assert "+2" in html and "\u22122" in html
    assert "#e6ffec" in html and "#ffebe9" in html         # green additions, red retractions

    trace = dd(ip, "trace cc")
    assert trace.by_time["updates"].sum() == len(trace.history) == 5
    assert list(trace.lattices) == ["root/cc"]
    grid = trace.lattices["root/cc"]
    assert list(grid.columns) == [0, 1] and grid.index[0] == 0 and grid.values.sum() > 0
    assert "lattice" in trace._repr_html_() and "iter" in trace._repr_html_()

    stats = dd(ip, "stats")
    assert set(stats.frame.columns) >= {"operator", "in", "out", "ms", "runs"}
    assert int(stats.frame["in"].sum()) == int(stats.raw["in"].sum())
    assert "epoch 1" in stats._repr_html_()
    by_it = dd(ip, "stats cc --by iteration --all")
    assert set(by_it.frame["epoch"]) == {0, 1}
    assert by_it.frame["iteration"].min() == 0 and "out (log)" in by_it._repr_html_()
    raw = dd(ip, "stats --by time --epoch 0")
    assert len(raw.frame) == len(get_magics(ip).session.flow.stats(0))


def test_graph_draws_loops_as_nested_boxes_with_edge_counts(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    cell(ip, "scc", "strongly_connected_components(edges)")
    dd(ip, "insert edges [(1, 2), (2, 1), (2, 3)]")
    g = dd(ip, "graph")
    assert g.svg.startswith("<svg") and g.svg.rstrip().endswith("</svg>")
    assert g.svg.count('class="ddlab-loop"') == 4            # cc, scc, scc/reach, scc/reach2
    assert 'data-scope="root/scc/reach"' in g.svg
    assert g.svg.count('class="ddlab-edge"') == len(g.edges)
    total = sum(int(x.split('"')[0]) for x in g.svg.split('data-updates="')[1:])
    assert total == int(g.edges["updates"].sum()) > 0
    ops = g.operators[g.operators["kind"] != "loop"]
    assert g.svg.count('class="ddlab-op"') == len(ops)
    assert "after epoch 0" in g._repr_html_()
    only = dd(ip, "graph cc")
    assert only.svg.count('class="ddlab-loop"') == 1 and len(only.operators) < len(g.operators)
    old = dd(ip, "graph --epoch 0")
    assert old.epoch == 0


def test_name_alone_shows_and_status_lists_declarations(ip):
    ip.user_ns["df"] = pd.DataFrame({"src": [1], "dst": [2]})
    dd(ip, "input edges --from df")
    status = dd(ip, "")
    rows = status.rows()
    assert rows["name"].tolist() == ["edges"] and rows["queued"].tolist() == [1]
    assert "no epoch completed yet" in repr(status)
    assert status.flow is get_magics(ip).session.flow
    assert dd(ip, "edges").name == "edges"
    assert "Dataflow" in html_of(status.flow) and "edges" in html_of(status.flow)


def test_declared_collection_renders_its_contents(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    ip.run_cell("undeclared = edges.map(lambda r: r)")   # built before any data flowed
    assert "not declared" in html_of(ip.user_ns["undeclared"])
    dd(ip, "insert edges [(1, 2)]")
    html = html_of(ip.user_ns["cc"])
    assert "<b>cc</b>" in html and "2 records" in html
    text = ip.display_formatter.format(ip.user_ns["cc"])[0]["text/plain"]
    assert text.startswith("cc: 2 records")


def test_rows_from_lists_and_single_tuples(ip):
    dd(ip, "input pairs --columns a,b")
    dd(ip, "insert pairs (1, 2)")
    dd(ip, "insert pairs [[3, 4], [5, 6]]")
    ip.user_ns["more"] = [(7, 8)]
    dd(ip, "insert pairs more")
    assert as_dict(dd(ip, "show pairs").frame) == {(1, 2): 1, (3, 4): 1, (5, 6): 1, (7, 8): 1}
    dd(ip, "input ones --columns x")
    dd(ip, "insert ones [1, 2, 2]")
    assert as_dict(dd(ip, "show ones").frame) == {(1,): 1, (2,): 2}


def test_step_without_window_is_one_epoch(ip):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "insert edges [(1, 2)] --no-step")
    r = dd(ip, "step 5")
    assert r.epochs == 1 and r.lines[0].changes["edges"] == (1, 0)
    assert np.isclose(sum(l.seconds for l in r.lines), r.lines[0].seconds)


def test_redeclaring_an_input_recomputes_what_depends_on_it(ip):
    ip.user_ns["first"] = pd.DataFrame({"src": [1, 2], "dst": [2, 3]})
    ip.user_ns["second"] = pd.DataFrame({"src": [7], "dst": [8]})
    dd(ip, "input edges --from first")
    cell(ip, "cc", "connected_components(edges)")
    out = dd(ip, "input edges --from second")
    assert "replaced the earlier edges" in repr(out) and "cc recomputed" in repr(out)
    assert as_dict(dd(ip, "show cc").frame) == {}            # the new rows are queued
    dd(ip, "step")
    assert as_dict(dd(ip, "show edges").frame) == {(7, 8): 1}
    assert as_dict(dd(ip, "show cc").frame) == {(7, 7): 1, (8, 7): 1}
