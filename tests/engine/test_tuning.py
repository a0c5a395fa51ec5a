"""Tuning (``engine/tuning.py``): every threshold has a tiny value and is read from one place,
and whole programs give the same results whichever side of the thresholds they take: the
measured values, every threshold at a few rows (``tiny``) and the general paths only
(``general``), all against the oracles."""
from __future__ import annotations

import importlib
import pkgutil
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ddlab
import ddlab.engine
from ddlab import algorithms
from ddlab.engine import tuning
from ddlab.engine.testing import tuned
from graph_oracle import cc_oracle

from .graph_programs import EPOCHS, assert_same_and_correct, edge_epochs, run_graph
from .record_programs import EPOCHS as RECORD_EPOCHS, UNARY, accumulate


def test_every_threshold_has_a_tiny_value_and_a_default():
    assert set(tuning.TINY) == set(tuning.THRESHOLDS)
    assert set(tuning.DEFAULTS) == set(tuning.THRESHOLDS) | {"FAST_PATHS", "KERNELS"}
    assert all(0 < tuning.TINY[n] < tuning.DEFAULTS[n] for n in tuning.THRESHOLDS)


def test_no_engine_module_keeps_its_own_copy_of_a_threshold():
    """Readers look thresholds up on ``tuning`` when they run; a name bound elsewhere would
    not follow :func:`tuned` (and a test setting it would silently test nothing)."""
    names = set(tuning.DEFAULTS)
    copies = []
    for info in pkgutil.walk_packages(ddlab.engine.__path__, "ddlab.engine."):
        module = importlib.import_module(info.name)
        if module is not tuning:
            copies += [f"{info.name}.{n}" for n in names & set(vars(module))]
    assert not copies


def test_tuned_sets_and_restores_every_value_and_names_unknown_ones():
    with tuned("tiny", SMALL_KEYS=7):
        assert tuning.SMALL_KEYS == 7 and tuning.SMALL_QUERY == tuning.TINY["SMALL_QUERY"]
        with tuned("general"):
            assert tuning.FAST_PATHS is False and tuning.SMALL_KEYS == 7
        assert tuning.FAST_PATHS is True
    assert {n: getattr(tuning, n) for n in tuning.DEFAULTS} == tuning.DEFAULTS
    with pytest.raises(KeyError, match="no setting SMALL_ROWS"):
        with tuned(SMALL_ROWS=3):
            pass


@pytest.mark.parametrize("preset", [None, "numpy", pytest.param("tiny", marks=pytest.mark.slow)])
@settings(max_examples=40)
@given(plan=EPOCHS)
def test_graph_programs_agree_with_the_general_paths(preset, plan):
    epochs = list(edge_epochs(plan))
    assert_same_and_correct(run_graph(epochs, preset), run_graph(epochs, "general"))


@pytest.mark.parametrize("preset", [None, "numpy", "tiny"])
@settings(max_examples=40)
@given(epochs=RECORD_EPOCHS)
def test_aggregates_agree_with_the_general_paths(preset, epochs):
    names = ["min", "max", "distinct", "count", "top_k", "union", "self_join"]
    outs = []
    for p in (preset, "general"):
        with tuned(p):
            flow = ddlab.Dataflow()
            records = flow.input("records", columns=["k", "v"])
            views = [UNARY[n][0](records).view() for n in names]
            seen = []
            for epoch in epochs:
                records.update(epoch)
                flow.step()
                seen.append([v.to_dict() for v in views])
            outs.append(seen)
    assert outs[0] == outs[1]
    for got, want in zip(outs[0], accumulate(epochs)):
        assert got == [UNARY[n][1](want) for n in names]


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(5, 40))
def test_larger_graphs_on_large_paths(seed, nodes):
    """Epochs of tens to hundreds of edges (joins and reduces over many keys at once, deltas
    beyond the small paths), with deletions, on both paths and against the oracles."""
    rng = np.random.default_rng(seed)
    present, plan = set(), []
    for _ in range(3):
        adds = {(int(a), int(b)) for a, b in rng.integers(0, nodes, (int(rng.integers(1, 150)), 2))}
        adds -= present
        pool = sorted(present)
        rems = {pool[i] for i in rng.integers(0, len(pool), len(pool) // 3)} if pool else set()
        present = (present | adds) - rems
        plan.append((sorted(adds), sorted(rems), set(present)))

    assert_same_and_correct(run_graph(plan, "tiny"), run_graph(plan, "general"))



def test_a_one_edge_update_takes_the_python_paths(monkeypatch):
    """The equality tests above and the fuzzer only test the Python paths if they run: on a
    one-edge change of a connected-components program most reduce and join runs take them."""
    from ddlab.engine.operators.join import Join
    from ddlab.engine.operators.reduce import Reduce

    taken = Counter()

    def spy_on(cls, kind):
        original = cls._process_small

        def spy(self, *args):
            done = original(self, *args)
            taken[kind, done] += 1
            return done
        monkeypatch.setattr(cls, "_process_small", spy)
    spy_on(Reduce, "reduce")
    spy_on(Join, "join")
    with tuned("numpy"):  # (the compiled kernels would take these runs)
        _one_edge_updates(taken)
    assert taken["reduce", True] > 3 * taken["reduce", False]
    assert taken["join", True] > 3 * taken["join", False]


def _one_edge_updates(taken):
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    view = algorithms.connected_components(edges).view()
    present = {(i, i + 1) for i in range(0, 60, 2)} | {(i, i + 3) for i in range(0, 60, 5)}
    edges.insert(sorted(present))
    flow.step()
    taken.clear()
    for change in [(1, 2), (7, 40), (0, 1)]:
        if change in present:
            edges.remove([change])
            present.discard(change)
        else:
            edges.insert([change])
            present.add(change)
        flow.step()
        assert view.to_dict() == cc_oracle(present)



def test_the_switches_are_kept_for_tests_out_of_the_api():
    """The process-wide switches live in ``engine/testing.py`` only (issue 29, item 11):
    neither ``ddlab`` nor the modules whose settings they change offer them."""
    from ddlab.engine import kernels, testing
    for module in (ddlab, ddlab.engine, tuning, kernels):
        assert not {"tuned", "use_kernels"} & set(vars(module)), module.__name__
        assert not {"tuned", "use_kernels"} & set(getattr(module, "__all__", ())), module.__name__
    assert set(testing.__all__) == {"SWITCH_LOCK", "tuned", "use_kernels"}


def test_two_threads_switching_settings_do_not_undo_each_other():
    """A second thread's switch waits for the first block to end: without the lock, the
    first block's exit restores the default under the second's feet and the second's exit
    then leaves its value set for good."""
    import threading
    default = tuning.SMALL_KEYS
    inside, leave, seen = threading.Event(), threading.Event(), []

    def first():
        with tuned(SMALL_KEYS=default + 5):
            inside.set()
            leave.wait(10)

    def second():
        with tuned(SMALL_KEYS=default + 7):
            seen.append(tuning.SMALL_KEYS)

    a = threading.Thread(target=first)
    a.start()
    assert inside.wait(10)
    b = threading.Thread(target=second)
    b.start()
    b.join(0.3)
    assert b.is_alive() and not seen, "the second switch entered while the first was active"
    leave.set()
    a.join(10)
    b.join(10)
    assert seen == [default + 7]
    assert tuning.SMALL_KEYS == default
