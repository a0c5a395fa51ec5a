"""The rules fuzzer: random rule programs (recursion, mutual recursion, negation, count/sum
over lower strata, min/max inside recursion) compiled with ``ddlab.rules``, fed random update
streams and sliding windows (forward and back), compared after every step with the naive
from-scratch evaluation of :mod:`.gen`; and stepped against batched.  Hypothesis shrinks a
failure to a small program, printed as its text.

``DDLAB_RULES_FUZZ_EXAMPLES`` (default 120) sets the quick profile's size; the long one is
``DDLAB_RULES_FUZZ_LONG=1 python -m pytest -m slow tests/rules/test_fuzz.py``
(``DDLAB_RULES_FUZZ_LONG_EXAMPLES``, default 3,000); ``DDLAB_RULES_FUZZ_LOG=path`` appends one
line per example (its outcome) for counting.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, note, settings

import ddlab
from ddlab import NonConvergenceError

from .gen import Diverges, evaluate, programs, updates, window_contents, windows

QUICK = int(os.environ.get("DDLAB_RULES_FUZZ_EXAMPLES", "120"))
LONG = int(os.environ.get("DDLAB_RULES_FUZZ_LONG_EXAMPLES", "3000"))
ENGINE_BOUND = 200
_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))


def _log(outcome: str) -> None:
    path = os.environ.get("DDLAB_RULES_FUZZ_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(outcome + "\n")


def _compiled(program, sets: bool = False):
    flow = ddlab.Dataflow(max_iterations=ENGINE_BOUND)
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
        return "skipped"
    flow.step()
    for name, view in views.items():
        got = view.to_dict()
        want = {t if len(t) > 1 else t[0]: 1 for t in expected[name]}
        assert got == want, (f"{what}: {name} compiled {sorted(got.items())} != from scratch "
                             f"{sorted(want.items())}")
    return "ok"


def run_windows(program, stream, sets: bool = False) -> str:
    """``sets``: the inputs are sets (``distinct=True``, a simple graph's window: present
    while any of its events is inside), which the compiler reads without a ``distinct``."""
    events, width, starts = stream
    note(program.text())
    flow, inputs, views = _compiled(program, sets)
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


def run_updates(program, epochs) -> str:
    note(program.text())
    flow, inputs, views = _compiled(program)
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


@settings(max_examples=QUICK, **_SETTINGS)
@given(program=programs(), stream=windows())
def test_sliding_windows_agree_with_from_scratch_evaluation(program, stream):
    _log("windows " + run_windows(program, stream))


@settings(max_examples=QUICK, **_SETTINGS)
@given(program=programs(), stream=windows())
def test_set_inputs_agree_with_from_scratch_evaluation(program, stream):
    """Inputs made with ``distinct=True`` skip the compiled input ``distinct``: still right."""
    _log("set windows " + run_windows(program, stream, sets=True))


@settings(max_examples=QUICK, **_SETTINGS)
@given(program=programs(), epochs=updates())
def test_random_updates_agree_with_from_scratch_evaluation(program, epochs):
    _log("updates " + run_updates(program, epochs))


@settings(max_examples=max(QUICK // 2, 1), **_SETTINGS)
@given(program=programs(), epochs=updates())
def test_stepped_and_batched_agree(program, epochs):
    """One update per step and every update in one step end with the same outputs."""
    note(program.text())
    singles = [(r, t, d) for batch in epochs for r, t, d in batch]
    final = {"a": {}, "b": {}}
    for r, t, d in singles:
        final[r][t] = final[r].get(t, 0) + d
    try:
        evaluate(program, {k: _present(v) for k, v in final.items()})
    except Diverges:
        _log("stepped skipped")
        return
    stepped_flow, stepped_inputs, stepped = _compiled(program)
    try:
        for r, t, d in singles:
            stepped_inputs[r].update([(t, d)])
            stepped_flow.step()
    except NonConvergenceError:
        _log("stepped skipped")      # an intermediate state has no fixed point
        return
    batched_flow, batched_inputs, batched = _compiled(program)
    for r, t, d in singles:
        batched_inputs[r].update([(t, d)])
    batched_flow.step()
    for name in stepped:
        assert stepped[name].to_dict() == batched[name].to_dict(), name
    _log("stepped ok")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("DDLAB_RULES_FUZZ_LONG"),
                    reason="the long rules fuzz runs with DDLAB_RULES_FUZZ_LONG=1")
@settings(max_examples=LONG, **_SETTINGS)
@given(program=programs(max_levels=4), stream=windows(), epochs=updates())
def test_long_profile(program, stream, epochs):
    _log("windows " + run_windows(program, stream))
    _log("updates " + run_updates(program, epochs))
