"""Choose between two ways of computing the same thing by the size of the first load.

Some programs have two formulations with the same result but different costs: label
propagation is cheaper per update in its plain form and much cheaper from scratch (in time and
memory) in its prioritized form on large graphs.  Which one to build cannot be known when the
dataflow is built (the data arrives later), so both are built behind a pair of :class:`Choose`
operators sharing one :class:`SizeChoice`: the first non-empty batch decides, once and for all,
and from then on one branch receives every update and the other none (an operator without
pending work is never visited, so the idle branch costs nothing).  Since the routing is a
fixed function from the first batch on, each branch sees a consistent collection and the
sum of the two outputs is the program's output.
"""
from __future__ import annotations

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


class Choose(Operator):
    """Passes its input on iff its branch (``"small"`` or ``"large"``) is the chosen one."""

    kind = "choose"
    preserves_consolidation = True

    def __init__(self, scope, up, decision: SizeChoice, branch: str):
        if branch not in ("small", "large"):
            raise ValueError(f"branch must be 'small' or 'large', not {branch!r}")
        self.decision, self.branch = decision, branch
        super().__init__(scope, [up], self.describe())
        decision.operators.append(self)

    def describe(self) -> str:
        d = self.decision
        if d.choice is None:
            return f"auto: {d.names[self.branch]}?"
        if d.choice == self.branch:
            return f"auto: {d.explain()}"
        return f"auto: {d.names[self.branch]} (not chosen)"

    def process(self, t, inputs):
        b = inputs[0]
        if self.decision.decide(len(b)) == self.branch:
            self.emit(t, b)

    def snapshot(self):
        return self.decision.snapshot()

    def restore(self, state) -> None:
        self.decision.restore(state)
