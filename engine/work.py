"""Machine-independent counts of the engine's work.

Seconds differ between two machines of one kind by a factor of two (a busy neighbour, another
CPU generation); what the engine *did* does not.  These counters say it: how many times the
scheduler ran an operator, how many (operator, time) pairs were processed, how many compiled
kernel calls were made, how many history rows the keyed operators read and how many pairs the
joins matched.  With them two machines' timings can be compared: equal work and unequal
seconds is the machine; unequal work is the engine.  ``Dataflow.work()`` reads them; the
benchmarks report them per update.

The kernel calls are counted process-wide (a compiled call does not know its flow).
"""
from __future__ import annotations


class Work:
    """Counters of one flow (kept since it was built; take differences around a step)."""

    __slots__ = ("runs", "activations", "history_rows", "matched_pairs", "trace_inserts")

    def __init__(self):
        #: operator runs: scheduler calls of an operator that did something (a run takes
        #: every time its frontier allows)
        self.runs = 0
        #: (operator, time) pairs processed: the rows of ``flow.stats()``
        self.activations = 0
        #: rows of keys' histories a reduce read (input and output traces, at every time)
        self.history_rows = 0
        #: pairs a join formed (a delta row with a trace row of the same key)
        self.matched_pairs = 0
        #: batches inserted into traces
        self.trace_inserts = 0

    def as_dict(self) -> dict:
        out = {name: getattr(self, name) for name in self.__slots__}
        out["kernel_calls"] = KERNEL_CALLS[0]
        return out


#: compiled kernel calls in this process (incremented at the call sites)
KERNEL_CALLS = [0]
