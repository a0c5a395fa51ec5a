"""A scope's occurrence counts and the frontiers derived from them.

Counts are kept per operator index of the scope and per time (a scope's times all have its
depth).  An operator's count at ``t`` is the number of pointstamps it holds there: one while
it has input queued at ``t`` and one per capability (a reduce's scheduled interesting time;
an input's open epoch).  A nested loop's pointstamps show in the parent's tracker as one
pointstamp at the loop's node per outer time (the loop coordinate dropped) while anything
inside holds a time with that prefix: the parent sees the loop as busy at an outer time
exactly while something inside is.

``blocked(j, t)`` asks whether input at operator ``j`` could still arrive at a time ``<= t``:
whether ``t`` is *not* yet complete there.  The scheduler asks it only for the operators that
must see all of their input at a time (reduces), and only about their own pending times.
"""
from __future__ import annotations

from ..lattice import leq
from .change_batch import ChangeBatch
from .reachability import FORWARD, Reachability


class ScopeTracker:
    """Occurrence counts of one scope's pointstamps; ``parent``/``node`` project them onto
    the enclosing scope's tracker (``None`` at the root)."""

    def __init__(self, parent: "ScopeTracker | None" = None, node: int | None = None):
        self.parent, self.node = parent, node
        #: ``counts[i]``: ``{time: count}`` of operator ``i`` (only nonzero counts)
        self.counts: list[dict] = []
        #: operator indices holding any pointstamp
        self.active: set[int] = set()
        #: outer time -> how many (operator, time) pointstamps here have it as their prefix
        self.prefixes: dict = {}
        self.reach = Reachability(0, (), ())
        #: the parent's answers to :meth:`blocked` for outer times, kept for one sweep of the
        #: scope (:meth:`new_sweep`): while this scope runs only its own pointstamps change,
        #: and they reach the loop's node only around the parent's feedback, at outer times
        #: in advance of the ones it is processing
        self.outer: dict = {}
        #: per worker: deltas applied here and not yet announced to the other workers
        #: (``None`` with one worker: nothing to announce)
        self.outbox: ChangeBatch | None = None

    def resize(self, n: int, reach: Reachability) -> None:
        """The scope's operators were re-indexed (a new topological order): counts restart
        (the graph only changes between steps, when nothing is held)."""
        self.counts = [dict() for _ in range(n)]
        self.active = set()
        self.prefixes = {}
        self.reach = reach

    def update(self, i: int, t: tuple, delta: int) -> None:
        """Apply a local change of ``delta`` to the count of operator ``i`` at ``t``."""
        counts = self.counts[i]
        before = counts.get(t, 0)
        after = before + delta
        if after:
            counts[t] = after
            self.active.add(i)
        else:
            del counts[t]
            if not counts:
                self.active.discard(i)
        if self.outbox is not None:
            self.outbox.update((i, t), delta)
        if self.parent is not None and (before > 0) != (after > 0):
            # the parent counts one pointstamp at the loop's node per outer time with any
            # pointstamp inside: it changes only when the first appears or the last goes
            head = t[:-1]
            prefixes = self.prefixes
            n = prefixes.get(head, 0) + (1 if after > 0 else -1)
            if n:
                prefixes[head] = n
                if n == 1 and after > 0:
                    self.parent.update(self.node, head, 1)
            else:
                del prefixes[head]
                self.parent.update(self.node, head, -1)

    def new_sweep(self) -> None:
        """A sweep of the scope starts: the outer answers are asked again."""
        if self.outer:
            self.outer = {}

    def times(self, i: int) -> dict:
        """``{time: count}`` held by operator ``i``."""
        return self.counts[i]

    def blocked(self, j: int, t: tuple) -> bool:
        """Whether input could still reach operator ``j`` at a time ``<= t`` (from any
        pointstamp of this scope, or from outside it)."""
        sources = self.reach.sources[j]
        counts = self.counts
        for i in self.active.intersection(sources):
            if sources[i] == FORWARD:
                for u in counts[i]:
                    # lexicographic order first: a necessary condition, checked in C
                    if u <= t and leq(u, t):
                        return True
            else:  # around the feedback: the last coordinate one more
                last = t[-1]
                head = t[:-1]
                for u in counts[i]:
                    if u[-1] < last and u[:-1] <= head and leq(u, head):
                        return True
        if self.parent is None:
            return False
        head = t[:-1]
        answer = self.outer.get(head)
        if answer is None:
            answer = self.outer[head] = self.parent.blocked(self.node, head)
        return answer

    def frontier(self, j: int):
        """The frontier at operator ``j``'s input: the minimal times at which input could
        still arrive there (this scope's times; the enclosing scopes' pointstamps show with
        zero loop coordinates).  For inspection; the scheduler asks :meth:`blocked`."""
        from .antichain import Antichain

        f = Antichain()
        for i, kind in self.reach.sources[j].items():
            for u, n in self.counts[i].items():
                if n > 0:
                    f.insert(u if kind == FORWARD else u[:-1] + (u[-1] + 1,))
        if self.parent is not None:
            for q in self.parent.frontier(self.node):
                f.insert(q + (0,))
        return f

    def is_empty(self) -> bool:
        return not self.active

    def clear(self) -> None:
        """Forget every count (a rolled-back step; the parent is cleared by its owner)."""
        for counts in self.counts:
            counts.clear()
        self.active.clear()
        self.prefixes.clear()
        if self.outbox is not None:
            self.outbox = ChangeBatch()
