"""Scopes and the scheduler: operators run when they have input, as far as their frontiers allow.

Each loop is a scope whose times have one more coordinate than its parent's; a nested scope is
one node of its parent.  A scope keeps its operators in topological order (feedback edges
aside) and the occurrence counts of their pointstamps (:class:`~.progress.ScopeTracker`).

:meth:`Scope.run` sweeps the operators in that order, again and again until none can do
anything.  An operator with input runs once per sweep and takes every time it has queued in
that one run; an operator that must see all of its input at a time before it answers (a
reduce: ``notify``) takes only the times its input frontier has passed, in a linear extension
of the partial order (lexicographic order).  A nested loop's node runs its own sweeps, and
its times are complete only where the parent's frontier at the node allows.  So within a loop
one sweep is one iteration, an iteration in which nothing changed costs nothing (only
operators holding pointstamps are visited), and times that do not depend on each other - the
iterations of two epochs in flight, a batch arriving at several times at once - are taken
together instead of one ``(time, operator)`` visit each.
"""
from __future__ import annotations

import heapq

from ..errors import DataflowError, NonConvergenceError
from ..lattice import EPOCH, display_time, iteration_of
from .progress import Reachability, ScopeTracker


class Scope:
    """The root scope (times ``(epoch,)``) or a loop nested in ``parent``."""

    def __init__(self, flow, parent: "Scope | None", name: str, kind: str = EPOCH,
                 max_iterations: int | None = None):
        self.flow, self.parent, self.name, self.kind = flow, parent, name, kind
        self.depth = 1 if parent is None else parent.depth + 1
        self.coordinate_kinds = (EPOCH,) if parent is None else parent.coordinate_kinds + (kind,)
        self.max_iterations = max_iterations
        #: a user-facing account of the loop (what a compiler built it from), used by the
        #: non-convergence error instead of operator labels when set
        self.hint: str | None = None
        self.ops: list = []
        self.children: list[Scope] = []
        self.node = None
        self.tracker = ScopeTracker(parent.tracker if parent is not None else None)
        #: indices of the operators with work here (input queued, capabilities to use), and
        #: of the loop nodes whose scope has some: what a sweep visits
        self.work: set[int] = set()
        #: what a sweep visits: the operators holding a count here (one worker), or those
        #: with work of this worker's own (:attr:`work`, several workers)
        self.visit: set[int] = self.tracker.active
        #: ``root/scc/reach``: names are fixed, so built once (statistics readers ask for it
        #: per operator run)
        self.path = name if parent is None else f"{parent.path}/{name}"
        if parent is not None:
            from ..operators.loops import ScopeNode

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

    # -- running -------------------------------------------------------------------------
    def run(self) -> bool:
        """Sweep the operators until none can run; returns whether any did."""
        ops, tracker, counters, busy = self.ops, self.tracker, self.flow.work, self.visit
        hook = self.flow.run_hook  # several workers: send what a run made for the others
        ran = False
        while busy:
            tracker.new_sweep()
            progressed = False
            for op in ops:
                if op.index in busy and op.step():
                    progressed = True
                    counters.runs += 1
                    if hook is not None:
                        hook()
            if not progressed:
                break
            ran = True
        return ran

    def mark_busy(self, i: int) -> None:
        """Operator ``i`` has work now (it had none)."""
        if not self.work and self.parent is not None:
            self.work.add(i)
            self.parent.mark_busy(self.node.index)
        else:
            self.work.add(i)

    def mark_idle(self, i: int) -> None:
        """Operator ``i`` has no work left."""
        work = self.work
        work.discard(i)
        if not work and self.parent is not None:
            self.parent.mark_idle(self.node.index)

    def check_iteration(self, t: tuple) -> None:
        """Raise :class:`NonConvergenceError` when ``t`` is past the loop's iteration bound."""
        if iteration_of(t[-1], self.kind) > self.max_iterations:
            self._fail_to_converge(t)

    def _fail_to_converge(self, t: tuple) -> None:
        where = display_time(t, self.coordinate_kinds)
        if self.hint:  # Loop(hint=): its builder's words for its user
            advice = f"). {self.hint}"
        else:
            busy = sorted({self.ops[i].label for i in self.visit})
            advice = (f"; operators with pending updates: "
                      f"{', '.join(busy[:5]) or self.ops[0].label}). Raise max_iterations, or "
                      f"check that the body ends in a reduce/distinct so that its updates can "
                      f"cancel.")
        raise NonConvergenceError(
            f"loop {self.path!r} did not converge within {self.max_iterations} iterations "
            f"(still changing at time {where}{advice} "
            f"The epoch was rolled back.", loop=self.path, bound=self.max_iterations)

    def clear(self) -> None:
        """Forget every pointstamp and all work of this scope and the scopes in it (a
        rolled-back step)."""
        self.tracker.clear()
        self.work.clear()
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
        """Re-index operators so every edge (except loop feedback) goes forward, and derive
        could-result-in from the edges (Kahn's algorithm: linear in the graph's size)."""
        from ..operators.loops import Feedback

        index = {id(op): k for k, op in enumerate(self.ops)}
        succ: list[list[int]] = [[] for _ in self.ops]
        feedback = []
        indegree = [0] * len(self.ops)
        for op in self._all_ops():
            me = self.representative(op)
            if me is None:
                continue
            for up in op.inputs:
                them = self.representative(up)
                if them is None or them is me:
                    continue
                if isinstance(up, Feedback) and up.scope is op.scope and op.scope is self:
                    feedback.append((index[id(them)], index[id(me)]))
                    continue
                succ[index[id(them)]].append(index[id(me)])
                indegree[index[id(me)]] += 1
        # the smallest construction index first among the ready: the order stays the one
        # the program was built in wherever the edges allow
        ready = [k for k in range(len(self.ops)) if not indegree[k]]
        heapq.heapify(ready)
        order = []
        while ready:
            k = heapq.heappop(ready)
            order.append(k)
            for j in succ[k]:
                indegree[j] -= 1
                if not indegree[j]:
                    heapq.heappush(ready, j)
        if len(order) != len(self.ops):
            # the operators on a cycle: those left waiting, less the ones that only wait
            # for a cycle (downstream of it: no successor among the waiting)
            waiting = {k for k in range(len(self.ops)) if indegree[k]}
            trimmed = True
            while trimmed:
                trimmed = {k for k in waiting if not waiting.intersection(succ[k])}
                waiting -= trimmed
            stuck = [self.ops[k].label for k in sorted(waiting)]
            raise DataflowError(
                f"scope {self.path!r} has a cycle without a loop's feedback through "
                f"{', '.join(stuck[:6])}: every cycle must go around a loop (iterate, "
                f"prioritize or Loop.variable(...).set(...))")
        position = {k: p for p, k in enumerate(order)}
        self.ops = [self.ops[k] for k in order]
        for i, op in enumerate(self.ops):
            op.index = i
        forward = [(position[a], position[b]) for a in range(len(succ)) for b in succ[a]]
        feedback = [(position[a], position[b]) for a, b in feedback]
        self.tracker.resize(len(self.ops), Reachability(len(self.ops), forward, feedback))
        self.work.clear()
        for child in self.children:
            child.tracker.attach(child.node.index)
            child.toposort()

    def _all_ops(self):
        for op in self.ops:
            yield op
        for child in self.children:
            yield from child._all_ops()

    def describe_time(self, t: tuple):
        return display_time(t, self.coordinate_kinds)
