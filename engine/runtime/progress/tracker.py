"""A scope's occurrence counts and the frontiers derived from them.

Counts are kept per operator index of the scope and per time (a scope's times all have its
depth).  An operator's count at ``t`` is the number of pointstamps held there: one per batch
queued at ``t`` (a message in flight) and one per capability (a reduce's scheduled
interesting time; an input's open epoch).  With several workers each keeps such a tracker per
scope, its *view*: the sum of its own changes (:meth:`update`, also put in its :attr:`outbox`)
and of the changes the others announced (:meth:`apply`); a count may pass through a negative
value while announcements are on their way, and only positive counts hold a time.

A nested loop is one node of its parent.  Its pointstamps show there with the loop
coordinate dropped: the parent reads them from the loop's tracker (:meth:`outer_times`)
rather than keeping counts of its own, so the view of every worker is the same function of
the same counts.

``blocked(j, t)`` asks whether input at operator ``j`` could still arrive at a time ``<= t``:
whether ``t`` is *not* yet complete there.  The scheduler asks it about the times an operator
has work at.
"""
from __future__ import annotations

from operator import le

from .antichain import Antichain
from .change_batch import ChangeBatch
from .reachability import FORWARD, Reachability


class ScopeTracker:
    """Occurrence counts of one scope's pointstamps; ``parent``/``node`` place it in the
    enclosing scope's tracker (``None`` at the root)."""

    def __init__(self, parent: "ScopeTracker | None" = None, node: int | None = None):
        self.parent, self.node = parent, node
        #: ``counts[i]``: ``{time: count}`` of operator ``i`` (only nonzero counts)
        self.counts: list[dict] = []
        #: operator indices holding a count, and loop nodes whose tracker does (one set for
        #: the tracker's life: the scope's sweeps visit it)
        self.active: set[int] = set()
        #: node index -> the tracker of the loop nested there
        self.children: dict[int, "ScopeTracker"] = {}
        self.reach = Reachability(0, (), ())
        #: the parent's answers to :meth:`blocked` for outer times, kept for one sweep of the
        #: scope (:meth:`new_sweep`): while this scope runs only its own pointstamps change,
        #: and they reach the loop's node only around the parent's feedback, at outer times
        #: in advance of the ones it is processing
        self.outer: dict = {}
        #: changes made here and not yet announced to the other workers (``None`` with one
        #: worker: nothing to announce)
        self.outbox: ChangeBatch | None = None
        #: whether :meth:`least` may stand in for :meth:`blocker` (one worker: see
        #: :meth:`_ready_time`)
        self.one_worker = True
        self.sweep_least = None
        #: :meth:`_ready_time` for the current sweep: a time the scheduler may run without
        #: asking :meth:`blocker` (compared with ``==``: ``None`` equals no time)
        self.ready_time = None
        if parent is not None and node is not None:
            parent.children[node] = self
        self.count_for_workers(1)

    def resize(self, n: int, reach: Reachability) -> None:
        """The scope's operators were re-indexed (a new topological order): counts restart
        (the graph only changes between steps, when nothing is held)."""
        self.counts = [dict() for _ in range(n)]
        self.active.clear()
        self.children = {}
        self.reach = reach

    def attach(self, node: int) -> None:
        """Sit at ``node`` of the parent's (re-indexed) operators."""
        self.node = node
        self.parent.children[node] = self

    # -- changing counts ---------------------------------------------------------------
    def update(self, i: int, t: tuple, delta: int) -> None:
        """A change this worker made: applied, and kept to announce (:attr:`outbox`).  With
        one worker (no outbox) this is :meth:`apply` itself (see :meth:`count_for_workers`)."""
        self.apply(i, t, delta)
        if self.outbox is not None:
            self.outbox.update((i, t), delta)

    def count_for_workers(self, workers: int) -> None:
        """Count for ``workers`` workers: with several, every change this worker makes is kept
        in :attr:`outbox` to announce to the others, and the one-worker shortcut
        (:meth:`_ready_time`) is off; with one, nothing is kept.  (Called by the runtime's
        wiring, the one place that sets how the runtime counts.)"""
        self.one_worker = workers == 1
        self.outbox = None if workers == 1 else ChangeBatch()
        if self.outbox is None:
            self.update = self.apply  # the hot path: one call less per change
        else:
            self.__dict__.pop("update", None)

    def apply(self, i: int, t: tuple, delta: int) -> None:
        """Apply a change of ``delta`` to the count of operator ``i`` at ``t``.  (Every
        pointstamp's arrival and departure: written for few Python operations.)  Only a
        positive count holds ``t`` (:meth:`least`, :meth:`outer_times`): with several
        workers a count is negative while the change that cancels it is on its way."""
        counts = self.counts[i]
        before = counts.get(t, 0)
        after = before + delta
        if after:
            counts[t] = after
            if not before and len(counts) == 1:
                if not self.active and self.parent is not None:
                    self.parent._node_busy(self.node, True)
                self.active.add(i)
        else:
            del counts[t]
            if not counts:
                active = self.active
                active.discard(i)
                if not active and self.parent is not None:
                    self.parent._node_busy(self.node, False)

    def _node_busy(self, node: int, busy: bool) -> None:
        """The loop at ``node`` started or stopped holding anything."""
        active = self.active
        if busy:
            if not active and self.parent is not None:
                self.parent._node_busy(self.node, True)
            active.add(node)
        elif not self.counts[node]:
            active.discard(node)
            if not active and self.parent is not None:
                self.parent._node_busy(self.node, False)

    def least(self):
        """The lexicographically least time held here (a positive count of an operator, or
        inside a loop nested here, with its loop coordinate dropped), or ``None``.  Found
        when asked (once a sweep) among the few operators holding counts, rather than kept
        up to date by every count change."""
        best = None
        counts = self.counts
        for i in self.active:
            held = counts[i]
            if not held:
                continue  # (a loop's node: its loop's times are read below)
            u = min(held)
            if held[u] <= 0:  # (several workers: only a positive count holds a time)
                u = min((v for v, n in held.items() if n > 0), default=None)
                if u is None:
                    continue
            if best is None or u < best:
                best = u
        for child in self.children.values():
            if child.active:
                inner = child.least()
                if inner is not None and (best is None or inner[:-1] < best):
                    best = inner[:-1]
        return best

    def _ready_time(self):
        """The time that is complete at every operator the current sweep reaches (one
        worker only), or ``None``: :attr:`sweep_least`, when each enclosing scope's sweep is
        at its least time with the same prefix.  Then no operator holds an earlier time (in
        lexicographic order, so in the partial order), and the operators that hold it and
        come before in topological order ran it when this sweep reached them (each was then
        in the same position; nothing that runs later in a sweep sends to an operator before
        it but around the feedback, at a later time).  The old scheduler's
        one-time-at-a-time order, read off the counts.

        It holds for the whole sweep with no :meth:`least` asked again: the callers hold the
        time they ask about (an operator with work there; a loop whose operator holds a time
        with that prefix), and within a sweep no time lexicographically before
        :attr:`sweep_least` is ever held, as every pointstamp a run makes is at or after a
        time held (its own, a lub with it, the next iteration, its prefix outside the loop,
        its extension inside one).  The enclosing sweeps do not move while this scope runs
        (it runs inside one of them)."""
        least = self.sweep_least
        if least is None or self.parent is None or least[:-1] == self.parent.ready_time:
            return least
        return None

    # -- reading -----------------------------------------------------------------------
    def outer_times(self):
        """The outer times at which this loop (or one nested in it) holds a pointstamp (a
        positive count)."""
        counts = self.counts
        for i in self.active:
            for t, n in counts[i].items():
                if n > 0:
                    yield t[:-1]
        for child in self.children.values():
            if child.active:
                for u in child.outer_times():
                    yield u[:-1]

    def holds_outer_before(self, target: tuple) -> bool:
        """Whether this loop (or one nested in it) holds a positive count at a time whose
        outer coordinates are at or before ``target`` (an outer time) in the product order:
        :meth:`outer_times` asked in place, without building them."""
        k = len(target)
        counts = self.counts
        for i in self.active:
            for u, n in counts[i].items():
                # (map stops at the shorter tuple: the outer coordinates)
                if n > 0 and u[:k] <= target and all(map(le, u, target)):
                    return True
        for child in self.children.values():
            if child.active and child.holds_outer_before(target):
                return True
        return False

    def times(self, i: int):
        """The times at which operator ``i`` holds a positive count (a loop node: the outer
        times of its loop's pointstamps)."""
        child = self.children.get(i)
        if child is not None:
            return set(child.outer_times())
        return [u for u, n in self.counts[i].items() if n > 0]

    def new_sweep(self) -> None:
        """A sweep of the scope starts: the outer answers are asked again, and the least
        time held now is noted (:meth:`_ready_time`)."""
        if self.outer:
            self.outer = {}
        # (several workers: no shortcut; ``None`` equals no time)
        self.sweep_least = self.least() if self.one_worker else None
        self.ready_time = self._ready_time()

    def blocked(self, j: int, t: tuple) -> bool:
        """Whether input could still reach operator ``j`` at a time ``<= t`` (from any
        pointstamp of this scope, of a loop in it, or from outside it)."""
        return self.blocker(j, t) is not None

    def blocker(self, j: int, t: tuple):
        """What keeps ``t`` from being complete at operator ``j``: ``(i, u)``, a positive
        count of operator ``i`` of this scope at ``u`` (it stays in the way while that count
        is positive: :meth:`holds` checks it in O(1)); ``(-1, None)`` for a loop node's or an
        enclosing scope's pointstamp; ``None`` when ``t`` is complete."""
        sources = self.reach.sources[j]
        counts, children = self.counts, self.children
        back = None
        for i in self.active.intersection(sources):
            if sources[i] == FORWARD:
                target = t
            else:  # around the feedback, one iteration on: a time before t's last coordinate
                if back is None:
                    back = t[:-1] + (t[-1] - 1,)
                target = back
            child = children.get(i) if children else None
            if child is None:
                held = counts[i]
                for u in held:
                    # lexicographic order first (a necessary condition), then the product
                    # order, both in C
                    if u <= target and all(map(le, u, target)) and held[u] > 0:
                        return i, u
            elif child.holds_outer_before(target):
                return -1, None
        if self.parent is None:
            return None
        head = t[:-1]
        answer = self.outer.get(head)
        if answer is None:
            answer = self.outer[head] = self.parent.blocked(self.node, head)
        return (-1, None) if answer else None

    def holds(self, blocker) -> bool:
        """Whether a blocker :meth:`blocker` returned is still in the way (``False``: ask
        again; a loop's or an enclosing scope's pointstamp is always asked again)."""
        i, u = blocker
        return i >= 0 and self.counts[i].get(u, 0) > 0

    def frontier(self, j: int) -> Antichain:
        """The frontier at operator ``j``'s input: the minimal times at which input could
        still arrive there (this scope's times; the enclosing scopes' pointstamps show with
        zero loop coordinates).  For inspection; the scheduler asks :meth:`blocked`."""
        f = Antichain()
        for i, kind in self.reach.sources[j].items():
            for u in self.times(i):
                f.insert(u if kind == FORWARD else u[:-1] + (u[-1] + 1,))
        if self.parent is not None:
            for q in self.parent.frontier(self.node):
                f.insert(q + (0,))
        return f

    def is_empty(self) -> bool:
        return not self.active

    def clear(self) -> None:
        """Forget every count (a rolled-back step; nested trackers are cleared by their
        scopes)."""
        for counts in self.counts:
            counts.clear()
        self.active.clear()
        self.outer = {}
        if self.outbox is not None:
            self.outbox = ChangeBatch()
