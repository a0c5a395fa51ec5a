"""Operators declare their contract as data, and the runtime reads nothing else
(``engine/runtime/contract.py``, ``engine/runtime/wiring.py``).

The operator below is defined here alone: a keyed operator that keeps its own state per key
in a Python dict (no arrangement, nothing the engine knows by its class).  Declaring
``Exchange(1)`` on its input is all it takes to be right on several workers; the same
operator declaring the default pipeline sees a shard of each key there and answers per shard,
which is what the pact is for (the check that this test could fail)."""
from __future__ import annotations

import copy
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest

import ddlab
from ddlab.engine.batch import Batch
from ddlab.engine.collection import Collection
from ddlab.engine.columns import INT
from ddlab.engine.operators.base import Operator
from ddlab.engine.runtime.contract import (BY_KEY, GATHER, PIPELINE, SPREAD_EDGE, Exchange,
                                           contract_of, edge_kind)


class DistinctValuesPerKey(Operator):
    """``(key, value)`` records in; ``(key, number of distinct values)`` out, kept from a dict
    of the multiplicities it has seen (outside loops: its times are epochs, in order)."""

    kind = "distinct_values"
    shown_in_derivations = True

    def __init__(self, scope, up, declare_exchange: bool = True):
        self.declare_exchange = declare_exchange
        super().__init__(scope, [up])
        self.seen: dict = defaultdict(Counter)

    def pact(self, port):
        return Exchange(1) if self.declare_exchange else PIPELINE

    def _count(self, key) -> int:
        return sum(1 for n in self.seen[key].values() if n > 0)

    def process(self, t, inputs):
        batch = inputs[0]
        keys, values, diffs = batch.cols[0], batch.cols[1], batch.diffs
        touched = sorted(set(keys.tolist()))
        before = {k: self._count(k) for k in touched}
        for k, v, d in zip(keys.tolist(), values.tolist(), diffs.tolist()):
            self.seen[k][v] += d
        out_keys, out_counts, out_diffs = [], [], []
        for k in touched:
            after = self._count(k)
            if after == before[k]:
                continue
            if before[k]:
                out_keys.append(k), out_counts.append(before[k]), out_diffs.append(-1)
            if after:
                out_keys.append(k), out_counts.append(after), out_diffs.append(1)
        if out_keys:
            self.emit(t, Batch([np.array(out_keys, dtype=np.int64),
                                np.array(out_counts, dtype=np.int64)],
                               (batch.kinds[0], INT), np.array(out_diffs, dtype=np.int64)))

    def snapshot(self):
        return copy.deepcopy(self.seen)

    def restore(self, state):
        self.seen = copy.deepcopy(state)


class Shift(Operator):
    """A linear operator of this file: ``(k, v)`` -> ``(k, v + 1)``, fusable."""

    kind = "shift"
    fusable = True
    eager = True

    def process(self, t, inputs):
        b = inputs[0]
        self.emit(t, Batch([b.cols[0], b.cols[1] + 1], b.kinds, b.diffs))


def _build(flow, declare_exchange=True):
    pairs = flow.input("pairs", columns=["k", "v"])
    shifted = Collection(Shift(pairs.scope, [pairs.op]), ["k", "v"])
    op = DistinctValuesPerKey(shifted.scope, shifted.op, declare_exchange)
    return pairs, Collection(op, ["k", "n"]).view()


def _epochs(seed: int, n_epochs: int = 6):
    """Random insertions and deletions of ``(key, value)`` pairs, each epoch valid (a pair is
    removed only while present)."""
    rng = np.random.default_rng(seed)
    present: Counter = Counter()
    for _ in range(n_epochs):
        ins = [(int(k), int(v)) for k, v in rng.integers(0, [12, 5], size=(40, 2))]
        have = [r for r, n in present.items() for _ in range(n)]
        rng.shuffle(have)
        rem = have[:len(have) // 3]
        present.update(ins)
        present.subtract(rem)
        present = +present
        yield ins, rem, Counter(present)


def _oracle(present: Counter) -> dict:
    """From scratch: pandas' distinct values per key."""
    rows = [r for r, n in present.items() for _ in range(n)]
    if not rows:
        return {}
    frame = pd.DataFrame(rows, columns=["k", "v"])
    frame["v"] += 1
    return {(int(k), int(n)): 1 for k, n in frame.groupby("k")["v"].nunique().items()}


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_an_operator_of_this_file_declaring_a_keyed_input_is_right_on_any_workers(workers):
    flow = ddlab.Dataflow(workers=workers)
    try:
        pairs, view = _build(flow)
        for ins, rem, present in _epochs(seed=workers):
            pairs.insert(ins)
            pairs.remove(rem)
            flow.step()
            assert view.to_dict() == _oracle(present)
        if workers > 1:
            _, edges = flow.graph()
            kinds = dict(zip(zip(edges.source, edges.target), edges.exchange))
            keyed = next(op for op in flow.operators if isinstance(op, DistinctValuesPerKey))
            assert kinds[(keyed.inputs[0].id, keyed.id)] == BY_KEY
    finally:
        flow.close()


def test_the_same_operator_without_its_pact_is_wrong_on_two_workers():
    """The check that the pact is what makes it right: declared pipeline, each worker sees the
    share of the input it was spread, and some key's count comes out per shard."""
    flow = ddlab.Dataflow(workers=2)
    try:
        pairs, view = _build(flow, declare_exchange=False)
        wrong = 0
        for ins, rem, present in _epochs(seed=7):
            pairs.insert(ins)
            pairs.remove(rem)
            flow.step()
            wrong += view.to_dict() != _oracle(present)
        assert wrong
    finally:
        flow.close()


def test_wiring_reads_the_declarations_alone():
    """One worker: the linear operator of this file fuses into its keyed reader.  The
    contract reads back as declared, and the edge kinds come from the pacts."""
    flow = ddlab.Dataflow()
    pairs, view = _build(flow)
    pairs.insert([(1, 1)])
    flow.step()
    keyed = next(op for op in flow.operators if isinstance(op, DistinctValuesPerKey))
    shift = keyed.inputs[0]
    assert shift.fused_into is keyed and keyed.fused == (shift,)
    contract = contract_of(keyed)
    assert contract.pacts == (Exchange(1),) and not contract.eager and not contract.fusable
    assert contract_of(shift).fusable and contract_of(shift).eager
    sink = next(op for op in flow.operators if op.inputs and op.inputs[0] is keyed)
    assert sink.pact(0) == GATHER
    assert edge_kind(shift, keyed, 0) == BY_KEY
    assert edge_kind(pairs.op, shift, 0) == SPREAD_EDGE  # an input's records are spread
    assert edge_kind(keyed, sink, 0) == "gather"


def test_no_fusion_across_an_exchange_on_several_workers():
    flow = ddlab.Dataflow(workers=2)
    try:
        pairs, view = _build(flow)
        pairs.insert([(1, 1), (1, 2), (2, 1)])
        flow.step()
        keyed = next(op for op in flow.operators if isinstance(op, DistinctValuesPerKey))
        assert keyed.inputs[0].fused_into is None  # its records move to their key's owner
        assert view.to_dict() == {(1, 2): 1, (2, 1): 1}
    finally:
        flow.close()


def test_a_pact_that_is_not_one_is_refused_by_name():
    class Odd(Shift):
        def pact(self, port):
            return "by key"

    flow = ddlab.Dataflow()
    xs = flow.input("xs", columns=["k", "v"])
    odd = Odd(xs.scope, [xs.op])
    with pytest.raises(TypeError, match=r"shift#\d+\.pact\(0\) returned 'by key', not a Pact"):
        edge_kind(xs.op, odd, 0)
    with pytest.raises(ValueError, match="key_columns=-1"):
        Exchange(-1)
