"""Decide how to compute something by the size of the first load.

Some programs have formulations with the same result but different costs: label propagation
is cheaper per update in its plain form and much cheaper from scratch (in time and memory) in
its prioritized form on large graphs.  Which to use cannot be known when the dataflow is built
(the data arrives later), so a :class:`Decide` operator on the input passes every update on
unchanged and, on the first non-empty batch it sees, fixes a :class:`SizeChoice` for good
(``Collection.decide`` builds it).
Operators downstream read the choice (a prioritized loop's priority function: one priority
class for everything is plain label propagation).  Since the choice is a fixed function
from the first batch on, the program downstream is one fixed program; a rolled-back first
epoch undoes the choice.
"""
from __future__ import annotations

from ..runtime.contract import WHOLE_BATCH
from .base import Operator


class SizeChoice:
    """One decision: ``"large"`` if the first batch holds at least ``threshold`` updates,
    else ``"small"``; ``names`` says what each choice builds (for statistics and repr)."""

    def __init__(self, threshold: int, names: dict, what: str = "updates"):
        self.threshold, self.names, self.what = int(threshold), dict(names), what
        self.choice: str | None = None
        self.size: int | None = None
        self.operators: list = []

    def decide(self, size: int) -> str:
        if self.choice is None:
            self.choice = "large" if size >= self.threshold else "small"
            self.size = size
            for op in self.operators:
                op.name = op.describe()
        return self.choice

    def explain(self) -> str:
        """Why the chosen branch runs (or the rule, before the first batch)."""
        small, large = self.names["small"], self.names["large"]
        if self.choice is None:
            return (f"{large} if the first load has >= {self.threshold:,} {self.what}, "
                    f"else {small} (not decided yet)")
        sign = ">=" if self.choice == "large" else "<"
        return (f"{self.names[self.choice]}: first load {self.size:,} {self.what} {sign} "
                f"{self.threshold:,}")

    def snapshot(self):
        return (self.choice, self.size)

    def restore(self, state) -> None:
        if state[0] != self.choice:
            self.choice, self.size = state
            for op in self.operators:
                op.name = op.describe()


class Decide(Operator):
    """Passes its input on unchanged; its first non-empty batch fixes ``decision``.  Its name
    (in ``flow.stats()`` and the graph) says what was chosen and why."""

    kind = "choose"
    fusable = True
    passes_records = presents_input = True

    def __init__(self, scope, up, decision: SizeChoice, name: str | None = None):
        self.decision = decision
        self.prefix = name or "auto"
        super().__init__(scope, [up], self.describe())
        decision.operators.append(self)

    def describe(self) -> str:
        return f"{self.prefix}: {self.decision.explain()}"

    def pact(self, port):
        """The choice is made on the whole first batch: with several workers it is seen
        whole at worker 0 (straight from an input, before the input's records are spread)."""
        return WHOLE_BATCH

    def see_whole(self, batch) -> None:
        """A time's whole batch, seen before it is spread (the pact's hook)."""
        self.decision.decide(len(batch))

    def process(self, t, inputs):
        self.decision.decide(len(inputs[0]))
        self.emit(t, inputs[0])

    def snapshot(self):
        return self.decision.snapshot()

    def restore(self, state) -> None:
        self.decision.restore(state)

    def copy_into(self, scope, inputs):
        """The same decision, already taken (a replay runs the program chosen on the first
        load, whatever its input size)."""
        decision = SizeChoice(self.decision.threshold, self.decision.names, self.decision.what)
        decision.restore(self.decision.snapshot())
        return Decide(scope, inputs[0], decision)
