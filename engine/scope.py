"""Scopes and the scheduler.

Each loop is a scope whose times have one more coordinate than its parent's.  A scope keeps a
heap of ``(time, operator index)`` pairs with pending work and processes them in increasing
lexicographic time order, operators in topological order within one time.  This is a valid
linear extension of causality because every operator only ever emits at times ``>=`` the time it
is processing (join emits at lubs, a reduce schedules lubs, feedback adds one).

A nested scope is one node of its parent: pushing work at inner time ``(p..., i)`` schedules
the node at outer time ``(p...)``, and the node runs the inner scope to quiescence for that
prefix.  So an inner scope's pending future times (from scheduled lubs) are its parent's
pending work, and an iteration in which nothing changed costs nothing: only operators that
have work are visited.
"""
from __future__ import annotations

import heapq

from .errors import NonConvergenceError
from .lattice import EPOCH, iteration_of, display_time


class Scope:
    """The root scope (times ``(epoch,)``) or a loop nested in ``parent``."""

    def __init__(self, flow, parent: "Scope | None", name: str, kind: str = EPOCH,
                 max_iterations: int | None = None):
        self.flow, self.parent, self.name, self.kind = flow, parent, name, kind
        self.depth = 1 if parent is None else parent.depth + 1
        self.coordinate_kinds = (EPOCH,) if parent is None else parent.coordinate_kinds + (kind,)
        self.max_iterations = max_iterations
        self.ops: list = []
        self.heap: list = []
        self.scheduled: set = set()
        self.children: list[Scope] = []
        self.node = None
        self._running_prefix = None
        #: ``root/scc/reach``: names are fixed, so built once (statistics readers ask for it
        #: per operator run)
        self.path = name if parent is None else f"{parent.path}/{name}"
        if parent is not None:
            from .operators.loops import ScopeNode

            parent.children.append(self)
            self.node = ScopeNode(parent, self)

    def add(self, op) -> int:
        self.ops.append(op)
        return len(self.ops) - 1

    def is_within(self, other: "Scope") -> bool:
        """True if this scope is ``other`` or nested (at any depth) inside it."""
        s = self
        while s is not None:
            if s is other:
                return True
            s = s.parent
        return False

    # -- scheduling ----------------------------------------------------------------------
    def schedule(self, t: tuple, index: int) -> None:
        entry = (t, index)
        if entry in self.scheduled:
            return
        self.scheduled.add(entry)
        heapq.heappush(self.heap, entry)
        if self.parent is not None and t[:-1] != self._running_prefix:
            self.parent.schedule(t[:-1], self.node.index)

    def run(self, prefix: tuple) -> None:
        """Process every pending time that starts with ``prefix``, to quiescence."""
        heap, ops, plen = self.heap, self.ops, len(prefix)
        outer_running = self._running_prefix
        self._running_prefix = prefix
        try:
            while heap and heap[0][0][:plen] == prefix:
                t, index = heapq.heappop(heap)
                self.scheduled.discard((t, index))
                if self.max_iterations is not None and plen:
                    if iteration_of(t[-1], self.kind) > self.max_iterations:
                        self._fail_to_converge(t)
                ops[index].run_at(t)
        finally:
            self._running_prefix = outer_running

    def _fail_to_converge(self, t: tuple) -> None:
        where = display_time(t, self.coordinate_kinds)
        hint = getattr(self, "hint", None)   # Loop(hint=): its builder's words for its user
        if hint:
            advice = f"). {hint}"
        else:
            busy = sorted({self.ops[i].label for (u, i) in self.heap if u[:-1] == t[:-1]})
            advice = (f"; operators with pending updates: "
                      f"{', '.join(busy[:5]) or self.ops[0].label}). Raise max_iterations, or "
                      f"check that the body ends in a reduce/distinct so that its updates can "
                      f"cancel.")
        raise NonConvergenceError(
            f"loop {self.path!r} did not converge within {self.max_iterations} iterations "
            f"(still changing at time {where}{advice} "
            f"The epoch was rolled back.", loop=self.path, bound=self.max_iterations)

    def clear(self) -> None:
        self.heap.clear()
        self.scheduled.clear()
        self._running_prefix = None
        for child in self.children:
            child.clear()

    # -- topological order ---------------------------------------------------------------
    def representative(self, op):
        """The node of this scope that contains ``op`` (itself, or the loop node around it)."""
        s = op.scope
        if s is self:
            return op
        while s.parent is not None and s.parent is not self:
            s = s.parent
        return s.node if s.parent is self else None

    def toposort(self) -> None:
        """Re-index operators so every edge (except loop feedback) goes forward."""
        from .operators.loops import Feedback

        preds = {id(op): set() for op in self.ops}
        for op in self._all_ops():
            me = self.representative(op)
            if me is None:
                continue
            for up in op.inputs:
                if isinstance(up, Feedback) and up.scope is op.scope and op.scope is self:
                    continue
                them = self.representative(up)
                if them is not None and them is not me:
                    preds[id(me)].add(id(them))
        order, done = [], set()
        remaining = list(self.ops)
        while remaining:
            progressed = False
            for op in list(remaining):
                if preds[id(op)] <= done:
                    order.append(op)
                    done.add(id(op))
                    remaining.remove(op)
                    progressed = True
            if not progressed:  # a cycle without feedback cannot be built through the API
                order.extend(remaining)
                break
        self.ops = order
        for i, op in enumerate(order):
            op.index = i
        for child in self.children:
            child.toposort()

    def _all_ops(self):
        for op in self.ops:
            yield op
        for child in self.children:
            yield from child._all_ops()

    def describe_time(self, t: tuple):
        return display_time(t, self.coordinate_kinds)
