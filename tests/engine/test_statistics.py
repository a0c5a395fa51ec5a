"""The public instrumentation queries (``stats``, ``epoch_log``, ``lattice``,
``loop_differences``, ``loops``, ``upstream``) agree with the raw per-run statistics."""
from __future__ import annotations

import ddlab
from ddlab.algorithms import (connected_components, connected_components_prioritized,
                              strongly_connected_components)


def _scc_flow(epochs=4):
    flow = ddlab.Dataflow(stats_epochs=3)
    edges = flow.input("edges", columns=["src", "dst"])
    scc = strongly_connected_components(edges, prioritized=False)
    scc.view()
    batches = [[(1, 2), (2, 1), (2, 3)], [(3, 1)], [(4, 5), (5, 4)], [(6, 6), (3, 4)]]
    for rows in batches[:epochs]:
        edges.insert(rows)
        flow.step()
    return flow, scc


def test_lattice_sums_the_loop_operators_output_per_epoch_and_iteration():
    flow, _ = _scc_flow()
    stats = flow.stats()
    assert set(stats.epoch) == {1, 2, 3}  # stats_epochs=3 keeps the last three
    for loop in flow.loops():
        grid = flow.lattice(loop)
        depth = loop.count("/")
        inside = stats[(stats.scope == loop) | stats.scope.str.startswith(loop + "/")]
        expected = {}
        for t, out in zip(inside.time, inside.out):
            key = (t[0], t[depth] if not isinstance(t[depth], tuple) else t[depth][1])
            expected[key] = expected.get(key, 0) + out
        got = {(e, i): u for e, i, u in grid.itertuples(index=False)}
        assert got == expected
        by_op = flow.lattice(loop, epochs=[3], by_operator=True)
        assert by_op.groupby(["epoch", "iteration"]).updates.sum().to_dict() == {
            k: v for k, v in expected.items() if k[0] == 3}
        cells = flow.statistics.lattice_cells(loop, [3], by_operator=True)
        assert sorted(k + (v,) for k, v in cells.items()) == [
            tuple(r) for r in by_op.itertuples(index=False)]


def test_loop_differences_are_the_feedback_outputs_in_time_order():
    flow, _ = _scc_flow()
    stats = flow.stats(epoch=3)
    for loop in flow.loops():
        fb = stats[(stats.kind == "feedback") & (stats.scope == loop)]
        depth = loop.count("/")
        per = {}
        for t, out in zip(fb.time, fb.out):
            per[t[depth]] = per.get(t[depth], 0) + out
        curve = flow.loop_differences(3, loop, with_empty=False)
        assert curve.records.tolist() == [per[k] for k in sorted(per)]
        assert curve.iteration.tolist() == list(range(len(per)))


def test_prioritized_lattice_uses_the_iteration_part():
    flow = ddlab.Dataflow()
    edges = flow.input("edges")
    connected_components_prioritized(edges).view()
    edges.insert([(1, 2), (2, 3), (9, 10)])
    flow.step()
    grid = flow.lattice("root/cc-prioritized")
    assert grid.iteration.max() < 100 and grid.updates.sum() > 0


def test_epoch_log_matches_step_reports_and_is_bounded():
    flow = ddlab.Dataflow(stats_epochs=2)
    edges = flow.input("edges")
    connected_components(edges).view()
    reports = []
    for rows in ([(1, 2)], [(2, 3)], [(4, 5)]):
        edges.insert(rows)
        reports.append(flow.step())
    log = flow.epoch_log()
    assert log.epoch.tolist() == [1, 2]
    assert log.retained_updates.tolist() == [r.retained_updates for r in reports[1:]]
    assert log.input_updates.tolist() == [1, 1]
    assert flow.epoch_log(last=1).epoch.tolist() == [2]


def test_a_rolled_back_epoch_leaves_no_statistics():
    flow = ddlab.Dataflow()
    nums = flow.input("nums")
    nums.map(lambda x: 1 // x).view()
    nums.insert([1])
    flow.step()
    before = (flow.stats().to_dict(), flow.epoch_log().to_dict())
    nums.insert([0])
    try:
        flow.step()
    except ddlab.OperatorError:
        pass
    assert (flow.stats().to_dict(), flow.epoch_log().to_dict()) == before


def test_upstream_and_loops():
    flow, scc = _scc_flow(1)
    up = flow.upstream(scc)
    ops, edges = flow.graph()
    assert scc.id in up and ops.id.isin(up).sum() == len(up)
    assert flow.inputs["edges"].id in up
    assert flow.loops()[0] == "root/scc" and all(p.startswith("root/scc/") for p in flow.loops()[1:])


def test_stats_frame_has_one_row_per_operator_run():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    connected_components(edges).view()
    edges.insert([(1, 2), (2, 3)])
    report = flow.step()
    stats = flow.stats()
    assert list(stats.columns) == ["operator", "kind", "scope", "time", "epoch", "iteration",
                                   "in", "out", "seconds"]
    assert len(stats) == report.operator_runs
    loop_rows = stats[stats.scope == "root/cc"]
    assert set(loop_rows.iteration) >= {0, 1, 2}
    assert (loop_rows.time.map(len) == 2).all()
    assert stats["in"].sum() == report.updates_processed
    mins = loop_rows[loop_rows.kind == "reduce"]
    assert mins["out"].sum() > 0
    edges.insert([(3, 4)])
    flow.step()
    assert set(flow.stats(epoch=1).epoch) == {1}



def test_prioritized_stats_show_priority_and_iteration():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    ddlab.algorithms.connected_components_prioritized(edges, log_buckets=False).view()
    edges.insert([(1, 2), (5, 6)])
    flow.step()
    times = flow.stats().query("scope == 'root/cc-prioritized'").time
    assert {t[1][0] for t in times} >= {1, 5}  # (priority, iteration) pairs



def test_statistics_keep_a_bounded_number_of_epochs():
    flow = ddlab.Dataflow(stats_epochs=5)
    x = flow.input("x")
    x.count().view()
    for i in range(23):
        x.insert([(i % 3, i)])
        flow.step()
    epochs = set(flow.stats().epoch)
    assert {18, 19, 20, 21, 22} <= epochs and len(epochs) <= 10 and 0 not in epochs
    assert set(flow.stats(epoch=22).epoch) == {22}

