"""Data-parallel workers (``Dataflow(workers=N)``): the same outputs as one worker and as the
from-scratch evaluation, at 2 and 3 workers; errors, rollbacks and checkpoints as with one.

Each flow here is closed when the test ends (``close``), so no worker process outlives it."""
from __future__ import annotations

import os
from collections import Counter

import networkx as nx
import numpy as np
import pytest

import ddlab
from ddlab import NonConvergenceError
from ddlab.algorithms import connected_components, strongly_connected_components
from ddlab.engine.budget import BudgetExceeded
from ddlab.engine.errors import DataflowError, OperatorError

from .reliability_helpers import apply, build_program, epochs, reading

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers need os.fork")


@pytest.fixture
def flows():
    """Flows made by a test, closed after it."""
    made = []
    yield made
    for flow in made:
        flow.close()


def _run_reliability_program(workers, batches, flows):
    flow = ddlab.Dataflow(max_iterations=200, workers=workers)
    flows.append(flow)
    flow, inputs, views, seen = build_program(flow)
    out = []
    for batch in batches:
        apply(inputs, batch)
        flow.step()
        out.append({k: v.to_dict() for k, v in views.items()})
    return out, seen


@pytest.mark.parametrize("workers", [2, 3])
def test_every_operator_kind_gives_one_workers_outputs(workers, flows):
    """CC, prioritized CC, SCC (loops nested two deep), a join, counts, a user reduce, a
    threshold, top-k, a subscriber: every epoch's views equal the one-worker run's."""
    batches = epochs(6, seed=5)
    one, seen_one = _run_reliability_program(1, batches, flows)
    many, seen_many = _run_reliability_program(workers, batches, flows)
    assert many == one
    assert seen_many == seen_one


def _graph_views(flow):
    edges = flow.input("edges", columns=["src", "dst"])
    return edges, {"cc": connected_components(edges).view(),
                   "plain": connected_components(edges, prioritized=False).view(),
                   "scc": strongly_connected_components(edges).view()}


def _oracle(present):
    g = nx.Graph(list(present))
    cc = {(n, min(c)): 1 for c in nx.connected_components(g) for n in c}
    d = nx.DiGraph(list(present))
    comp = {n: i for i, c in enumerate(nx.strongly_connected_components(d)) for n in c}
    scc = {(a, b): 1 for a, b in present if comp[a] == comp[b]}  # the edges inside one
    return cc, scc


@pytest.mark.parametrize("workers", [2, 3])
def test_graph_algorithms_match_networkx_through_inserts_and_removals(workers, flows):
    rng = np.random.default_rng(workers)
    flow = ddlab.Dataflow(workers=workers)
    flows.append(flow)
    edges, views = _graph_views(flow)
    present = set()
    for epoch in range(6):
        new = {tuple(map(int, e)) for e in rng.integers(0, 120, size=(80, 2))} - present
        gone = set(list(present)[: len(present) // 5])
        edges.insert(sorted(new))
        edges.remove(sorted(gone))
        present = (present | new) - gone
        flow.step()
        cc, scc = _oracle(present)
        assert views["cc"].to_dict() == cc, epoch
        assert views["plain"].to_dict() == cc, epoch
        assert views["scc"].to_dict() == scc, epoch


@pytest.mark.parametrize("workers", [2, 3])
def test_an_error_on_another_worker_reaches_the_user_and_rolls_back_every_worker(workers, flows):
    """A user function raising on the last worker (the owner of the bad key) raises here as
    itself, the epoch is rolled back on every worker, and the flow goes on as if it never ran."""
    from ddlab.engine.workers.partition import owners

    last = workers - 1
    bad_key = next(k for k in range(100) if owners([np.array([k])], 1, workers)[0] == last)
    flow = ddlab.Dataflow(workers=workers)
    flows.append(flow)
    xs = flow.input("xs", columns=["k", "v"])
    counts = xs.count().view()
    bad = xs.reduce(lambda k, vs: [(1 // (k - bad_key), 1)] if k == bad_key
                    else [(len(vs), 1)])
    checked = bad.view()
    xs.insert([(k, 0) for k in range(40) if k != bad_key])
    flow.step()
    before = (counts.to_dict(), checked.to_dict(), flow.epoch)
    a, b = [k for k in range(40, 60) if k != bad_key][:2]
    xs.insert([(bad_key, 0), (a, 5)])
    with pytest.raises(OperatorError, match="ZeroDivisionError") as caught:
        flow.step()  # (as with one worker: the user's error, wrapped with where it happened)
    assert any(f"worker {last}" in note for note in getattr(caught.value, "__notes__", []))
    assert (counts.to_dict(), checked.to_dict(), flow.epoch) == before
    xs.insert([(a, 5), (b, 1)])
    flow.step()
    reference = ddlab.Dataflow()
    ys = reference.input("ys", columns=["k", "v"])
    want = ys.count().view()
    ys.insert([(k, 0) for k in range(40) if k != bad_key] + [(a, 5), (b, 1)])
    reference.step()
    assert counts.to_dict() == want.to_dict()


@pytest.mark.parametrize("workers", [2, 3])
def test_non_convergence_and_budgets_raise_as_with_one_worker(workers, flows):
    flow = ddlab.Dataflow(workers=workers, max_iterations=30)
    flows.append(flow)
    xs = flow.input("xs")
    xs.iterate(lambda x: x.map(lambda v: v + 1).concat(x).distinct()).view()
    xs.insert(list(range(10)))
    with pytest.raises(NonConvergenceError) as caught:
        flow.step()
    assert caught.value.loop == "root/iterate"
    assert flow.epoch == 0

    flow = ddlab.Dataflow(workers=workers, max_rows_per_epoch=50)
    flows.append(flow)
    xs = flow.input("xs", columns=["k"])
    ys = flow.input("ys", columns=["k"])
    pairs = xs.map(lambda r: (0, r)).join(ys.map(lambda r: (0, r))).view()
    xs.insert([(i,) for i in range(30)])
    ys.insert([(i,) for i in range(30)])
    with pytest.raises(BudgetExceeded):
        flow.step()
    assert pairs.to_dict() == {} and flow.epoch == 0


def test_a_checkpoint_saved_with_three_workers_loads_with_one(tmp_path, flows):
    batches = epochs(4, seed=3)
    flow = ddlab.Dataflow(max_iterations=200, workers=3)
    flows.append(flow)
    flow, inputs, views, _ = build_program(flow)
    for batch in batches:
        apply(inputs, batch)
        flow.step()
    flow.save(tmp_path / "ck")
    restored = ddlab.Dataflow.load(tmp_path / "ck", lambda f: build_program(f))
    r_flow, r_inputs, r_views, _ = restored.built
    assert reading(r_flow, r_inputs, r_views)["views"] == reading(flow, inputs, views)["views"]


def test_stats_and_progress_show_every_worker(flows):
    flow = ddlab.Dataflow(workers=2)
    flows.append(flow)
    edges, views = _graph_views(flow)
    edges.insert([(i, i + 1) for i in range(60)])
    flow.step()
    stats = flow.stats()
    assert set(stats["worker"]) == {0, 1}
    assert flow.epoch_log()["operator_runs"].iloc[-1] == len(stats)
    view = flow.progress()
    assert set(view["worker"]) == {0, 1}
    # between steps each worker's view holds the inputs' open epoch only, the same in both
    holds = view[view["holds"].map(bool)]
    assert set(holds["label"]) == {"edges#0"}
    assert all(h == {(1,): 2} for h in holds["holds"])


def test_the_graph_names_each_exchange_and_counts_every_worker(flows):
    """``graph()``'s edges with workers: which edges move records between workers, and what
    each worker's replica of the source sent, equal to the stats' runs summed by pandas."""
    from ddlab.engine.operators.arrange import Arrange
    from ddlab.engine.operators.io import Input, _EpochSink

    flow = ddlab.Dataflow(workers=2)
    flows.append(flow)
    edges, _ = _graph_views(flow)
    edges.insert([(i, i + 1) for i in range(60)] + [(i, i + 100) for i in range(0, 60, 7)])
    flow.step()
    ops, es = flow.graph()
    assert list(es.columns) == ["source", "target", "updates", "exchange", "by_worker"]
    op = {o.id: o for o in flow.operators}
    for s, t, x in es[["source", "target", "exchange"]].itertuples(index=False):
        want = ("gather" if isinstance(op[t], _EpochSink) or op[t].kind == "choose"
                else "by key" if isinstance(op[t], Arrange)
                else "spread" if isinstance(op[s], Input) else "")
        assert x == want, (op[s].label, op[t].label)
    assert {"gather", "by key", "spread"} <= set(es["exchange"])
    stats = flow.stats()
    emitted = stats.groupby(["operator", "worker"])["out"].sum()
    label = dict(zip(ops["id"], ops["label"]))
    for s, n, per in es[["source", "updates", "by_worker"]].itertuples(index=False):
        assert sum(per) == n
        assert per == [int(emitted.get((label[s], w), 0)) for w in (0, 1)]
    assert any(per[1] > 0 for per in es["by_worker"])   # worker 1 did some of the work


@pytest.mark.parametrize("workers", [2, 3])
def test_a_min_waits_for_every_other_workers_join_at_its_time(workers, flows):
    """The protocol's safety in a real run: the loop's ``min`` on one worker takes iteration
    ``i`` only after every run at ``i`` of the other workers' ``join`` (whose output may
    still come to it) has ended; read from the runs' start times (``stats()["start_ms"]``,
    one clock for all processes)."""
    flow = ddlab.Dataflow(workers=workers)
    flows.append(flow)
    edges = flow.input("edges", columns=["src", "dst"])
    labels = connected_components(edges, prioritized=False).view()
    path = [(i, i + 1) for i in range(120)]
    edges.insert(path)
    flow.step()
    edges.remove([(60, 61)])
    flow.step()
    assert labels.to_dict() == {(n, 0 if n <= 60 else 61): 1 for n in range(121)}
    runs = flow.stats(1)
    loop = runs[runs["scope"] == "root/cc"]
    joins = loop[loop["kind"] == "join"].assign(end=lambda f: f["start_ms"] + f["seconds"] * 1000)
    mins = loop[loop["kind"] == "reduce"]
    assert set(mins["worker"]) == set(range(workers))
    checked = 0
    for (w, t), m in mins.groupby(["worker", "time"]):
        others = joins[(joins["time"] == t) & (joins["worker"] != w)]
        if len(others):
            assert m["start_ms"].min() >= others["end"].max() - 0.002, (w, t)
            checked += 1
    assert checked >= 50


def test_workers_are_chosen_by_argument_or_environment(monkeypatch, flows):
    monkeypatch.setenv("DDLAB_WORKERS", "3")
    assert ddlab.Dataflow().workers == 3
    assert ddlab.Dataflow(workers=1).workers == 1
    monkeypatch.setenv("DDLAB_WORKERS", "many")
    with pytest.raises(DataflowError, match="DDLAB_WORKERS='many'"):
        ddlab.Dataflow()
    monkeypatch.delenv("DDLAB_WORKERS")
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(DataflowError, match="workers="):
            ddlab.Dataflow(workers=bad)


def test_building_after_the_workers_started_is_refused_and_changes_nothing(flows):
    flow = ddlab.Dataflow(workers=2)
    flows.append(flow)
    xs = flow.input("xs")
    counts = xs.count().view()
    xs.insert([1, 2, 2])
    flow.step()
    n_ops = len(flow.operators)
    with pytest.raises(DataflowError, match="runs on 2 workers"):
        flow.input("ys").view()
    with pytest.raises(DataflowError, match="runs on 2 workers"):
        flow.loop("late")
    assert len(flow.operators) == n_ops and flow.loops() == []
    xs.insert([3])
    flow.step()
    assert counts.to_dict() == {(1, 1): 1, (2, 2): 1, (3, 1): 1}


def test_text_values_and_new_text_made_by_a_user_function(flows):
    flow = ddlab.Dataflow(workers=2)
    flows.append(flow)
    words = flow.input("words", columns=["word"])
    counts = words.count().view()
    words.insert([("apple",), ("pear",), ("apple",)])
    flow.step()
    words.insert([("fig",)])  # a value first seen after the workers started
    flow.step()
    assert counts.to_dict() == {("apple", 2): 1, ("pear", 1): 1, ("fig", 1): 1}

    flow = ddlab.Dataflow(workers=2)
    flows.append(flow)
    xs = flow.input("xs", columns=["k"])
    shouted = xs.map(lambda r: (f"k{r}!",)).count().view()
    xs.insert([(i,) for i in range(20)])
    with pytest.raises(DataflowError, match="new text value"):
        flow.step()
    assert shouted.to_dict() == {} and flow.epoch == 0


@pytest.mark.parametrize("workers", [2, 3])
def test_an_interrupt_in_a_user_function_rolls_back_every_worker(workers, flows):
    flow = ddlab.Dataflow(workers=workers)
    flows.append(flow)
    xs = flow.input("xs", columns=["k"])

    def stop_at_seven(r):
        if r[0] == 7:  # (a count's record: (key, count))
            raise KeyboardInterrupt
        return r

    out = xs.count().map(stop_at_seven).view()
    xs.insert([(i,) for i in range(5)])
    flow.step()
    before = out.to_dict()
    xs.insert([(i,) for i in range(5, 12)])
    with pytest.raises(KeyboardInterrupt):
        flow.step()
    assert out.to_dict() == before and flow.epoch == 1
    xs.insert([(i,) for i in range(5, 7)])
    flow.step()
    assert out.to_dict() == {(i, 1): 1 for i in range(7)}


def test_a_closed_flow_keeps_its_views_and_refuses_to_step(flows):
    flow = ddlab.Dataflow(workers=2)
    xs = flow.input("xs")
    v = xs.distinct().view()
    xs.insert([1, 2])
    flow.step()
    flow.close()
    assert v.to_dict() == {1: 1, 2: 1}
    xs.insert([3])
    with pytest.raises(DataflowError, match="closed"):
        flow.step()


def _fuzz_with_workers(workers: int, examples: int, seed: int | None) -> Counter:
    """``examples`` random programs on ``workers``: drawn from ``seed`` (a failure names it,
    so it can be drawn again), or, with ``None``, the same fixed programs every run."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded

    from .program_gen import EPOCHS, programs
    from .test_fuzz_programs import run_program

    outcomes: Counter = Counter()

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=seed is None, database=None)
    @given(program=programs(max_loop_depth=2, size=6), epochs=EPOCHS)
    def check(program, epochs):
        outcomes[run_program(program, epochs, workers=workers)] += 1

    if seed is not None:
        check = seeded(seed)(check)
    try:
        check()
    except BaseException as err:
        if seed is not None and hasattr(err, "add_note"):
            err.add_note(f"ddlab: the workers' fuzz drew these programs from seed {seed}: "
                         f"DDLAB_WORKERS_FUZZ_SEED={seed} draws them again")
        raise
    return outcomes


def _fresh_seed() -> int:
    """``DDLAB_WORKERS_FUZZ_SEED``, else a new seed each run (printed: pytest shows it with
    ``-s`` or with a failure, whose message names it too)."""
    text = os.environ.get("DDLAB_WORKERS_FUZZ_SEED", "").strip()
    seed = int(text) if text else int.from_bytes(os.urandom(4), "big")
    print(f"workers' fuzz seed: {seed} (DDLAB_WORKERS_FUZZ_SEED={seed} to draw it again)")
    return seed


@pytest.mark.slow
@pytest.mark.parametrize("workers,examples", [(2, 60), (3, 30)])
def test_random_programs_agree_with_from_scratch_evaluation_on_workers(workers, examples):
    """The engine fuzzer's random programs (every operator, nested and prioritized loops,
    random batchings), each epoch compared with the from-scratch evaluation, on workers: the
    same programs every run (derandomized).  A program that diverges on both sides was
    compared too (the engine must raise where the evaluation cycles); only an oracle too slow
    to answer leaves one unchecked."""
    from .test_fuzz_programs import assert_enough_checked

    assert_enough_checked(_fuzz_with_workers(workers, examples, None))


@pytest.mark.slow
@pytest.mark.parametrize("workers,examples", [(2, 30), (3, 15)])
def test_new_random_programs_agree_with_from_scratch_evaluation_on_workers(workers, examples):
    """The same with programs drawn afresh every run from a new seed, named in a failure's
    message.  Every program compared must agree (``run_program`` raises otherwise); a fresh
    draw holds more programs whose from-scratch evaluation is left unchecked (a fixed point
    too slow to find: 4 of 30 in one run, where the fixed draw's bar is 90% compared), so
    three in four compared is asked here."""
    from compared_share import assert_share_compared

    from .test_fuzz_programs import SKIPPED

    assert_share_compared(_fuzz_with_workers(workers, examples, _fresh_seed()), SKIPPED, 0.75,
                          "new random programs on workers", "an oracle too slow to answer")


def _explanations(workers, flows):
    """Explanations of CC and SCC records, a loop's activity and a rules proof, after a
    load and a removal, on ``workers``."""
    rng = np.random.default_rng(5)
    pairs = [tuple(map(int, p)) for p in rng.integers(0, 50, size=(90, 2))]
    flow = ddlab.Dataflow(workers=workers)
    flows.append(flow)
    edges = flow.input("edges", columns=["src", "dst"])
    cc, scc = connected_components(edges), strongly_connected_components(edges)
    cc_view, scc_view = cc.view(), scc.view()
    reach = ddlab.rules(".input edges\nreach(x, y) :- edges(x, y).\n"
                        "reach(x, z) :- reach(x, y), edges(y, z).\n"
                        "hubs(x, count(y)) :- edges(x, y).\n.output reach\n.output hubs",
                        {"edges": edges}, flow=flow)
    reach_view, hubs_view = reach["reach"].view(), reach["hubs"].view()
    edges.insert(pairs)
    flow.step()
    edges.remove(pairs[:6])
    flow.step()
    out = []
    for view, coll in ((cc_view, cc), (scc_view, scc)):
        for record in sorted(view.to_dict())[::15][:3]:
            why = flow.why(coll, record)
            assert why.verified
            out.append((record, sorted(map(tuple, why.inputs["edges"][["src", "dst"]].values.tolist()))))
    out += [(a.loop, a.iterations["records"].tolist(), a.top_keys["key"].tolist())
            for a in flow.why_loop()]
    for relation, view in (("reach", reach_view), ("hubs", hubs_view)):
        for fact in sorted(view.to_dict())[::37][:3]:
            out.append((relation, fact, str(reach.why(relation, fact))))
    return out


@pytest.mark.parametrize("workers", [2, 3])
def test_explanations_read_every_workers_shard(workers, flows):
    """``why``, ``why_loop`` and a rules proof on workers read each worker's shard of the
    traces they need (issue 31's lineage across workers): the same explanations as one
    worker's, each verified by its replay."""
    one = _explanations(1, flows)
    assert len(one) >= 12 and all(item[1] for item in one)
    assert _explanations(workers, flows) == one


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_a_size_choice_sees_the_whole_first_load(workers, flows):
    """Connected components choose their algorithm by the first load's size: every worker
    count makes the choice one worker makes (on the whole load, not a worker's share)."""
    from ddlab.engine import algorithms, tuning

    rng = np.random.default_rng(1)
    load = sorted({tuple(map(int, e)) for e in rng.integers(0, 400, size=(900, 2))})
    choices = []
    for n in (1, workers):
        flow = ddlab.Dataflow(workers=n)
        flows.append(flow)
        edges = flow.input("edges", columns=["src", "dst"])
        threshold = tuning.CC_PRIORITIZED_FROM_EDGES
        tuning.CC_PRIORITIZED_FROM_EDGES = len(load) - 10
        try:
            cc = algorithms.connected_components(edges)
        finally:
            tuning.CC_PRIORITIZED_FROM_EDGES = threshold
        view = cc.view()
        edges.insert(load)
        flow.step()
        choices.append((algorithms.explain_choice(cc), view.to_dict()))
    assert choices[1] == choices[0]
    assert choices[0][0].startswith(f"prioritized label propagation: first load {len(load):,}")
