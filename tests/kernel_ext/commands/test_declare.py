"""``%dd input`` and ``%%dd NAME`` on pandas data (no Spark): results vs networkx over epochs,
rebuilds at the same epoch, the user's own names."""
from __future__ import annotations

import random

import pandas as pd

import ddlab
from ddlab.kernel_ext import get_magics

from ..conftest import as_dict, cc_oracle, cell, dd, html_of, scc_oracle


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
    for _ in range(4):
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



def test_a_name_rebound_by_the_user_is_not_overwritten(ip):
    dd(ip, "input edges --columns src,dst")
    cell(ip, "cc", "connected_components(edges)")
    ip.user_ns["cc"] = "mine"
    dd(ip, "input more --columns a")             # rebuilds; cc is not pushed over "mine"
    assert ip.user_ns["cc"] == "mine"



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
