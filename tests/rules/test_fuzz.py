"""The rules fuzzer: random rule programs (recursion, mutual recursion, negation, count/sum
over lower strata, min/max inside recursion) compiled with ``ddlab.rules``, fed random update
streams and sliding windows (forward and back), compared after every step with the naive
from-scratch evaluation of :mod:`.gen`; and stepped against batched.  Hypothesis shrinks a
failure to a small program, printed as its text.

``DDLAB_RULES_FUZZ_EXAMPLES`` (default 120) sets the quick profile's size; the long one is
``DDLAB_RULES_FUZZ_LONG=1 python -m pytest -m slow tests/rules/test_fuzz.py``
(``DDLAB_RULES_FUZZ_LONG_EXAMPLES``, default 3,000); ``DDLAB_RULES_FUZZ_LOG=path`` appends one
line per example (its outcome) for counting.  An example whose from-scratch evaluation finds no
fixed point within its bound is skipped, compared with nothing; each property fails if fewer
than ``MIN_COMPARED`` of its examples were compared (``DDLAB_RULES_FUZZ_MIN_COMPARED``).
"""
from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, note, settings

import ddlab
from ddlab import NonConvergenceError
from compared_share import assert_share_compared

from .gen import Diverges, evaluate, programs, updates, window_contents, windows

QUICK = int(os.environ.get("DDLAB_RULES_FUZZ_EXAMPLES", "120"))
LONG = int(os.environ.get("DDLAB_RULES_FUZZ_LONG_EXAMPLES", "3000"))
ENGINE_BOUND = 200
#: the least share of a property's examples compared with the from-scratch evaluation (the
#: rest skipped: the oracle found no fixed point within its bound).  Measured on this
#: generator (the quick profile, 2026-11-26): 0 of 420 examples skipped; 0.9 as the engine
#: fuzzer's DDLAB_FUZZ_MIN_CHECKED
MIN_COMPARED = float(os.environ.get("DDLAB_RULES_FUZZ_MIN_COMPARED", "0.9"))
SKIPPED = "skipped"
_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))


def _log(outcome: str) -> None:
    path = os.environ.get("DDLAB_RULES_FUZZ_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(outcome + "\n")


def _tally(outcomes: Counter, what: str, outcome: str) -> None:
    outcomes[outcome] += 1
    _log(f"{what} {outcome}")


def assert_enough_compared(outcomes: Counter, what: str) -> None:
    assert_share_compared(outcomes, SKIPPED, MIN_COMPARED, what, "no fixed point within its bound")


def _compiled(program, sets: bool = False, workers: int = 1):
    flow = ddlab.Dataflow(max_iterations=ENGINE_BOUND, workers=workers)
    inputs = {r: flow.input(r, columns=["x", "y"], distinct=sets) for r in ("a", "b")}
    compiled = ddlab.rules(program.text(), inputs)
    views = {name: coll.view() for name, coll in compiled.items()}
    return flow, inputs, views


def _present(multiset: dict) -> set:
    return {t for t, m in multiset.items() if m > 0}


def _check_epoch(flow, views, program, contents, what) -> str:
    """Step ``flow`` and compare every output with the from-scratch evaluation of
    ``contents``; returns ``ok`` or how the oracle gave up."""
    try:
        expected = evaluate(program, {k: _present(v) for k, v in contents.items()})
    except Diverges as div:
        if div.cycle:
            with pytest.raises(NonConvergenceError):
                flow.step()
            return "diverged"
        return SKIPPED
    flow.step()
    for name, view in views.items():
        got = view.to_dict()
        want = {t if len(t) > 1 else t[0]: 1 for t in expected[name]}
        assert got == want, (f"{what}: {name} compiled {sorted(got.items())} != from scratch "
                             f"{sorted(want.items())}")
    return "ok"


def run_windows(program, stream, sets: bool = False, workers: int = 1) -> str:
    """``sets``: the inputs are sets (``distinct=True``, a simple graph's window: present
    while any of its events is inside), which the compiler reads without a ``distinct``."""
    note(program.text())
    flow, inputs, views = _compiled(program, sets, workers)
    try:
        return _slide(flow, inputs, views, program, stream, sets)
    finally:
        flow.close()


def _slide(flow, inputs, views, program, stream, sets: bool) -> str:
    events, width, starts = stream
    held = {"a": {}, "b": {}}
    for step, start in enumerate(starts):
        new = window_contents(events, start, width)
        if sets:
            new = {rel: {t: 1 for t in tuples} for rel, tuples in new.items()}
        for rel in ("a", "b"):
            delta = [(t, new[rel].get(t, 0) - held[rel].get(t, 0))
                     for t in set(new[rel]) | set(held[rel])]
            delta = [(t, d) for t, d in delta if d]
            if delta:
                inputs[rel].update(delta)
        held = new
        outcome = _check_epoch(flow, views, program, held, f"window [{start}, {start + width}) "
                               f"at step {step}")
        if outcome != "ok":
            return outcome
    return "ok"


def run_updates(program, epochs, workers: int = 1) -> str:
    note(program.text())
    flow, inputs, views = _compiled(program, workers=workers)
    try:
        return _update(flow, inputs, views, program, epochs)
    finally:
        flow.close()


def _update(flow, inputs, views, program, epochs) -> str:
    held = {"a": {}, "b": {}}
    for e, batch in enumerate(epochs):
        for rel in ("a", "b"):
            ups = [(t, d) for r, t, d in batch if r == rel]
            if ups:
                inputs[rel].update(ups)
                for t, d in ups:
                    held[rel][t] = held[rel].get(t, 0) + d
        outcome = _check_epoch(flow, views, program, held, f"epoch {e}")
        if outcome != "ok":
            return outcome
    return "ok"


def test_sliding_windows_agree_with_from_scratch_evaluation():
    outcomes = Counter()

    @settings(max_examples=QUICK, **_SETTINGS)
    @given(program=programs(), stream=windows())
    def check(program, stream):
        _tally(outcomes, "windows", run_windows(program, stream))

    check()
    assert_enough_compared(outcomes, "sliding windows")


def test_set_inputs_agree_with_from_scratch_evaluation():
    """Inputs made with ``distinct=True`` skip the compiled input ``distinct``: still right."""
    outcomes = Counter()

    @settings(max_examples=QUICK, **_SETTINGS)
    @given(program=programs(), stream=windows())
    def check(program, stream):
        _tally(outcomes, "set windows", run_windows(program, stream, sets=True))

    check()
    assert_enough_compared(outcomes, "set inputs")


def test_random_updates_agree_with_from_scratch_evaluation():
    outcomes = Counter()

    @settings(max_examples=QUICK, **_SETTINGS)
    @given(program=programs(), epochs=updates())
    def check(program, epochs):
        _tally(outcomes, "updates", run_updates(program, epochs))

    check()
    assert_enough_compared(outcomes, "random updates")


#: examples of the property on workers (each forks its workers, so fewer than the quick profile)
WORKERS_EXAMPLES = int(os.environ.get("DDLAB_RULES_FUZZ_WORKERS_EXAMPLES", "15"))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers need os.fork")
@pytest.mark.parametrize("workers", [2, 3])
def test_windows_and_updates_agree_with_from_scratch_evaluation_on_workers(workers):
    """The same random programs, windows and updates on data-parallel workers (issue 31)."""
    outcomes = Counter()

    @settings(max_examples=WORKERS_EXAMPLES, **_SETTINGS)
    @given(program=programs(), stream=windows(), epochs=updates())
    def check(program, stream, epochs):
        _tally(outcomes, f"windows on {workers} workers", run_windows(program, stream, workers=workers))
        _tally(outcomes, f"updates on {workers} workers", run_updates(program, epochs, workers=workers))

    check()
    assert_enough_compared(outcomes, f"windows and updates on {workers} workers")


def test_a_reader_of_a_min_relation_sees_only_its_final_values():
    """Found by the fuzzer on workers (a CI run, 2026-11-27), then on one worker: p00 shares
    the generator's level with p01 but only reads it, so p00 is a stratum above p01 and reads
    p01's fixed point (0, 0), never the candidate (0, 2) the min replaces; the from-scratch
    evaluation of the whole level at once derived p00(2, 2) from that candidate and kept it
    through its own recursive rule."""
    from .gen import GAtom, GExpr, GProgram, GRule

    program = GProgram(
        arity={"a": 2, "b": 2, "p00": 2, "p01": 2}, levels=[["p00", "p01"]],
        rules=[GRule("p00", ("x", "x"), (GAtom("p01", ("_", "x")),), (GAtom("a", ("x", "x")),)),
               GRule("p00", ("x", "x"), (GAtom("p00", ("x", "_")),), compares=(("!=", "x", 0),)),
               GRule("p01", ("x", ("agg", "min", GExpr("x", 2))), (GAtom("a", (0, "x")),)),
               GRule("p01", ("x", ("agg", "min", GExpr("x"))), (GAtom("p01", ("x", "w")),))],
        aggregate={"p01": (1, "min")})
    assert evaluate(program, {"a": {(0, 0)}, "b": set()}) == {"p00": set(), "p01": {(0, 0)}}
    for workers in (1, 2):
        flow, inputs, views = _compiled(program, workers=workers)
        try:
            assert _update(flow, inputs, views, program, [[("a", (0, 0), 1)]]) == "ok"
        finally:
            flow.close()


def stepped_and_batched(program, epochs) -> str:
    """One update per step and every update in one step end with the same outputs;
    ``skipped`` when the final inputs, or an intermediate step, have no fixed point."""
    note(program.text())
    singles = [(r, t, d) for batch in epochs for r, t, d in batch]
    final = {"a": {}, "b": {}}
    for r, t, d in singles:
        final[r][t] = final[r].get(t, 0) + d
    try:
        evaluate(program, {k: _present(v) for k, v in final.items()})
    except Diverges:
        return SKIPPED
    stepped_flow, stepped_inputs, stepped = _compiled(program)
    try:
        for r, t, d in singles:
            stepped_inputs[r].update([(t, d)])
            stepped_flow.step()
    except NonConvergenceError:
        return SKIPPED      # an intermediate state has no fixed point
    batched_flow, batched_inputs, batched = _compiled(program)
    for r, t, d in singles:
        batched_inputs[r].update([(t, d)])
    batched_flow.step()
    for name in stepped:
        assert stepped[name].to_dict() == batched[name].to_dict(), name
    return "ok"


def test_stepped_and_batched_agree():
    outcomes = Counter()

    @settings(max_examples=max(QUICK // 2, 1), **_SETTINGS)
    @given(program=programs(), epochs=updates())
    def check(program, epochs):
        _tally(outcomes, "stepped", stepped_and_batched(program, epochs))

    check()
    assert_enough_compared(outcomes, "stepped and batched")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("DDLAB_RULES_FUZZ_LONG"),
                    reason="the long rules fuzz runs with DDLAB_RULES_FUZZ_LONG=1")
def test_long_profile():
    outcomes = Counter()

    @settings(max_examples=LONG, **_SETTINGS)
    @given(program=programs(max_levels=4), stream=windows(), epochs=updates())
    def check(program, stream, epochs):
        _tally(outcomes, "windows", run_windows(program, stream))
        _tally(outcomes, "updates", run_updates(program, epochs))

    check()
    assert_enough_compared(outcomes, "long profile")


def test_a_property_comparing_too_few_examples_fails():
    with pytest.raises(AssertionError, match="only 1 of 10 examples were compared"):
        assert_enough_compared(Counter({"ok": 1, SKIPPED: 9}), "a property")
    with pytest.raises(AssertionError):
        assert_enough_compared(Counter(), "a property that ran nothing")
    assert_enough_compared(Counter({"ok": 8, "diverged": 1, SKIPPED: 1}), "a property")
