"""``%dd show``, ``changes``, ``trace``, ``stats``, ``graph`` and the display of declared collections."""
from __future__ import annotations

from ddlab.kernel_ext import get_magics

from ..conftest import cell, dd, html_of


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


def test_progress_shows_the_trackers_view(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    dd(ip, "insert edges [(1, 2), (2, 3)]")
    p = dd(ip, "progress")
    # between steps only the input holds a pointstamp: its open epoch, 1
    held = {lab: h for lab, h in zip(p.frame["label"], p.frame["holds"]) if h}
    assert held == {"edges#0": {(1,): 1}}
    assert "1 pointstamps held" in repr(p) and "1 worker" in repr(p)
    html = p._repr_html_()
    assert "(1,)×1" in html and "after epoch 0" in html
    # every other operator waits for epoch 1 (padded with iteration 0 inside the loop)
    for lab, frontier, scope in zip(p.frame["label"], p.frame["frontier"], p.frame["scope"]):
        if lab != "edges#0":
            assert frontier == [(1,) + (0,) * scope.count("/")], (lab, frontier)
    only = dd(ip, "progress cc")
    assert "edges#0" in set(only.frame["label"]) and "upstream of cc" in repr(only)
    assert set(only.frame["label"]) < set(p.frame["label"])  # not cc's views


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
