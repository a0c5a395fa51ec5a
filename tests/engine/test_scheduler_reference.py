"""The scheduler against a deliberately simple reference scheduler kept here (issue 32,
"Correctness").

The engine's scheduler (``engine/runtime/scope.py``) sweeps a scope's operators until none can run;
each operator takes, in one run, every queued time its input frontier has passed, and linear
operators run fused into their only reader.  The reference is the discipline the engine had
before it: within a scope, one ``(time, operator)`` pair at a time, the smallest time first in
lexicographic order and operators in topological order within a time; a nested loop runs to
quiescence for one outer time before its scope moves on; no fusion, no frontiers, no
progress tracking.  It finds pending work from the operators' own state (queued input, a
reduce's scheduled interesting times), never from the tracker, and drives the same operators
through :meth:`Operator.run_at`.

Random programs (``program_gen``: every operator, loops nested and prioritized, joins, reduces
of every kind) are fed random epochs, each epoch's updates given in random ``insert`` /
``remove`` / ``update`` calls in a random order (independently drawn for each scheduler), and
must give, after every epoch, the same views, the same subscriber updates with their times
and the same traces (every arrangement's, every reduce's output, inputs' and views' contents,
read as consolidated ``(record, time, diff)`` rows after compaction) under both schedulers,
and views equal to the from-scratch evaluation.  Under both, every operator runs a time only
once it is complete (no input or interesting time arrives later at or before it:
:func:`completeness_watch`) and nothing is left pending after a step.  Planted scheduler bugs
are caught (``test_planted_scheduler_bugs_are_caught``), most of them only by that watch:
a differential reduce that ran a time too early evaluates it again when the rest of its
input comes, so its outputs and traces end up right.
"""
from __future__ import annotations

import os
import random
import time
from collections import Counter
from contextlib import contextmanager, nullcontext

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import ddlab
from ddlab import DataflowError, NonConvergenceError
from ddlab.engine.runtime import wiring
from ddlab.engine.columns import decode_rows
from ddlab.engine.testing import use_kernels
from ddlab.engine.lattice import leq
from ddlab.engine.operators.base import Operator
from ddlab.engine.operators.io import Input
from ddlab.engine.operators.loops import ScopeNode
from ddlab.engine.operators.reduce import Reduce
from ddlab.engine.runtime.progress import FEEDBACK, FORWARD, ScopeTracker, reachability
from ddlab.engine.runtime.scope import Scope
from ddlab.engine.testing import tuned

from . import program_gen
from .program_gen import RECORD, Diverges, Node, build, evaluate, loop_depth, programs

#: the from-scratch evaluation's fixed-point bound; the engine gets far more room
ORACLE_BOUND, ENGINE_BOUND = 40, 120
#: CPU seconds one from-scratch evaluation may take (a few random joins grow slow fixed
#: points); the program's later epochs are then not run
ORACLE_SECONDS = 3.0
#: programs of the fast test, and per configuration of the slow one
FAST_EXAMPLES = int(os.environ.get("DDLAB_SCHEDULER_EXAMPLES", "30"))
SLOW_EXAMPLES = int(os.environ.get("DDLAB_SCHEDULER_SLOW_EXAMPLES", "60"))


# -- the reference scheduler -------------------------------------------------------------------
def pending_times(scope: Scope, op) -> set:
    """The times (of ``scope``) at which ``op`` has work: input queued, a reduce's scheduled
    interesting times, or, for a nested loop's node, the outer times of its inner work."""
    if isinstance(op, ScopeNode):
        inner = op.inner
        return {t[:scope.depth] for o in inner.ops for t in pending_times(inner, o)}
    return set(op.queued) | set(getattr(op, "obligations", ()))


def run_to_quiescence(scope: Scope, prefix: tuple) -> None:
    """Process ``scope``'s pending ``(time, operator)`` pairs whose time starts with
    ``prefix`` one at a time, the smallest ``(time, topological index)`` first, until none is
    left; a loop's node runs its inner scope to quiescence for that one outer time."""
    n = len(prefix)
    while True:
        best = None
        for op in scope.ops:
            for t in pending_times(scope, op):
                if t[:n] == prefix and (best is None or (t, op.index) < best):
                    best = (t, op.index)
        if best is None:
            return
        t, i = best
        op = scope.ops[i]
        if isinstance(op, ScopeNode):
            run_to_quiescence(op.inner, t)
        else:
            op.run_at(t)


def _reference_run(scope: Scope) -> bool:
    assert scope.parent is None, "the reference runs nested scopes itself"
    run_to_quiescence(scope, ())
    return True


def _no_step(op) -> bool:
    raise AssertionError(f"{op.label}.step() called under the reference scheduler")


@contextmanager
def reference_scheduler():
    """Build and step flows inside this block under the reference: ``Scope.run`` is the
    reference's, every operator's ``step`` refuses to be called, nothing is fused."""
    patched = [(Scope, "run", _reference_run), (Operator, "step", _no_step),
               (Input, "step", _no_step), (ScopeNode, "step", _no_step),
               (wiring, "_fuse", lambda ops, workers: None)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patched]
    try:
        for owner, name, value in patched:
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


# -- what every scheduler must do: run a time only once it is complete ------------------------
@contextmanager
def completeness_watch():
    """Inside this block, an operator that gets input (or, a reduce, schedules an interesting
    time) at a time ``<=`` one it has already run in the same step raises: it ran that time
    before it was complete (the frontier passed a time that was still held)."""
    done: dict = {}  # id(op) -> (step serial, the times it ran)

    def ran(op) -> list:
        serial, times = done.get(id(op), (None, None))
        if serial != op.flow.step_serial:
            times = []
            done[id(op)] = (op.flow.step_serial, times)
        return times

    def check(op, t, what):
        late = [u for u in ran(op) if leq(t, u)]
        assert not late, (f"{op.label} {what} at {t} after it ran {late[0]}: it ran a time "
                          f"before that time was complete")

    original = {"accept": Operator.accept, "run_at": Operator.run_at, "hold": Reduce.hold,
                "run_times": Operator.run_times}

    def accept(op, port, t, batch):
        check(op, t, "got input")
        original["accept"](op, port, t, batch)

    def run_at(op, t):
        original["run_at"](op, t)
        ran(op).append(t)

    def run_times(op, ts):
        original["run_times"](op, ts)
        ran(op).extend(ts)

    def hold(op, u, codes):
        check(op, u, "scheduled an interesting time")
        original["hold"](op, u, codes)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Operator, "accept", accept)
        mp.setattr(Operator, "run_at", run_at)
        mp.setattr(Operator, "run_times", run_times)
        mp.setattr(Reduce, "hold", hold)
        yield


# -- feeding an epoch: random calls in a random order ------------------------------------------
def feed_plan(rnd, updates) -> list:
    """The calls ``(input, method, rows)`` giving ``updates`` (``(input, record, diff)``):
    split into unit updates, shuffled, cut into runs, each run one ``update`` call or an
    ``insert`` and a ``remove`` call per input, in random order."""
    units = [(name, rec, 1 if d > 0 else -1) for name, rec, d in updates for _ in range(abs(d))]
    rnd.shuffle(units)
    calls = []
    while units:
        cut = rnd.randint(1, len(units))
        run, units = units[:cut], units[cut:]
        names = sorted({u[0] for u in run})
        rnd.shuffle(names)
        for name in names:
            mine = [(rec, d) for n, rec, d in run if n == name]
            if rnd.random() < 0.5:
                calls.append((name, "update", mine))
                continue
            parts = [("insert", [r for r, d in mine if d > 0]),
                     ("remove", [r for r, d in mine if d < 0])]
            rnd.shuffle(parts)
            calls.extend((name, method, rows) for method, rows in parts if rows)
    return calls


UPDATE = st.tuples(st.sampled_from(["a", "b"]), RECORD, st.sampled_from([1, 1, 1, -1, 2]))
#: each epoch's updates (the order and split in which they are given is drawn per scheduler)
EPOCH_UPDATES = st.lists(st.lists(UPDATE, max_size=8), min_size=1, max_size=4)


# -- the from-scratch side ---------------------------------------------------------------------
DIVERGES = "diverges"


def expected_views(program: Node, epochs) -> list:
    """Per epoch, the from-scratch result on the accumulated inputs, or ``DIVERGES`` (no fixed
    point: the engine must refuse the epoch); the list stops before an epoch whose
    evaluation took too long."""
    data = {"a": Counter(), "b": Counter()}
    out = []
    for updates in epochs:
        for name, rec, d in updates:
            data[name][rec] += d
        acc = {k: {r: m for r, m in c.items() if m} for k, c in data.items()}
        program_gen.ORACLE_DEADLINE[0] = time.process_time() + ORACLE_SECONDS
        try:
            out.append(evaluate(program, acc, bound=ORACLE_BOUND))
        except Diverges as div:
            if div.cycle:
                out.append(DIVERGES)
            return out
        finally:
            program_gen.ORACLE_DEADLINE[0] = None
    return out


# -- the engine side ---------------------------------------------------------------------------
def trace_contents(flow) -> dict:
    """Every trace of every operator, as compaction to the last completed epoch leaves it:
    ``{(operator label, trace index): sorted [(record, time, diff)]}``."""
    out = {}
    for op in flow.operators:
        for k, trace in enumerate(op.traces()):
            rows = []
            if trace.kinds is not None:
                r = trace.compacted_rows()
                if len(r):
                    records = decode_rows(r.cols, trace.kinds, flow.interner)
                    rows = sorted(zip(records, map(tuple, r.times.tolist()), r.diffs.tolist()))
            out[(op.label, k)] = rows
    return out


def assert_quiescent(flow, who: str) -> None:
    """After a step nothing is pending: no queued input, no scheduled interesting time, and
    every scope's tracker holds only the inputs' capabilities of the next epoch."""
    for op in flow.operators:
        assert not op.queued, f"{who}: {op.label} still has input queued at {sorted(op.queued)}"
        assert not getattr(op, "obligations", None), \
            f"{who}: {op.label} still has interesting times {sorted(op.obligations)}"
    scopes = [flow.root]
    while scopes:
        scope = scopes.pop()
        scopes.extend(scope.children)
        for i, counts in enumerate(scope.tracker.counts):
            if counts:
                op = scope.ops[i]
                assert isinstance(op, Input) and counts == {(flow.epoch,): 1}, \
                    f"{who}: {scope.path} still counts pointstamps {counts} at {op.label}"


def _built(program: Node):
    """``(flow, inputs, view, subscriber's calls)`` of ``program`` over inputs ``a``, ``b``."""
    flow = ddlab.Dataflow(max_iterations=ENGINE_BOUND)
    inputs = {"a": flow.input("a"), "b": flow.input("b")}
    out = build(program, inputs)
    view = out.view()
    received: list = []
    out.subscribe(received.append)
    return flow, inputs, view, received


def run(program: Node, epochs, expected, rnd, reference: bool) -> list:
    """Build ``program`` and feed it ``epochs`` (each in calls drawn from ``rnd``) under one
    scheduler; per epoch, ``(view, subscriber updates, traces)`` or ``DIVERGES``."""
    who = "reference" if reference else "scheduler"
    with reference_scheduler() if reference else nullcontext(), completeness_watch():
        flow, inputs, view, received = _built(program)
        results = []
        for e, want in enumerate(expected):
            for name, method, rows in feed_plan(rnd, epochs[e]):
                getattr(inputs[name], method)(rows)
            if want is DIVERGES:
                try:
                    flow.step()
                except NonConvergenceError:
                    results.append(DIVERGES)
                    break
                raise AssertionError(f"{who}, epoch {e}: the from-scratch evaluation cycles but "
                                     f"the engine converged to {view.to_dict()}")
            flow.step()
            assert_quiescent(flow, who)
            got = view.to_dict()
            assert got == want, f"{who}, epoch {e}: view {got} != from scratch {want}"
            updates = sorted(received[-1])
            assert all(t == (e,) for _, t, _ in updates), f"{who}, epoch {e}: {updates}"
            results.append((got, updates, trace_contents(flow)))
        return results


def assert_same(reference: list, scheduler: list) -> None:
    """The scheduler's outputs and traces equal the reference's, epoch by epoch."""
    assert len(reference) == len(scheduler)
    for e, (ref, got) in enumerate(zip(reference, scheduler)):
        if ref is DIVERGES or got is DIVERGES:
            assert ref == got, f"epoch {e}: reference {ref!r}, scheduler {got!r}"
            continue
        assert got[0] == ref[0], f"epoch {e}: views differ from the reference's"
        assert got[1] == ref[1], f"epoch {e}: subscriber updates differ from the reference's"
        differ = [k for k in ref[2] if ref[2][k] != got[2].get(k)]
        assert not differ and ref[2].keys() == got[2].keys(), (
            f"epoch {e}: traces differ from the reference's: "
            + "; ".join(f"{k[0]}: reference {ref[2][k]} scheduler {got[2].get(k)}"
                        for k in differ[:3]))


def check_program(program: Node, epochs, rnd_reference, rnd_scheduler) -> bool:
    """Run both schedulers on ``program``; whether any epoch was checked."""
    expected = expected_views(program, epochs)
    if not expected:
        return False
    reference = run(program, epochs, expected, rnd_reference, reference=True)
    scheduler = run(program, epochs, expected, rnd_scheduler, reference=False)
    assert_same(reference, scheduler)
    return True


# -- epochs in flight: several epochs closed by advance() and run by one step -------------------
def run_in_flight(program: Node, epochs, expected, rnd, cuts) -> dict:
    """Feed ``epochs`` in groups of the sizes ``cuts``: ``advance()`` between the epochs of
    a group, one ``step()`` at its end.  ``{epoch: result}`` for each epoch a group ended at
    (``(view, [subscriber updates of each epoch of the group], traces)``), or ``DIVERGES``
    for a group that must not converge (then the view must read as before the group)."""
    with completeness_watch():
        flow, inputs, view, received = _built(program)
        results, start = {}, 0
        for size in cuts:
            group = list(range(start, min(start + size, len(expected))))
            if not group:
                break
            start = group[-1] + 1
            before = view.to_dict()
            for k in group:
                for name, method, rows in feed_plan(rnd, epochs[k]):
                    getattr(inputs[name], method)(rows)
                if k != group[-1]:
                    assert flow.advance() == k + 1
            if any(expected[k] is DIVERGES for k in group):
                with pytest.raises(NonConvergenceError):
                    flow.step()
                assert view.to_dict() == before and flow.epoch == group[0], \
                    f"epochs {group}: a rolled-back group changed the view or the epoch"
                assert not flow.in_flight and not any(i.pending_count for i in inputs.values())
                results[group[-1]] = DIVERGES
                break
            n_calls = len(received)
            report = flow.step()
            assert report.epoch == group[-1] and flow.epoch == group[-1] + 1
            assert_quiescent(flow, "in flight")
            calls = received[n_calls:]
            assert len(calls) == len(group), f"epochs {group}: {len(calls)} subscriber calls"
            for k, call in zip(group, calls):
                assert all(t == (k,) for _, t, _ in call), f"epoch {k}: {call}"
            assert list(flow.epoch_log()["epoch"])[-len(group):] == group
            results[group[-1]] = (view.to_dict(), [sorted(c) for c in calls], trace_contents(flow))
        return results


def check_in_flight(program: Node, epochs, rnd_reference, rnd_scheduler, cuts) -> bool:
    """The reference one epoch a step, the scheduler with epochs in flight: equal views,
    subscriber updates and traces wherever a group of epochs ends."""
    expected = expected_views(program, epochs)
    if not expected:
        return False
    reference = run(program, epochs, expected, rnd_reference, reference=True)
    grouped = run_in_flight(program, epochs, expected, rnd_scheduler, cuts)
    start = 0
    for end, got in sorted(grouped.items()):
        group = range(start, end + 1)
        start = end + 1
        if got is DIVERGES:
            assert DIVERGES in reference[group[0]:end + 1], f"epochs {list(group)} diverged"
            continue
        ref = reference[end]
        assert got[0] == ref[0], f"epoch {end}: view differs from one epoch a step"
        assert got[1] == [reference[k][1] for k in group], \
            f"epochs {list(group)}: subscriber updates differ from one epoch a step"
        assert got[2] == ref[2], f"epoch {end}: traces differ from one epoch a step"
    return True


# -- the programs ------------------------------------------------------------------------------
def _n(op, *args, param=None) -> Node:
    return Node(op, tuple(args), param)


A, B, V1, V2 = _n("input", param="a"), _n("input", param="b"), _n("var", param=1), \
    _n("var", param=2)
#: a prioritized loop inside an iterate: reachability along ``b`` by priority classes, inside
#: a loop that takes the minimum per key of it and the outer variable
NESTED_PRIORITIZED = _n("iterate", A, _n("min", _n("concat", V1, _n(
    "prioritize", _n("concat", V1, A),
    _n("distinct", _n("concat", V2, _n("join_step", V2, B))), param=2))), param=1)
#: a loop whose body joins, counts and tops its variable: several reduces and a join per
#: iteration, their interesting times in later epochs
LOOP_OF_REDUCES = _n("iterate", B, _n("top_k", _n("concat", _n("count", _n("join", V1, A)),
                                                   _n("map", V1, param="bump")), param=1),
                     param=1)
#: updates in three epochs, removals and re-insertions among them
EXAMPLE_EPOCHS = [[("a", (0, 1), 1), ("b", (1, 2), 1), ("b", (2, 0), 1), ("a", (2, 2), 2)],
                  [("b", (1, 2), -1), ("a", (1, 3), 1), ("b", (3, 1), 1)],
                  [("b", (1, 2), 1), ("a", (0, 1), -1), ("b", (2, 3), 2)]]

#: random programs, half of them with a loop at least
PROGRAMS = st.one_of(programs(max_loop_depth=2, size=7),
                     programs(max_loop_depth=2, size=7).filter(lambda p: loop_depth(p) > 0))

_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))


def _comparison(examples: int, coverage: Counter | None = None, **extra):
    """The hypothesis test comparing both schedulers on ``examples`` random programs;
    ``coverage`` counts what the checked programs contained."""

    @settings(max_examples=examples, **{**_SETTINGS, **extra})
    @given(program=PROGRAMS, epochs=EPOCH_UPDATES,
           rnd_reference=st.randoms(use_true_random=False),
           rnd_scheduler=st.randoms(use_true_random=False))
    @example(program=NESTED_PRIORITIZED, epochs=EXAMPLE_EPOCHS,
             rnd_reference=random.Random(1), rnd_scheduler=random.Random(2))
    @example(program=LOOP_OF_REDUCES, epochs=EXAMPLE_EPOCHS,
             rnd_reference=random.Random(3), rnd_scheduler=random.Random(4))
    def compare(program, epochs, rnd_reference, rnd_scheduler):
        if check_program(program, epochs, rnd_reference, rnd_scheduler) and coverage is not None:
            coverage["programs"] += 1
            coverage.update(_features(program))

    return compare


def _features(program: Node) -> set:
    found = set()

    def walk(node):
        if node.op in ("iterate", "prioritize"):
            found.add(node.op)
        if node.op in ("join", "join_fn", "join_step"):
            found.add("join")
        if node.op in program_gen.BOUNDED or node.op in ("sum", "union", "except_"):
            found.add("reduce")
        for child in node.args:
            walk(child)
    walk(program)
    if loop_depth(program) >= 2:
        found.add("nested loops")
    return found


# -- the tests ---------------------------------------------------------------------------------
def test_the_reference_visits_one_time_and_operator_at_a_time_in_order():
    """The reference itself, on the nested prioritized example: the from-scratch result at
    every epoch, and within each scope and outer time the ``(time, operator)`` pairs visited
    in increasing order, each once."""
    expected = expected_views(NESTED_PRIORITIZED, EXAMPLE_EPOCHS)
    assert len(expected) == 3 and DIVERGES not in expected
    visits = []
    original = Operator.run_at

    def run_at(op, t):
        visits.append((op.scope.path, t, op.index))
        original(op, t)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Operator, "run_at", run_at)
        results = run(NESTED_PRIORITIZED, EXAMPLE_EPOCHS, expected, random.Random(0),
                      reference=True)
    assert [r[0] for r in results] == expected
    last: dict = {}
    for path, t, index in visits:
        key = (path, t[:-1])
        assert (t, index) > last.get(key, ()), f"{path}: {(t, index)} after {last[key]}"
        last[key] = (t, index)
    assert {len(t) for _, t, _ in visits} == {1, 2, 3}


def test_the_scheduler_matches_the_reference():
    """Random programs (thirty, and the two examples above) under both schedulers."""
    _comparison(FAST_EXAMPLES)()


#: group sizes of the epochs run together (advance() between them; the first group of two
#: at least), and the epochs (three at least, so that some group holds several)
CUTS = st.lists(st.integers(1, 4), min_size=4, max_size=4).map(lambda c: [max(c[0], 2)] + c[1:])
IN_FLIGHT_EPOCHS = st.lists(st.lists(UPDATE, max_size=8), min_size=3, max_size=6)


def _in_flight(examples: int, coverage: Counter | None = None, **extra):
    """The hypothesis test of epochs in flight against one epoch a step on ``examples``
    random programs; ``coverage`` counts the runs that took several times (by kind)."""

    @settings(max_examples=examples, **{**_SETTINGS, **extra})
    @given(program=PROGRAMS, epochs=IN_FLIGHT_EPOCHS, cuts=CUTS,
           rnd_reference=st.randoms(use_true_random=False),
           rnd_scheduler=st.randoms(use_true_random=False))
    @example(program=NESTED_PRIORITIZED, epochs=EXAMPLE_EPOCHS, cuts=[3, 1, 1, 1],
             rnd_reference=random.Random(1), rnd_scheduler=random.Random(2))
    @example(program=LOOP_OF_REDUCES, epochs=EXAMPLE_EPOCHS, cuts=[2, 1, 1, 1],
             rnd_reference=random.Random(3), rnd_scheduler=random.Random(4))
    def compare(program, epochs, cuts, rnd_reference, rnd_scheduler):
        with _counting_batches(coverage):
            check_in_flight(program, epochs, rnd_reference, rnd_scheduler, cuts)

    return compare


@contextmanager
def _counting_batches(coverage: Counter | None):
    """Count, in ``coverage``, the runs that took several times and those times."""
    if coverage is None:
        yield
        return
    original = Operator.run_times

    def run_times(op, ts):
        coverage["runs of several times"] += 1
        coverage[f"{op.kind} runs of several times"] += 1
        coverage["times in them"] += len(ts)
        original(op, ts)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Operator, "run_times", run_times)
        yield


def test_epochs_in_flight_match_one_epoch_a_step():
    """Epochs closed by ``advance()`` and run by one step (their times complete together, a
    reduce evaluating its keys at all of them in one run, reading each key's history once, a
    join matching all their deltas at once, each row at its own time) give, epoch by epoch,
    what one epoch a step under the reference gives; a group with a diverging epoch rolls
    back whole."""
    coverage: Counter = Counter()
    _in_flight(FAST_EXAMPLES, coverage)()
    assert coverage["reduce runs of several times"] >= 10, coverage
    assert coverage["join runs of several times"] >= 10, coverage


CONFIGURATIONS = [("default", True), ("default", False), ("tiny", True), ("tiny", False),
                  ("general", False)]


@pytest.mark.slow
@pytest.mark.parametrize("preset, kernels", CONFIGURATIONS,
                         ids=[f"{p}-{'kernels' if k else 'numpy'}" for p, k in CONFIGURATIONS])
def test_the_scheduler_matches_the_reference_under_each_preset(preset, kernels):
    """Under every tuning preset with the compiled kernels on and off (``general`` turns
    every specialised path off, the kernels with them)."""
    coverage: Counter = Counter()
    with tuned(preset), use_kernels(kernels):
        _comparison(SLOW_EXAMPLES, coverage)()
    # the random programs did exercise what the comparison is about
    assert coverage["programs"] >= SLOW_EXAMPLES // 2, coverage
    for feature in ("iterate", "prioritize", "nested loops", "join", "reduce"):
        assert coverage[feature] > 0, f"no checked program had {feature}: {coverage}"


@pytest.mark.slow
@pytest.mark.parametrize("preset, kernels", CONFIGURATIONS,
                         ids=[f"{p}-{'kernels' if k else 'numpy'}" for p, k in CONFIGURATIONS])
def test_epochs_in_flight_match_one_epoch_a_step_under_each_preset(preset, kernels):
    """Epochs in flight under every tuning preset with the kernels on and off (``general``
    takes one time a run: the reduce's batch is a fast path)."""
    coverage: Counter = Counter()
    with tuned(preset), use_kernels(kernels):
        _in_flight(SLOW_EXAMPLES, coverage)()
    assert coverage["runs of several times"] >= 10, coverage


# -- planted scheduler bugs --------------------------------------------------------------------
class _NoOuterAnswers(dict):
    """An ``outer`` cache that answers "not blocked" for every outer time."""

    def get(self, key, default=None):
        return False


def _plant(mp, plant: str) -> None:
    if plant == "never_blocked":
        mp.setattr(ScopeTracker, "blocked", lambda self, j, t: False)
    elif plant in ("no_feedback_sources", "no_forward_sources"):
        drop = FEEDBACK if plant == "no_feedback_sources" else FORWARD
        original = reachability.Reachability.__init__

        def init(self, n, forward, feedback):
            original(self, n, forward, feedback)
            self.sources = [{i: k for i, k in s.items() if k != drop} for s in self.sources]
        mp.setattr(reachability.Reachability, "__init__", init)
    elif plant == "loops_ignore_the_outer_frontier":
        mp.setattr(ScopeTracker, "new_sweep",
                   lambda self: setattr(self, "outer", _NoOuterAnswers()))
    elif plant == "outer_answers_never_refreshed":
        mp.setattr(ScopeTracker, "new_sweep", lambda self: None)
    elif plant == "ready_time_ignores_enclosing_sweeps":
        # a loop's least time taken as complete whatever its enclosing sweeps are at
        mp.setattr(ScopeTracker, "_ready_time", lambda self: self.sweep_least)
    elif plant == "loops_invisible_to_their_parent":
        mp.setattr(ScopeTracker, "outer_times", lambda self: iter(()))
        mp.setattr(ScopeTracker, "holds_outer_before", lambda self, target: False)
    else:  # pragma: no cover
        raise AssertionError(plant)


PLANTS = ["never_blocked", "no_feedback_sources", "no_forward_sources",
          "loops_ignore_the_outer_frontier", "outer_answers_never_refreshed",
          "loops_invisible_to_their_parent", "ready_time_ignores_enclosing_sweeps"]


@pytest.mark.slow
@pytest.mark.parametrize("plant", PLANTS)
def test_planted_scheduler_bugs_are_caught(plant):
    """Each plant breaks the engine's scheduler only (the reference never asks the tracker):
    an operator that never waits for its frontier, one that does not wait for the loop's
    feedback or for upstream operators at the same time, a loop that ignores its enclosing
    scope's frontier, a loop that keeps its enclosing scope's answers across sweeps, a loop
    whose pointstamps its parent never sees, a loop that runs its sweep's least time
    without its enclosing sweeps being at that time's prefix.  Each is found, as an
    operator given input at a time it already ran (:func:`completeness_watch`), work left
    pending (which the step itself refuses to commit: "stalled"), non-convergence or a
    result different from the reference's or the from-scratch one.

    Most of them change no view and no trace: a differential reduce that ran a time too
    early evaluates it again when the rest of its input comes (the new input's lubs include
    that time), so outputs alone do not show a frontier passed too soon; the watch does.
    Epochs in flight are fed too: with several epochs' times pending at once, far more of the
    scheduler's answers come from the frontier rather than from the sweep's least time."""
    extra = dict(database=None, phases=(Phase.explicit, Phase.generate), derandomize=True)
    with pytest.MonkeyPatch.context() as mp:
        _plant(mp, plant)
        for compare in (_comparison(300, **extra), _in_flight(300, **extra)):
            try:
                compare()
            except (AssertionError, NonConvergenceError, ExceptionGroup):
                return
            except DataflowError as err:  # the step's own check: work left after the run
                if "stalled" in str(err):
                    return
                raise
    raise AssertionError(f"{plant} was not caught")
