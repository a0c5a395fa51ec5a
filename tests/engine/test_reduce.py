"""Reduce and its logics (``operators/reduce.py``, ``operators/aggregates.py``): every grouped
operator against the from-scratch oracle after every epoch at every loop depth; the Python
and numpy paths sharing one reduce; a reduce reading an outer arrangement inside a loop; a
threshold function's errors."""
from __future__ import annotations

import pytest
from hypothesis import given

import ddlab
from ddlab import OperatorError
from ddlab.engine.testing import tuned

from . import oracle
from .graph_programs import churn_cc_and_scc
from .record_programs import EPOCHS, accumulate, check_operator


#: the operators of ``operators/reduce.py`` and ``aggregates.py``, each against its oracle (``record_programs.UNARY``)
NAMES = ["distinct", "count", "sum", "min", "max", "top_k", "bottom_k", "threshold", "reduce",
         "union", "intersect", "except", "cogroup"]


@pytest.mark.parametrize("depth", [0, 1, 2], ids=["top", "loop", "nested"])
@pytest.mark.parametrize("name", sorted(NAMES))
@given(epochs=EPOCHS)
def test_operator_matches_oracle(name, depth, epochs):
    check_operator(name, depth, epochs)


@pytest.mark.parametrize("parity", [0, 1])
def test_python_and_numpy_paths_share_a_reduce(monkeypatch, parity):
    """The reduce's Python path runs at some times and the numpy path at others (here: by
    the parity of the time; on real data, by the size of a key's history): what one path
    scheduled or wrote, the other reads.  A regression: interesting times scheduled by the
    Python path reached the numpy path as a list."""
    from ddlab.engine.operators.reduce import Reduce

    original = Reduce._process_small
    monkeypatch.setattr(Reduce, "_process_small",
                        lambda self, t, keys: sum(t) % 2 == parity and original(self, t, keys))
    with tuned("numpy"):  # (the compiled kernels would take every run)
        churn_cc_and_scc(parity, 25)



def test_threshold_function_error_names_operator_and_record():
    flow = ddlab.Dataflow()
    x = flow.input("x")

    def picky(w):
        if (w > 1).any():
            raise ZeroDivisionError("no duplicates please")
        return w

    out = x.threshold(picky, name="picky").view()
    x.insert([1, 2])
    flow.step()
    before = (out.to_dict(), flow.epoch, flow.retained_updates(), len(flow.stats()))
    x.insert([2])
    with pytest.raises(OperatorError, match=r"picky#\d+: .*picky raised ZeroDivisionError: no "
                                            r"duplicates please on the multiplicities") as info:
        flow.step()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert info.value.operator.startswith("picky#")
    assert (out.to_dict(), flow.epoch, flow.retained_updates(), len(flow.stats())) == before



def test_threshold_function_returning_the_wrong_shape():
    flow = ddlab.Dataflow()
    x = flow.input("x")
    x.threshold(lambda w: 1).view()
    x.insert([1, 2])
    with pytest.raises(OperatorError, match=r"must return one integer per multiplicity"):
        flow.step()
    assert flow.epoch == 0



def _check_outer_set_operations(epochs, preset):
    """``records.iterate(v -> v.union(outer))`` and the same with intersect, where ``outer``
    is an arrangement built outside the loop (the reduce reads it through the entered view),
    against the oracle after every epoch."""
    with tuned(preset):
        flow = ddlab.Dataflow()
        records = flow.input("records", columns=["k", "v"])
        outer = records.map(lambda r: (r[1] % 3, r[0])).arrange()
        views = {name: records.iterate(lambda v, name=name: getattr(v, name)(outer)).view()
                 for name in ("union", "intersect")}
        for epoch, want in zip(epochs, accumulate(epochs)):
            records.update(epoch)
            flow.step()
            other = oracle.linear(want, lambda r: [(r[1] % 3, r[0])])
            for name, view in views.items():
                fn = max if name == "union" else min
                assert view.to_dict() == oracle.setop(want, other, fn), name


@pytest.mark.parametrize("preset", [None, "tiny"])
@given(epochs=EPOCHS)
def test_set_operations_with_an_outer_arrangement_inside_a_loop(preset, epochs):
    _check_outer_set_operations(epochs, preset)


def test_a_reduce_over_many_keys_accumulates_the_entered_view(monkeypatch):
    """With ``tiny`` thresholds (many keys from three on) the reduce reads an outer
    arrangement through ``EnteredTrace.accumulate_until``, and the results hold."""
    from ddlab.engine.trace import EnteredTrace

    calls = []
    original = EnteredTrace.accumulate_until
    monkeypatch.setattr(EnteredTrace, "accumulate_until",
                        lambda self, codes, t: calls.append(len(codes)) or original(self, codes, t))
    epochs = [[((k, v), 1) for k in range(5) for v in range(4)], [((2, 1), -1), ((7, 7), 2)]]
    _check_outer_set_operations(epochs, "tiny")
    assert calls and max(calls) >= 3


@pytest.mark.parametrize("name", ["count", "min", "top_k", "reduce"])
def test_a_reduce_over_more_keys_than_a_chunk_evaluates_chunk_by_chunk(monkeypatch, name):
    """A run over more keys than ``REDUCE_CHUNK_KEYS`` evaluates them a chunk at a time (the
    numpy path), emits one batch per chunk at the same time, and its results are the
    oracle's after every epoch (insertions, then deletions and changes across chunks)."""
    from ddlab.engine.operators.reduce import Reduce

    chunks = []
    original = Reduce._evaluate
    monkeypatch.setattr(Reduce, "_evaluate", lambda self, t, codes, *rest:
                        chunks.append(len(codes)) or original(self, t, codes, *rest))
    epochs = [[((k, v), 1) for k in range(23) for v in range(3)],
              [((k, 0), -1) for k in range(0, 23, 2)] + [((k, 9), 2) for k in range(5, 20)]]
    with tuned(KERNELS=False, REDUCE_CHUNK_KEYS=5, LARGE_KEYS=3, SMALL_KEYS=1):
        check_operator(name, 0, epochs)
    assert chunks and max(chunks) == 5 and len(chunks) >= 5


def _min_over_epochs_in_flight(preset, kernels_on, epochs):
    """A ``min`` stepped once over ``epochs`` (lists of ``(key, value)`` inserts, all but
    the last closed by ``advance``): the flow, the view, and ``{time: evaluations}`` of the
    reduce (calls of :meth:`Reduce.process`, one per time it evaluates)."""
    from collections import Counter

    from ddlab.engine.operators.reduce import Reduce
    from ddlab.engine.testing import use_kernels

    runs = Counter()
    original = Reduce.process
    with pytest.MonkeyPatch.context() as mp, tuned(preset), use_kernels(kernels_on):
        mp.setattr(Reduce, "process",
                   lambda self, t, inputs: runs.update([t]) or original(self, t, inputs))
        flow = ddlab.Dataflow()
        xs = flow.input("xs")
        view = xs.min().view()
        for k, batch in enumerate(epochs):
            xs.insert(batch)
            if k < len(epochs) - 1:
                flow.advance()
        before = flow.work.history_rows
        flow.step()
        read = flow.work.history_rows - before
    return flow, view, runs, read


@pytest.mark.parametrize("preset,kernels_on", [("general", False), ("tiny", False),
                                               (None, True)],
                         ids=["general", "tiny", "kernels"])
def test_a_reduce_over_a_batch_of_times_evaluates_each_time_once(preset, kernels_on):
    """Issue 48: a later batch time that an earlier one's evaluation scheduled (its lub with
    the key's history) was pushed on the run's worklist a second time and evaluated twice
    (``_each_time``: right results, history read twice, two ``flow.stats()`` rows).  Each
    time runs once, ``flow.stats()`` has one row per operator and time, and the history
    read is that of stepping the epochs as evaluations one by one: at ``(0,)`` key 1's two
    input rows, at ``(1,)`` the same two and the one output row written at ``(0,)``."""
    flow, view, runs, read = _min_over_epochs_in_flight(preset, kernels_on,
                                                        [[(1, 5)], [(1, 3)]])
    assert view.to_dict() == {(1, 3): 1}
    stats = flow.stats()
    assert not stats.duplicated(["operator", "time"]).any(), stats
    assert list(stats[stats.kind == "reduce"].time) == [(0,), (1,)]
    if preset == "general":  # (the paths that run a process per time: general, chunks)
        assert dict(runs) == {(0,): 1, (1,): 1}
        assert read == 2 + (2 + 1)


@pytest.mark.parametrize("preset,kernels_on", [("general", False), ("tiny", False),
                                               (None, True)],
                         ids=["general", "tiny", "kernels"])
def test_epochs_in_flight_evaluate_each_time_once_over_many_keys(preset, kernels_on):
    """The same over several keys and four epochs in flight, some keys changing in every
    epoch: every time evaluated once, and the view the oracle's minimum."""
    epochs = [[(k, 10 + k) for k in range(8)],
              [(k, 5 + k) for k in range(0, 8, 2)],
              [(k, 1) for k in range(0, 8, 3)] + [(9, 4)],
              [(k, 0) for k in range(1, 8, 4)]]
    flow, view, runs, _ = _min_over_epochs_in_flight(preset, kernels_on, epochs)
    want = {}
    for batch in epochs:
        for k, v in batch:
            want[k] = min(v, want.get(k, v))
    assert view.to_dict() == {(k, v): 1 for k, v in want.items()}
    assert not runs or max(runs.values()) == 1, runs
    stats = flow.stats()
    assert not stats.duplicated(["operator", "time"]).any(), stats
    assert list(stats[stats.kind == "reduce"].time) == [(e,) for e in range(len(epochs))]
