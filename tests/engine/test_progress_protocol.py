"""A model test of progress tracking between workers (the protocol of the timely dataflow
paper, CACM Section 2.4, "Naiad's progress tracking protocol"), on the engine's own trackers.

Two to four simulated workers each keep a :class:`ScopeTracker` as their *view*: a change a
worker makes (:meth:`ScopeTracker.update`) is applied to its own view at once and kept in its
outbox; broadcasting sends the whole outbox, as one message, to every other worker over a
channel per pair that delivers in order; a delivered message is applied
(:meth:`ScopeTracker.apply`).  Data is exchanged apart from progress and may overtake it: a
worker sends a batch to any worker (the exchange by key), which can take it before the
sender's announcement of it has arrived, so its view counts the batch's consumption before its
creation (a negative count, which holds nothing).

Each pointstamp is a batch queued at an operator of a random scope graph (forward edges keep
the time, feedback edges add one to the last coordinate).  A batch is either a plain message,
taken whenever its worker likes, or a *notification*, taken only when the worker's view says
its time is complete at its operator (``not blocked``).  Taking one consumes it (-1) and sends
new batches downstream (+1 each, counted before the consumption is, in the same outbox).

Checked, over random interleavings of taking, broadcasting and delivering:

- *safety*: a notification is taken only when no positive pointstamp anywhere (the true sum
  over all workers, counts made or in flight) could result in input at its operator at a time
  ``<=`` its own (could-result-in by brute force over concrete paths, never with
  :class:`Reachability`);
- *liveness*: once every worker broadcasts and every message is delivered, the work drains to
  nothing, and every worker's view ends empty, with the frontier one worker alone would have.

A planted bug, announcing the consumptions of a step before the creations it made, is caught.
"""
from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from ddlab.engine.runtime.progress import ScopeTracker

from .test_progress_model import R, _SETTINGS, Model, Truth, flattened_edges, graphs


class Worker:
    """One worker: its view of the counts, its outbox, and the batches it holds to take."""

    def __init__(self, model: Model):
        self.view = ScopeTracker()
        self.view.resize(model.parent.n, model.parent.reach())
        self.view.count_for_workers(2)
        self.inbox: list = []  # (operator, time, notification?)


class System:
    """Workers, their channels and the true counts (every change made, announced or not)."""

    def __init__(self, model: Model, workers: int, rng: random.Random, split: bool = False):
        self.model, self.rng, self.split = model, rng, split
        self.succ = flattened_edges(model)
        self.workers = [Worker(model) for _ in range(workers)]
        self.channels = {(a, b): [] for a in range(workers) for b in range(workers) if a != b}
        self.truth: Counter = Counter()
        self.notifications = 0

    def seed(self, n: int) -> None:
        """``n`` initial batches, known to every worker (as before the computation starts)."""
        m = self.model
        for _ in range(n):
            i = self.rng.randrange(m.parent.n)
            t = tuple(self.rng.randint(0, 1) for _ in range(m.depth))
            note = self.rng.random() < 0.5
            owner = self.rng.choice(self.workers)
            owner.inbox.append((i, t, note))
            self.truth[(i, t)] += 1
            for w in self.workers:
                w.view.apply(i, t, 1)

    # -- actions --------------------------------------------------------------------------
    def takeable(self, w: Worker) -> list:
        return [k for k, (i, t, note) in enumerate(w.inbox)
                if not note or not w.view.blocked(i, t)]

    def take(self, wi: int, k: int) -> None:
        w = self.workers[wi]
        i, t, note = w.inbox.pop(k)
        if note:
            self.check_safe(i, t)
            self.notifications += 1
        for (_, j), fn in self.succ.get(("p", i), ()):
            u = fn(t)
            if u[-1] > R or self.rng.random() < 0.3:
                continue
            target = self.rng.randrange(len(self.workers))
            self.truth[(j, u)] += 1
            w.view.update(j, u, 1)
            self.workers[target].inbox.append((j, u, self.rng.random() < 0.5))
        self.truth[(i, t)] -= 1
        w.view.update(i, t, -1)

    def broadcast(self, wi: int) -> None:
        items = self.workers[wi].view.outbox.drain()
        if not items:
            return
        if self.split:  # the planted bug: consumptions announced before the creations
            parts = [[x for x in items if x[1] < 0], [x for x in items if x[1] > 0]]
        else:
            parts = [items]
        for part in parts:
            if part:
                for (a, _b), queue in self.channels.items():
                    if a == wi:
                        queue.append(part)

    def deliver(self, channel) -> None:
        part = self.channels[channel].pop(0)
        view = self.workers[channel[1]].view
        for (i, t), d in part:
            view.apply(i, t, d)

    # -- checks ---------------------------------------------------------------------------
    def check_safe(self, i: int, t: tuple) -> None:
        held = {(("p", j), u): n for (j, u), n in self.truth.items() if n > 0}
        assert not Truth(self.succ, held).blocked(("p", i), t), (
            f"notification at operator {i}, time {t} taken while a pointstamp that could "
            f"result in it is held: {sorted(held)}")

    def step_randomly(self) -> bool:
        rng = self.rng
        choices = [("take", wi, k) for wi, w in enumerate(self.workers)
                   for k in self.takeable(w)]
        choices += [("broadcast", wi) for wi, w in enumerate(self.workers)
                    if not w.view.outbox.is_empty()]
        choices += [("deliver", c) for c, q in self.channels.items() if q]
        if not choices:
            return False
        action = rng.choice(choices)
        if action[0] == "take":
            self.take(action[1], action[2])
        elif action[0] == "broadcast":
            self.broadcast(action[1])
        else:
            self.deliver(action[1])
        return True

    def drain(self) -> None:
        """Everyone broadcasts, every message is delivered, then what can be taken is: until
        nothing is left.  A round in which nothing could be taken but batches remain is a
        deadlock (liveness fails)."""
        for _ in range(10_000):
            for wi in range(len(self.workers)):
                self.broadcast(wi)
            for c in self.channels:
                while self.channels[c]:
                    self.deliver(c)
            if not any(w.inbox for w in self.workers):
                return
            took = False
            for wi, w in enumerate(self.workers):
                ks = self.takeable(w)
                if ks:
                    self.take(wi, ks[0])
                    took = True
            assert took, f"deadlock: {[w.inbox for w in self.workers]} held, nothing takeable"
        raise AssertionError("the work did not drain")


def _run(model, workers, seed, steps, split=False) -> System:
    s = System(model, workers, random.Random(seed), split)
    s.seed(3)
    for _ in range(steps):
        if not s.step_randomly():
            break
    s.drain()
    return s


@st.composite
def flat_models(draw) -> Model:
    return Model(draw(st.integers(1, 2)), draw(graphs()), None, None, (), ())


@settings(max_examples=100, **_SETTINGS)
@given(model=flat_models(), workers=st.integers(2, 4), seed=st.integers(0, 2**32 - 1),
       steps=st.integers(0, 80))
def test_no_notification_while_an_earlier_pointstamp_is_held_anywhere(model, workers, seed,
                                                                      steps):
    s = _run(model, workers, seed, steps)
    # liveness: drained, and every view is what one worker alone would hold: nothing
    assert all(n == 0 for n in s.truth.values())
    for w in s.workers:
        assert all(not c for c in w.view.counts)
        assert w.view.is_empty()
        assert all(not w.view.blocked(j, (R,) * model.depth) for j in range(model.parent.n))


def test_announcing_consumptions_before_creations_is_caught():
    """The planted bug breaks safety on some interleaving (so the check above can fail)."""
    from .test_progress_model import Graph

    model = Model(1, Graph(3, [(0, 1), (1, 2)], []), None, None, (), ())
    failures = 0
    for seed in range(300):
        try:
            _run(model, 3, seed, 60, split=True)
        except AssertionError as err:
            assert "taken while a pointstamp" in str(err)
            failures += 1
    assert failures, "the planted bug was never caught"
    for seed in range(300):  # and the protocol itself never fails on the same runs
        _run(model, 3, seed, 60)
