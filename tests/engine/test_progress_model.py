"""A model test of progress tracking (``engine/runtime/progress/``; issue 32, "Correctness").

Random sequences of count updates are applied to a :class:`ScopeTracker` over a small random
scope graph (forward edges keep a time, feedback edges add one to its last coordinate) with a
nested child tracker (a loop shown in its parent as one node).  After every update the
tracker's answers are compared with could-result-in computed here by brute force over paths
with concrete times (never with :class:`Reachability`):

- *sound*: on the flattened graph (the loop's ops inside its parent, entering ops padding a
  time with a zero, leaving ops dropping the loop coordinate), ``blocked(j, t)`` is True
  whenever a positive pointstamp could result in input at ``j`` at a time ``<= t``: the
  frontier never passes a time still held;
- *exact* against the model the tracker documents (the loop as one node of its parent,
  holding an outer time while anything inside holds one with that prefix; a path through
  feedback edges advancing a time by one, however many it crosses): a tracker that blocked
  more would wait for nothing;
- ``frontier(j)`` says the same as ``blocked(j, .)``, the counts are the sums applied and the
  parent sees each outer time held inside once, at the loop's node.

Count deltas from several workers (:class:`ChangeBatch`) applied in any interleaving give the
same counts and frontiers, and :class:`Antichain`, :class:`MutableAntichain` and
:class:`ChangeBatch` keep their properties.  Planted bugs are caught
(``test_planted_progress_bugs_are_caught``).
"""
from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ddlab
from ddlab.engine.lattice import leq
from ddlab.engine.runtime.progress import (Antichain, ChangeBatch, MutableAntichain, Reachability,
                                   ScopeTracker, antichain, change_batch, reachability, tracker)

#: coordinates of the times the model uses and asks about: 0..R
R = 2


# -- random scopes -----------------------------------------------------------------------------
class Graph:
    """One scope's operators ``0..n-1`` in topological order: ``forward`` edges ``(i, j)``
    with ``i < j``, ``feedback`` edges ``(i, j)`` with ``j <= i``."""

    def __init__(self, n: int, forward, feedback):
        self.n, self.forward, self.feedback = n, sorted(set(forward)), sorted(set(feedback))

    def reach(self) -> Reachability:
        return Reachability(self.n, self.forward, self.feedback)

    def __repr__(self) -> str:
        return f"Graph({self.n}, forward={self.forward}, feedback={self.feedback})"


@st.composite
def graphs(draw, max_ops: int = 5) -> Graph:
    n = draw(st.integers(1, max_ops))
    later = [(i, j) for i in range(n) for j in range(i + 1, n)]
    back = [(i, j) for i in range(n) for j in range(i + 1)]
    forward = draw(st.lists(st.sampled_from(later), max_size=2 * n)) if later else []
    feedback = draw(st.lists(st.sampled_from(back), max_size=2))
    return Graph(n, forward, feedback)


class Model:
    """A parent scope of ``depth`` coordinates whose operator ``node`` is a nested loop with
    graph ``child``; ``enters`` are the loop's operators that read from the parent, ``leaves``
    those whose output leaves it (``node`` is ``None``: no loop)."""

    def __init__(self, depth, parent: Graph, node, child: Graph | None, enters, leaves):
        self.depth, self.parent, self.node, self.child = depth, parent, node, child
        self.enters, self.leaves = sorted(set(enters)), sorted(set(leaves))

    def trackers(self):
        """A parent tracker and (with a loop) the child tracker nested in it at ``node``."""
        p = ScopeTracker()
        p.resize(self.parent.n, self.parent.reach())
        if self.node is None:
            return p, None
        c = ScopeTracker(p, self.node)
        c.resize(self.child.n, self.child.reach())
        return p, c

    def locations(self) -> list:
        """Where pointstamps are held: the parent's operators but the loop's node (its
        pointstamps are the loop's, projected) and the loop's operators."""
        out = [("p", i) for i in range(self.parent.n) if i != self.node]
        if self.node is not None:
            out += [("c", i) for i in range(self.child.n)]
        return out

    def times(self, scope: str) -> list:
        depth = self.depth + (scope == "c")
        return list(itertools.product(range(R + 1), repeat=depth))

    def __repr__(self) -> str:
        return (f"Model(depth={self.depth}, parent={self.parent}, node={self.node}, "
                f"child={self.child}, enters={self.enters}, leaves={self.leaves})")


@st.composite
def models(draw, nested: bool | None = None) -> Model:
    depth = draw(st.integers(1, 2))
    parent = draw(graphs())
    if nested is None:
        nested = draw(st.booleans())
    if not nested:
        return Model(depth, parent, None, None, (), ())
    node = draw(st.integers(0, parent.n - 1))
    child = draw(graphs())
    ops = st.integers(0, child.n - 1)
    enters = draw(st.lists(ops, min_size=1, max_size=2))
    leaves = draw(st.lists(ops, min_size=1, max_size=2))
    return Model(depth, parent, node, child, enters, leaves)


@st.composite
def update_sequences(draw, model: Model, max_size: int = 12) -> list:
    """``(location, time, sign)`` instructions: +1 adds a pointstamp, -1 removes one if held
    (otherwise adds one), so counts stay non-negative as with one worker."""
    locs = model.locations()
    out = []
    for _ in range(draw(st.integers(1, max_size))):
        loc = draw(st.sampled_from(locs))
        t = draw(st.sampled_from(model.times(loc[0])))
        out.append((loc, t, draw(st.sampled_from([1, 1, -1, -1, 2]))))
    return out


# -- could-result-in by brute force over paths with concrete times ------------------------------
def _inc(t):
    return t[:-1] + (t[-1] + 1,)


def _edges(g: Graph, scope: str):
    for i, j in g.forward:
        yield (scope, i), (scope, j), lambda t: t
    for i, j in g.feedback:
        yield (scope, i), (scope, j), _inc


def flattened_edges(m: Model) -> dict:
    """The flattened graph: parent edges through the loop's node go into its entering ops
    (the time padded with a zero) and out of its leaving ops (the loop coordinate dropped)."""
    succ: dict = {}

    def add(a, b, fn):
        succ.setdefault(a, []).append((b, fn))

    k = m.node
    for a, b, fn in _edges(m.parent, "p"):
        if k is None or k not in (a[1], b[1]):
            add(a, b, fn)
            continue
        sources = [("c", x) for x in m.leaves] if a[1] == k else [a]
        targets = [("c", x) for x in m.enters] if b[1] == k else [b]
        for s in sources:
            for d in targets:
                def through(t, fn=fn, out=a[1] == k, into=b[1] == k):
                    t = fn(t[:-1] if out else t)
                    return t + (0,) if into else t
                add(s, d, through)
    if m.child is not None:
        for a, b, fn in _edges(m.child, "c"):
            add(a, b, fn)
    return succ


def reached(succ: dict, loc, u: tuple) -> dict:
    """``{location: [times]}`` at which a pointstamp at ``(loc, u)`` results in input along
    paths of one edge or more: a search over (location, time) states, a state skipped when
    one already seen at that location is ``<=`` it (every edge is monotone), and the outer
    coordinates, which no edge decreases, bounded by ``R``."""
    seen: dict = {}
    todo = [(b, fn(u)) for b, fn in succ.get(loc, ())]
    while todo:
        b, t = todo.pop()
        if any(c > R for c in t[:-1]) or (b[0] == "p" and t[-1] > R):
            continue
        if any(leq(s, t) for s in seen.get(b, ())):
            continue
        seen.setdefault(b, []).append(t)
        todo.extend((c, fn(t)) for c, fn in succ.get(b, ()))
    return seen


class Truth:
    """Could-result-in from the positive counts ``held`` (``{(location, time): count}``)."""

    def __init__(self, succ: dict, held: dict):
        self.at: dict = {}
        for (loc, u), n in held.items():
            if n > 0:
                for b, times in reached(succ, loc, u).items():
                    self.at.setdefault(b, []).extend(times)

    def blocked(self, loc, t) -> bool:
        return any(leq(s, t) for s in self.at.get(loc, ()))


def summaries(g: Graph) -> dict:
    """``{(i, j): increment}`` for every pair joined by a path of one edge or more, by a
    search over ``(operator, crossed a feedback edge)`` states: 0 when some path crosses no
    feedback edge, else 1.  That is the documented model: a path through several feedback
    edges counts as one increment (a conservative summary: it waits at most longer)."""
    out = {}
    for i in range(g.n):
        seen: set = set()
        todo = [(j, 0) for a, j in g.forward if a == i] + [(j, 1) for a, j in g.feedback if a == i]
        while todo:
            j, inc = todo.pop()
            if (j, inc) in seen:
                continue
            seen.add((j, inc))
            todo += [(b, inc) for a, b in g.forward if a == j]
            todo += [(b, 1) for a, b in g.feedback if a == j]
        for j, inc in seen:
            out[(i, j)] = min(inc, out.get((i, j), 1))
    return out


def modelled_truth(m: Model, held: dict):
    """``blocked(location, time)`` of the documented model: the loop's node holds each outer
    time some operator inside holds a time with that prefix; a pointstamp at ``(i, u)``
    blocks ``j`` at ``t`` when ``u``, advanced by the path summary from ``i`` to ``j``, is
    ``<= t``; inside the loop a time is also blocked when its outer time is blocked at the
    node."""
    positive = {(loc, u) for (loc, u), n in held.items() if n > 0}
    if m.node is not None:
        positive |= {(("p", m.node), u[:-1]) for loc, u in positive if loc[0] == "c"}
    paths = {"p": summaries(m.parent), "c": summaries(m.child) if m.child is not None else {}}

    def blocked(loc, t):
        scope, j = loc
        for (scope_i, i), u in positive:
            inc = paths[scope].get((i, j)) if scope_i == scope else None
            if inc is not None and leq(_inc(u) if inc else u, t):
                return True
        return scope == "c" and blocked(("p", m.node), t[:-1])
    return blocked


# -- checking a tracker against the model ------------------------------------------------------
def apply(p: ScopeTracker, c: ScopeTracker | None, loc, t, delta) -> None:
    (p if loc[0] == "p" else c).update(loc[1], t, delta)


def assert_sound(m: Model, p: ScopeTracker, c: ScopeTracker | None, held: dict) -> None:
    """No operator's time is passed while a positive pointstamp of ``held`` could still
    result in input there (could-result-in on the flattened graph)."""
    flat = Truth(flattened_edges(m), held)
    for loc in m.locations():
        tr = p if loc[0] == "p" else c
        for t in m.times(loc[0]):
            if flat.blocked(loc, t):
                assert tr.blocked(loc[1], t), (f"{loc} at {t}: a held pointstamp could still "
                                               f"result in input there, but blocked() is False")


def check_state(m: Model, p: ScopeTracker, c: ScopeTracker | None, held: dict) -> None:
    """Every property of the tracker pair holding ``held`` (one sweep's fresh answers)."""
    if c is not None:
        c.new_sweep()
    # the counts are the ones applied; the parent counts each held outer time once at the node
    for scope, tr in (("p", p), ("c", c)):
        if tr is None:
            continue
        want = [{} for _ in tr.counts]
        for (loc, u), n in held.items():
            if loc[0] == scope and n:
                want[loc[1]][u] = n
        active = {i for i, w in enumerate(want) if w}
        if scope == "p" and m.node is not None:
            # the loop's node keeps no counts: the parent reads them from the loop's tracker
            inside = {u[:-1] for (loc, u), n in held.items() if loc[0] == "c" and n > 0}
            assert set(tr.times(m.node)) == inside, f"p{m.node}: {set(tr.times(m.node))} != {inside}"
            if any(n for (loc, u), n in held.items() if loc[0] == "c"):
                active.add(m.node)
        assert tr.counts == want, f"{scope}: counts {tr.counts} != {want}"
        assert tr.active == active, f"{scope}: active {tr.active} != {active}"
    assert_sound(m, p, c, held)
    modelled = modelled_truth(m, held)
    for scope, tr, n in (("p", p, m.parent.n), ("c", c, m.child.n if c is not None else 0)):
        for j in range(n):
            frontier = tr.frontier(j)
            for t in m.times(scope):
                got = tr.blocked(j, t)
                want = modelled((scope, j), t)
                assert got == want, f"{scope}{j} at {t}: blocked() {got}, the model {want}"
                assert frontier.less_equal(t) == got, \
                    f"{scope}{j} at {t}: frontier {frontier} disagrees with blocked() {got}"


def run_updates(m: Model, updates) -> None:
    p, c = m.trackers()
    held: Counter = Counter()
    check_state(m, p, c, held)
    for loc, t, sign in updates:
        delta = -1 if sign < 0 and held[(loc, t)] > 0 else abs(sign)
        held[(loc, t)] += delta
        apply(p, c, loc, t, delta)
        check_state(m, p, c, held)


_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))


@settings(max_examples=60, **_SETTINGS)
@given(data=st.data())
def test_the_frontier_never_passes_a_held_time(data):
    m = data.draw(models(), label="model")
    run_updates(m, data.draw(update_sequences(m), label="updates"))


def test_a_loop_held_inside_blocks_its_next_outer_iteration():
    """A fixed case of what the random one checks: a loop on a parent cycle (its node feeds
    itself back through the parent's feedback) holds an inner pointstamp at outer time (0,);
    its own operators are blocked at outer time (1,), not at (0,), and the parent's node
    holds (0,) once."""
    m = Model(1, Graph(2, [(0, 1)], [(1, 0)]), 0, Graph(2, [(0, 1)], []), [0], [1])
    p, c = m.trackers()
    c.update(1, (0, 2), 1)
    c.new_sweep()
    assert p.counts[0] == {} and set(p.times(0)) == {(0,)}
    assert not c.blocked(0, (0, 2)) and c.blocked(0, (1, 0)) and not c.blocked(1, (0, 2))
    assert p.blocked(1, (0,)) and not p.blocked(0, (0,)) and p.blocked(0, (1,))
    run_updates(m, [(("c", 1), (0, 2), 1), (("c", 0), (0, 1), 1), (("c", 1), (0, 2), -1)])


# -- several workers ---------------------------------------------------------------------------
@st.composite
def worker_deltas(draw, m: Model, workers: int = 3) -> list:
    """Per worker, ``(location, time, delta)`` in its order, each delta's cancelling change
    on another worker (a message sent by one and taken by another), so the counts sum to
    non-negative totals."""
    locs = m.locations()
    per = [[] for _ in range(workers)]
    for _ in range(draw(st.integers(1, 10))):
        loc = draw(st.sampled_from(locs))
        t = draw(st.sampled_from(m.times(loc[0])))
        sender, taker = draw(st.integers(0, workers - 1)), draw(st.integers(0, workers - 1))
        per[sender].append((loc, t, 1))
        if draw(st.booleans()):
            per[taker].append((loc, t, -1))
    return per


def broadcast(per_worker, cuts) -> list:
    """Each worker's deltas accumulated in a :class:`ChangeBatch` and drained at its cuts:
    the batches it sends, in its order."""
    sent = []
    for deltas, cut in zip(per_worker, cuts):
        out, batch = [], ChangeBatch()
        for k, (loc, t, d) in enumerate(deltas):
            batch.update((loc, t), d)
            if k in cut or k == len(deltas) - 1:
                items = batch.drain()
                assert batch.is_empty() and all(d for _, d in items)
                out.append(items)
        sent.append(out)
    return sent


@settings(max_examples=40, **_SETTINGS)
@given(data=st.data())
def test_worker_deltas_sum_to_the_same_counts_in_any_interleaving(data):
    """The batches of three workers, applied in two random orders (a worker's batches in
    any order, as from several senders), leave equal counts and frontiers, those of every
    delta summed; after every batch the tracker is sound for the positive counts."""
    m = data.draw(models(), label="model")
    per = data.draw(worker_deltas(m), label="deltas")
    cuts = [data.draw(st.sets(st.integers(0, max(len(d) - 1, 0))), label="cuts") for d in per]
    batches = [b for sent in broadcast(per, cuts) for b in sent]
    total: Counter = Counter()
    for deltas in per:
        for loc, t, d in deltas:
            total[(loc, t)] += d
    finals = []
    for order in (data.draw(st.permutations(range(len(batches))), label="order")
                  for _ in range(2)):
        p, c = m.trackers()
        held: Counter = Counter()
        for b in order:
            for (loc, t), d in batches[b]:
                held[(loc, t)] += d
                apply(p, c, loc, t, d)
            if c is not None:
                c.new_sweep()
            assert_sound(m, p, c, held)
        assert held == total
        check_state(m, p, c, held)
        finals.append(([dict(x) for x in p.counts], c and [dict(x) for x in c.counts],
                       [p.frontier(j) for j in range(m.parent.n)]))
    assert finals[0] == finals[1]


def test_a_transiently_negative_count_blocks_nothing():
    t = ScopeTracker()
    t.resize(2, Reachability(2, [(0, 1)], []))
    t.update(0, (0,), -1)  # the consumption heard before the creation
    assert not t.frontier(1).less_equal((0,))
    assert not t.blocked(1, (0,))


def test_an_operator_does_not_spin_on_a_negative_count():
    flow = ddlab.Dataflow()
    xs = flow.input("xs")
    xs.map(lambda r: r).view()
    xs.insert([1])
    flow.step()
    op = next(op for op in flow.operators if op.kind == "map")
    op = op.fused_into or op
    runs = []
    original = type(op).run_at

    def run_at(self, t):
        runs.append(t)
        assert len(runs) < 100, f"step() took {t} {len(runs)} times"
        original(self, t)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(op), "run_at", run_at)
        flow.root.tracker.update(op.index, (0,), -1)  # the consumption heard before the creation
        op.step()
    assert len(runs) <= 1


# -- antichains and change batches -------------------------------------------------------------
TIMES = st.tuples(st.integers(0, 3), st.integers(0, 3))


@settings(max_examples=100, **_SETTINGS)
@given(data=st.data())
def test_antichain_keeps_the_minimal_times(data):
    times = data.draw(st.lists(TIMES, max_size=8), label="times")
    probe, other = data.draw(TIMES, label="probe"), data.draw(st.lists(TIMES, max_size=4))
    a = Antichain()
    for t in times:
        before = sorted(a)
        changed = a.insert(t)
        assert changed == (sorted(a) != before)
    minimal = {t for t in times if not any(leq(s, t) and s != t for s in times)}
    assert set(a) == minimal and len(a) == len(minimal)
    assert all(not leq(x, y) for x in a for y in a if x != y)
    assert a.less_equal(probe) == any(leq(t, probe) for t in times)
    assert Antichain(reversed(times)) == a
    assert a.dominates(Antichain(other)) == all(any(leq(t, o) for t in times) for o in other)


@settings(max_examples=100, **_SETTINGS)
@given(data=st.data())
def test_mutable_antichain_reads_only_positive_counts(data):
    updates = data.draw(st.lists(st.tuples(TIMES, st.integers(-2, 2)), max_size=12))
    probe = data.draw(TIMES, label="probe")
    m = MutableAntichain()
    total: Counter = Counter()
    for t, d in updates:
        m.update(t, d)
        total[t] += d
        assert m.counts == {u: n for u, n in total.items() if n}
        positive = [u for u, n in total.items() if n > 0]
        assert m.frontier() == Antichain(positive)
        assert m.less_equal(probe) == any(leq(u, probe) for u in positive)
        assert m.is_empty() == (not positive)
    other = MutableAntichain()
    for t, d in data.draw(st.permutations(updates), label="reordered"):
        other.update(t, d)
    assert other.counts == m.counts and other.frontier() == m.frontier()


@settings(max_examples=100, **_SETTINGS)
@given(data=st.data())
def test_change_batches_sum_in_any_order(data):
    parts = data.draw(st.lists(st.lists(st.tuples(st.sampled_from("abc"), st.integers(-2, 2)),
                                        max_size=6), max_size=4), label="parts")
    batches = []
    want: Counter = Counter()
    for part in parts:
        b = ChangeBatch()
        for key, d in part:
            b.update(key, d)
            want[key] += d
        assert 0 not in b.deltas.values()
        batches.append(b)
    want = {k: v for k, v in want.items() if v}
    for _ in range(2):
        merged = ChangeBatch()
        for b in data.draw(st.permutations(batches), label="order"):
            merged.extend(ChangeBatch(dict(b.deltas)))
        assert len(merged) == len(want)
        assert dict(merged.drain()) == want and merged.is_empty()


# -- planted bugs ------------------------------------------------------------------------------
def _plant(mp, plant: str) -> None:
    if plant == "feedback_ignored":
        original = reachability.Reachability.__init__

        def init(self, n, forward, feedback):
            original(self, n, forward, feedback)
            self.sources = [{i: k for i, k in s.items() if k != reachability.FEEDBACK}
                            for s in self.sources]
        mp.setattr(reachability.Reachability, "__init__", init)
    elif plant == "forward_and_feedback_swapped":
        mp.setattr(tracker, "FORWARD", reachability.FEEDBACK)
    elif plant == "direct_edges_only":
        def init(self, n, forward, feedback):
            self.sources = [{} for _ in range(n)]
            for i, j in forward:
                self.sources[j][i] = reachability.FORWARD
            for i, j in feedback:
                self.sources[j].setdefault(i, reachability.FEEDBACK)
        mp.setattr(reachability.Reachability, "__init__", init)
    elif plant == "loop_invisible_to_parent":
        mp.setattr(ScopeTracker, "outer_times", lambda self: iter(()))
        mp.setattr(ScopeTracker, "holds_outer_before", lambda self, target: False)
    elif plant == "outer_frontier_ignored":
        original_blocked = ScopeTracker.blocked

        def blocked(self, j, t):
            parent, self.parent = self.parent, None
            try:
                return original_blocked(self, j, t)
            finally:
                self.parent = parent
        mp.setattr(ScopeTracker, "blocked", blocked)
    elif plant == "lexicographic_only":
        mp.setattr(tracker, "le", lambda a, b: True)  # the product order's coordinates
    elif plant == "antichain_keeps_dominated":
        def insert(self, t):
            if t in self.elements:
                return False
            self.elements.append(t)
            return True
        mp.setattr(antichain.Antichain, "insert", insert)
    elif plant == "frontier_reads_zero_and_negative":
        mp.setattr(antichain.MutableAntichain, "frontier",
                   lambda self: Antichain(self.counts))
    elif plant == "change_batch_keeps_zeros":
        def update(self, key, delta):
            self.deltas[key] = self.deltas.get(key, 0) + delta
        mp.setattr(change_batch.ChangeBatch, "update", update)
    else:  # pragma: no cover
        raise AssertionError(plant)


PROGRESS_TESTS = {
    "frontier": test_the_frontier_never_passes_a_held_time,
    "workers": test_worker_deltas_sum_to_the_same_counts_in_any_interleaving,
    "antichain": test_antichain_keeps_the_minimal_times,
    "mutable": test_mutable_antichain_reads_only_positive_counts,
    "batches": test_change_batches_sum_in_any_order,
}
PLANTS = [("feedback_ignored", "frontier"), ("forward_and_feedback_swapped", "frontier"),
          ("direct_edges_only", "frontier"), ("loop_invisible_to_parent", "frontier"),
          ("outer_frontier_ignored", "frontier"), ("lexicographic_only", "frontier"),
          ("antichain_keeps_dominated", "antichain"),
          ("frontier_reads_zero_and_negative", "mutable"),
          ("change_batch_keeps_zeros", "batches"), ("loop_invisible_to_parent", "workers")]


@pytest.mark.parametrize("plant, test", PLANTS, ids=[f"{p}-{t}" for p, t in PLANTS])
def test_planted_progress_bugs_are_caught(plant, test):
    """Each plant makes its property test fail: a tracker that ignores feedback, swaps it
    with forward (a loop's operator blocks its own time), sees only direct edges, loses a
    loop's pointstamps or its enclosing frontier, or compares times only lexicographically;
    an antichain keeping dominated times; a frontier reading zero and negative counts; a
    change batch keeping zero sums."""
    found = settings(max_examples=300, database=None, phases=(Phase.generate,),
                     derandomize=True, **_SETTINGS)(
        given(data=st.data())(PROGRESS_TESTS[test].hypothesis.inner_test))
    with pytest.MonkeyPatch.context() as mp:
        _plant(mp, plant)
        with pytest.raises(AssertionError):
            found()
