"""The differential fuzzer: random *programs* (every operator, loops nested at random depths,
prioritized loops) over random update epochs given in random batchings, compared after every
epoch with a from-scratch evaluation.  Hypothesis shrinks a failure to a small program, printed
as the ddlab code that builds it.

The quick profile (``DDLAB_FUZZ_EXAMPLES``, default 300 programs) runs with the suite; the long
one is ``DDLAB_FUZZ_LONG=1 python -m pytest -m slow tests/engine/test_fuzz_programs.py``
(``DDLAB_FUZZ_LONG_EXAMPLES``, default 20,000 programs of up to three nested loops)
(``DDLAB_FUZZ_LOG=path`` appends one line per program for counting).  Each profile fails if
fewer than ``MIN_CHECKED_SHARE`` of its programs were actually checked."""
from __future__ import annotations

import os
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import ddlab
from ddlab import NonConvergenceError
from ddlab.engine.testing import tuned, use_kernels
from compared_share import assert_share_compared

from . import program_gen
from .program_gen import EPOCHS, Diverges, build, count_nodes, evaluate, loop_depth, programs

QUICK = int(os.environ.get("DDLAB_FUZZ_EXAMPLES", "300"))
LONG = int(os.environ.get("DDLAB_FUZZ_LONG_EXAMPLES", "20000"))
#: the from-scratch evaluation's fixed-point bound; the engine gets far more room
ORACLE_BOUND, ENGINE_BOUND = 40, 120
#: CPU seconds one from-scratch evaluation may take before the program counts as slow
#: (skipped); CPU time, so that a loaded machine does not skip more programs.  10, not 5: with
#: the suite in two test processes, the other one's load made CPU seconds dearer (shared
#: caches) and 12 of 100 tiny-threshold programs passed 5 s, below the 90% compared
ORACLE_SECONDS = float(os.environ.get("DDLAB_FUZZ_ORACLE_SECONDS", "10"))


def run_program(program, epochs, log=None, workers: int = 1) -> str:
    """Build ``program``, feed ``epochs``; after each, compare with the from-scratch result.
    Returns how the run ended (``ok``, or ``diverged`` when both sides found no fixed point)."""
    flow = ddlab.Dataflow(max_iterations=ENGINE_BOUND, workers=workers)
    try:
        return _run(flow, program, epochs, log)
    finally:
        flow.close()


def _run(flow, program, epochs, log) -> str:
    inputs = {"a": flow.input("a"), "b": flow.input("b")}
    view = build(program, inputs).view()
    data = {"a": Counter(), "b": Counter()}
    outcome = "ok"
    for e, batches in enumerate(epochs):
        for batch in batches:  # several update calls inside one epoch
            for name in ("a", "b"):
                ups = [(rec, d) for n, rec, d in batch if n == name]
                if ups:
                    inputs[name].update(ups)
                    for rec, d in ups:
                        data[name][rec] += d
        acc = {k: {r: m for r, m in c.items() if m} for k, c in data.items()}
        program_gen.ORACLE_DEADLINE[0] = time.process_time() + ORACLE_SECONDS
        try:
            expected = evaluate(program, acc, bound=ORACLE_BOUND)
        except Diverges as div:
            if div.cycle:
                try:
                    flow.step()
                except NonConvergenceError:
                    outcome = "diverged"
                else:
                    raise AssertionError(f"epoch {e}: the from scratch evaluation cycles but "
                                         f"the engine converged to {view.to_dict()}") from None
            else:
                outcome = "skipped (slow fixed point)"
            break
        finally:
            program_gen.ORACLE_DEADLINE[0] = None
        flow.step()
        got = view.to_dict()
        assert got == expected, f"epoch {e}: engine {got} != from scratch {expected}"
    if log:
        with open(log, "a") as fh:
            fh.write(f"{outcome}\t{count_nodes(program)}\t{loop_depth(program)}\t{program!r}\n")
    return outcome


_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
#: The least share of generated programs whose every epoch was compared with the from-scratch
#: evaluation.  The others' evaluation gave up as too slow (``ORACLE_SECONDS``); on a loaded
#: machine that happens more often, and the run then fails instead of silently checking
#: fewer programs.
MIN_CHECKED_SHARE = float(os.environ.get("DDLAB_FUZZ_MIN_CHECKED", "0.9"))
SKIPPED = "skipped (slow fixed point)"


def fuzz(examples: int, max_loop_depth: int, size: int, log=None) -> Counter:
    """Run ``examples`` random programs (each compared after every epoch); how they ended."""
    outcomes: Counter = Counter()

    @settings(max_examples=examples, **_SETTINGS)
    @given(program=programs(max_loop_depth=max_loop_depth, size=size), epochs=EPOCHS)
    def check(program, epochs):
        outcomes[run_program(program, epochs, log)] += 1

    check()
    return outcomes


def assert_enough_checked(outcomes: Counter) -> None:
    assert_share_compared(outcomes, SKIPPED, MIN_CHECKED_SHARE, "random programs",
                          f"an oracle slower than {ORACLE_SECONDS} s: is the machine overloaded?")


@pytest.mark.slow
def test_random_programs_agree_with_from_scratch_evaluation():
    assert_enough_checked(fuzz(QUICK, 2, 7, os.environ.get("DDLAB_FUZZ_LOG")))


@pytest.mark.slow
def test_random_programs_agree_on_the_numpy_path():
    """The same with the compiled kernels off: the numpy and Python paths, the reference the
    kernels are tested against, stay tested on their own."""
    with use_kernels(False):
        assert_enough_checked(fuzz(max(QUICK // 3, 1), 2, 7))


@pytest.mark.slow
def test_random_programs_agree_when_every_threshold_is_tiny():
    """The same with every tuning threshold at a few rows (``tuned("tiny")``): traces turn
    their recent small inserts into spine batches every three rows (spills, merges and
    compaction inside loops), the large paths run on tiny batches, and the reduce's and
    join's Python paths decline any history of more than three rows, so one operator
    alternates between its Python and numpy paths (state written by one is read by the
    other, as on real data with a few large keys); the compiled reduce and join decline runs
    of more than two keys or changed rows, so they alternate with both."""
    with tuned("tiny"):
        assert_enough_checked(fuzz(max(QUICK // 3, 1), 2, 7))


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("DDLAB_FUZZ_LONG"),
                    reason="the long fuzzing profile runs with DDLAB_FUZZ_LONG=1")
def test_random_programs_long_profile():
    assert_enough_checked(fuzz(LONG, 3, 10, os.environ.get("DDLAB_FUZZ_LOG")))


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["forget_interesting_times", "count_ignores_negatives"])
def test_the_fuzzer_catches_a_wrong_engine(monkeypatch, plant):
    """Planted bugs are found: a reduce that forgets to schedule its future (lub) times, wrong
    only inside loops from the second epoch on (the case the papers exist for), and a count
    that drops negative totals."""
    from ddlab.engine.operators import aggregates
    from ddlab.engine.operators.reduce import Reduce

    if plant == "forget_interesting_times":
        monkeypatch.setattr(Reduce, "_schedule", lambda self, keys, times, t: None)
        monkeypatch.setattr(Reduce, "_schedule_small", lambda self, later, t: None)
    else:
        original = aggregates.Count.evaluate

        def evaluate(self, accs, op):
            cols, kinds, weights = original(self, accs, op)
            keep = cols[-1] > 0
            return [c[keep] for c in cols], kinds, weights[keep]
        monkeypatch.setattr(aggregates.Count, "evaluate", evaluate)
        original_small = aggregates.Count.small

        def small(accs, nkey):
            return {rec: w for rec, w in original_small(accs, nkey).items() if rec[-1] > 0}
        monkeypatch.setattr(aggregates.Count, "small", staticmethod(small))

    # found is enough: no shrinking (minutes of it on these programs, for a planted bug)
    @settings(max_examples=1000, database=None, phases=(Phase.generate,),
              **{**_SETTINGS, "derandomize": True})
    @given(program=programs(max_loop_depth=2, size=7), epochs=EPOCHS)
    def check(program, epochs):
        run_program(program, epochs)

    # a wrong result, or a loop that no longer converges where the definition says it does
    # (the bugs are planted in the numpy and Python paths: the kernels are off;
    # test_kernels.py plants them in the kernel path)
    with pytest.raises((AssertionError, NonConvergenceError, ExceptionGroup)) as info, \
            use_kernels(False):
        check()
    errors = info.value.exceptions if isinstance(info.value, ExceptionGroup) else [info.value]
    assert any("from scratch" in str(e) or isinstance(e, NonConvergenceError) for e in errors)
