"""``%dd why``, ``why-loop``, ``why-cost``: the magics over the session's flow, with the
declared names in derivations and costs; checked against networkx and the flow's own
statistics."""
from __future__ import annotations

import networkx as nx
import pytest
from IPython.core.error import UsageError

from ddlab.kernel_ext import get_magics

from ..conftest import cell, dd, html_of, user_state


def _cc_session(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    cell(ip, "sizes", "cc.project(1).count()")
    dd(ip, "insert edges [(1, 2), (2, 3), (3, 4), (4, 5), (2, 6), (8, 9)]")


def test_why_explains_a_node_by_its_key_with_a_shortest_path_and_declared_names(ip):
    _cc_session(ip)
    r = dd(ip, "why cc 5")
    ex = r.explanation
    assert ex.present and ex.record == (5, 1) and ex.verified and ex.method == "concise"
    used = [tuple(map(int, e)) for e in r.inputs["edges"][["src", "dst"]].values]
    g = nx.Graph([(1, 2), (2, 3), (3, 4), (4, 5), (2, 6), (8, 9)])
    assert len(used) == nx.shortest_path_length(g, 1, 5) == 4
    html = html_of(r)
    assert "<b>cc</b>" in html and "derivation" in html and "min#" in html
    assert "cc</b> min#" in html and "edges</b> edges#0" in html   # declared names
    assert "iteration" in html and "(5, 1)" in repr(r)
    # the whole record works too, and so do separate fields
    assert dd(ip, "why cc (5, 1)").explanation.record == (5, 1)
    assert dd(ip, "why cc 5 1").explanation.record == (5, 1)


def test_why_of_a_count_takes_the_whole_group(ip):
    _cc_session(ip)
    r = dd(ip, "why sizes 1")
    assert r.explanation.record == (1, 6)
    used = {tuple(map(int, e)) for e in r.inputs["edges"][["src", "dst"]].values}
    assert used == {(1, 2), (2, 3), (3, 4), (4, 5), (2, 6)}   # every node of the component
    assert "whole group" in html_of(r)


def test_why_of_a_record_that_left_names_the_change_that_removed_it(ip):
    _cc_session(ip)
    dd(ip, "remove edges [(3, 4)]")
    r = dd(ip, "why cc 5 1")
    ex = r.explanation
    assert not ex.present and ex.previous is not None and ex.previous.present
    assert ex.removed_by["edges"].to_dict("list") == {"src": [3], "dst": [4], "diff": [-1]}
    html = html_of(r)
    assert "left on the last move" in html and "removed by these changes" in html
    # by key only: node 5 now has label 4, and that is what is explained
    assert dd(ip, "why cc 5").explanation.record == (5, 4)


def test_why_errors_are_one_line_and_change_nothing(ip):
    _cc_session(ip)
    before = user_state(ip)
    with pytest.raises(UsageError, match="no record of cc starts with 77"):
        dd(ip, "why cc 77")
    with pytest.raises(UsageError, match="no collection 'nope'"):
        dd(ip, "why nope 1")
    assert user_state(ip) == before
    absent = dd(ip, "why cc 4 99")
    assert not absent.explanation.present and "is not in" in html_of(absent)


def test_why_loop_agrees_with_loop_differences_and_names_changing_keys(ip):
    _cc_session(ip)
    dd(ip, "insert edges [(0, 9)]")
    r = dd(ip, "why-loop cc")
    flow = get_magics(ip).session.flow
    (activity,) = r.activities
    assert activity.loop == "root/cc"
    stats = flow.loop_differences(flow.epoch - 1, "root/cc")
    assert activity.iterations["records"].tolist() == stats["records"].tolist()
    assert set(activity.top_keys["key"]) <= {0, 8, 9}
    html = html_of(r)
    assert "records in difference" in html and "keys that kept changing longest" in html
    assert dd(ip, "why-loop --loop root/cc").activities[0].loop == "root/cc"
    with pytest.raises(UsageError, match="no loop 'root/x'"):
        dd(ip, "why-loop --loop root/x")
    with pytest.raises(UsageError, match="no loop is upstream of edges"):
        dd(ip, "why-loop edges")


def test_why_cost_groups_by_declaration_and_adds_up(ip):
    _cc_session(ip)
    dd(ip, "insert edges [(5, 6)]")
    r = dd(ip, "why-cost")
    cost = r.cost
    assert cost.adds_up()
    decls = set(cost.by_declaration["declaration"])
    assert {"cc", "sizes", "edges"} <= decls
    log = get_magics(ip).session.flow.epoch_log().iloc[-1]
    assert cost.totals[cost.epoch]["in"] == log["updates_processed"]
    html = html_of(r)
    assert "by declaration" in html and "add up" in html and "input changes of" in html
    with pytest.raises(UsageError, match="not kept"):
        dd(ip, "why-cost --epoch 99")


def test_why_needs_a_step_first(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    for line in ("why cc 1", "why-loop", "why-cost"):
        with pytest.raises(UsageError, match="step"):
            dd(ip, line)
