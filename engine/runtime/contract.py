"""What an operator declares to the runtime: how each input's records reach it, and how it runs.

Timely dataflow's operator builder wires each input from the *pact* the operator names for it
(``Pipeline``, or ``Exchange`` with a key function): no other part of the system looks at what
kind of operator it is.  ddlab does the same.  An operator states its contract as data, on its
class (or, where it depends on the instance, as a method), and the runtime reads nothing else:
fusion, the workers' set-up and the exchange of records between workers
(:mod:`~ddlab.engine.runtime.wiring`) all decide from these declarations.

The declarations, with their defaults on :class:`~ddlab.engine.operators.base.Operator`:

========================  =====================================================================
``pact(port)``            how records reach input ``port`` when several workers run the flow:
                          :data:`PIPELINE` (default: they stay on the worker that made them),
                          :class:`Exchange` ``(k)`` (to the worker owning the first ``k``
                          fields: every keyed operator that keeps state per key declares it),
                          :data:`GATHER` (everything to worker 0: a view), :data:`WHOLE_BATCH`
                          (the reader must see each time's whole batch; see below)
``spreads``               its output enters the dataflow at worker 0 (an input): a reader with
                          a :data:`PIPELINE` input gets a share of it on every worker, by the
                          hash of the whole record (``False``)
``eager``                 its output at a time is a sum over its input batches at that time, so
                          with several workers it may take a time's input as it arrives instead
                          of waiting until the time is complete everywhere (``False``)
``takes_times``           it takes several complete times in one run (``process_times``)
                          (``False``)
``fusable``               it turns a time's input into output at that same time, keeping no
                          state a reader could see out of step, so it may run inside its only
                          reader's run (``False``)
``hosts_fused``           operators may be fused into it (``True``; a loop's node is not an
                          operator run but a nested scope's sweep)
``input_time(port, t)``   an operator that reads an update at another time than the one it was
                          sent at (a loop's enter, feedback, leave) overrides it; such an
                          operator is neither fused nor fused into
========================  =====================================================================

A keyed operator that forgets to declare :class:`Exchange` would, with several workers, see a
shard of each key and compute per-shard answers: ``tests/engine/test_runtime_contract.py``
builds an operator in the test file alone and checks it at 1, 2 and 3 workers.
"""
from __future__ import annotations

from dataclasses import dataclass

from .protocol import RunProtocol


class Pact:
    """How the records sent along an edge reach the reading operator's input."""

    __slots__ = ()


@dataclass(frozen=True)
class Pipeline(Pact):
    """Records stay on the worker that made them (one worker's operator feeds the same
    worker's reader)."""

    def __str__(self) -> str:
        return "pipeline"


@dataclass(frozen=True)
class Exchange(Pact):
    """Each record goes to the worker owning its key, the first ``key_columns`` fields
    (``0``: one group, the whole collection, at worker 0): every worker's reader then holds
    all the records of the keys it owns (:mod:`~ddlab.engine.workers.partition`)."""

    key_columns: int

    def __post_init__(self):
        if isinstance(self.key_columns, bool) or not isinstance(self.key_columns, int) \
                or self.key_columns < 0:
            raise ValueError(f"Exchange(key_columns={self.key_columns!r}): the number of "
                             f"leading key fields is a whole number, 0 or more")

    def __str__(self) -> str:
        return f"exchange by the first {self.key_columns} fields"


@dataclass(frozen=True)
class Gather(Pact):
    """Every record to worker 0, where views are read."""

    def __str__(self) -> str:
        return "gather"


@dataclass(frozen=True)
class WholeBatch(Gather):
    """The reader must see each time's whole batch (a size choice).  Straight from an
    operator that ``spreads`` (an input, which holds the whole batch at worker 0) the reader's
    ``see_whole(batch)`` is called with it there and the records are then spread like any;
    from anywhere else they are gathered at worker 0."""

    def __str__(self) -> str:
        return "whole batch"


PIPELINE = Pipeline()
GATHER = Gather()
WHOLE_BATCH = WholeBatch()

#: how an edge moves records between workers, as ``flow.graph()`` names it
#: (``None``: it stays on its worker)
GATHER_EDGE, BY_KEY, SPREAD_EDGE = "gather", "by key", "spread"


def edge_kind(writer, reader, port: int) -> str | None:
    """How the edge from ``writer`` into ``reader``'s input ``port`` moves records between
    workers, read off the reader's declared pact and the writer's ``spreads``."""
    pact = reader.pact(port)
    if isinstance(pact, Exchange):
        return BY_KEY
    if isinstance(pact, Gather):
        return SPREAD_EDGE if isinstance(pact, WholeBatch) and writer.spreads else GATHER_EDGE
    if not isinstance(pact, Pipeline):
        raise TypeError(f"{reader.label}.pact({port}) returned {pact!r}, not a Pact "
                        f"(PIPELINE, Exchange(k), GATHER or WHOLE_BATCH)")
    return SPREAD_EDGE if writer.spreads else None


def reads_at_time_sent(op) -> bool:
    """Whether ``op`` processes an update at the time it was sent (it does not override
    ``input_time``): the condition for fusing into it or it into a reader."""
    return type(op).input_time is RunProtocol.input_time


@dataclass(frozen=True)
class Contract:
    """An operator's declarations gathered in one value, for reading (in a notebook, in a
    test); the runtime itself asks the operator's attributes directly."""

    pacts: tuple
    spreads: bool
    eager: bool
    takes_times: bool
    fusable: bool
    hosts_fused: bool
    reads_at_time_sent: bool


def contract_of(op) -> Contract:
    """``op``'s declarations (see the module's table)."""
    return Contract(tuple(op.pact(port) for port in range(len(op.inputs))), bool(op.spreads),
                    bool(op.eager), bool(op.takes_times), bool(op.fusable),
                    bool(op.hosts_fused), reads_at_time_sent(op))
