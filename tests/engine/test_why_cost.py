"""``flow.why_cost``: the last move's cost per operator and per declaration adds up to what
the step measured (its StepReport, as ``flow.epoch_log()`` shows it), beside the move before."""
from __future__ import annotations

import random

import pytest

import ddlab
from ddlab.algorithms import connected_components, top_label_per_component


def test_why_cost_adds_up_to_the_step_reports_over_window_moves():
    rng = random.Random(2)
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    tags = flow.input("tags", columns=["node", "tag"])
    before = len(flow.operators)
    cc = connected_components(edges, prioritized=False)
    middle = len(flow.operators)
    top = top_label_per_component(cc, tags)
    _ = top.view()
    groups = {op.id: ("cc" if op.id < middle else "top") for op in flow.operators
              if op.id >= before}
    stream = [(rng.randrange(60), rng.randrange(60)) for _ in range(300)]
    held = set()
    for pos in [0, 20, 35, 10, 50, 5]:
        want = set(stream[pos:pos + 80])
        edges.insert(sorted(want - held))
        edges.remove(sorted(held - want))
        tags.insert([(rng.randrange(60), rng.choice("abc"))])
        held = want
        flow.step()
        cost = flow.why_cost(groups=groups)
        assert cost.adds_up()
        log = flow.epoch_log().set_index("epoch")
        e = flow.epoch - 1
        t = cost.totals[e]
        assert t["runs"] == log.loc[e, "operator_runs"]
        assert t["in"] == log.loc[e, "updates_processed"]
        assert t["input_updates"] == log.loc[e, "input_updates"]
        assert abs(t["ms"] - 1000 * log.loc[e, "seconds"]) < 1e-6
        assert cost.by_operator["runs"].sum() == t["runs"]
        assert cost.by_operator["growth"].sum() == t["growth"]
        if e > 0:
            assert t["growth"] == log.loc[e, "retained_updates"] - log.loc[e - 1,
                                                                          "retained_updates"]
            assert cost.previous == e - 1
            earlier = flow.why_cost(epoch=e - 1, groups=groups)
            mine = cost.by_operator.set_index("label")
            theirs = earlier.by_operator.set_index("label")
            for col in ("runs", "in", "out", "growth"):
                assert (mine[f"previous {col}"].sort_index() == theirs[col].reindex(
                    mine.index).fillna(0).sort_index()).all()
        by_decl = cost.by_declaration.set_index("declaration")
        assert set(by_decl.index) >= {"cc", "top"}
        for col in ("runs", "in", "out", "growth"):
            assert by_decl[col].sum() == cost.by_operator[col].sum()
        changes = cost.inputs[e]
        assert sum(len(f) for f in changes.values()) <= t["input_updates"]
        assert "epoch" in cost.summary() and "by declaration" in repr(cost)


def test_why_cost_needs_a_completed_epoch_and_a_kept_one():
    flow = ddlab.Dataflow(stats_epochs=2)
    xs = flow.input("xs")
    _ = xs.distinct().view()
    with pytest.raises(ddlab.DataflowError, match="step"):
        flow.why_cost()
    for i in range(4):
        xs.insert([i])
        flow.step()
    with pytest.raises(ddlab.DataflowError, match="not in the kept statistics"):
        flow.why_cost(epoch=0)
    assert flow.why_cost().adds_up()
