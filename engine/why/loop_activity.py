"""``flow.why_loop()``: why a loop ran as many iterations as it did in the last epoch.

Per loop: the iterations it used, the records in difference per iteration (what its feedback
carried: the same count as :meth:`Dataflow.loop_differences`, the CIDR paper's Figure 1
metric), the updates each operator inside it emitted per iteration (from the always-on
statistics), and the *keys that kept changing longest*: the keys (first fields) of the
records in difference, ranked by the number of iterations in which they changed, with the
values the loop held for them at each iteration.

The statistics count updates but do not keep them, so the keys are found by replaying the
last two epochs of the loop's upstream from scratch (:mod:`.replay`): the previous epoch's
inputs, then the last move's changes, with a tap on every feedback edge during the second.  The updates a
feedback carries at an iteration of the second epoch are determined by the loop's contents
at that iteration and the one before, in both epochs (Naiad report, section 3.2: the
difference at ``(e, i)`` is the Moebius inversion of the collections around it), so the
replay sees exactly the updates the live flow saw; the counts are checked against the
statistics (``agrees``).  The values over the iterations are read from the live flow's
traces.  The replay costs a from-scratch run of the loop's upstream: fast
on a notebook's windows, seconds on graphs of millions of edges.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from ..columns import decode_rows
from ..errors import DataflowError
from ..lattice import display_time
from .explain import previous_inputs
from .history import INF, Histories, accumulate, as_record, key_pattern, user_form
from .replay import Replay


@dataclass
class LoopActivity:
    """One loop's activity in one epoch."""

    loop: str
    epoch: int
    iterations: pd.DataFrame     # iteration (position), time (coordinate), records, keys
    per_operator: pd.DataFrame   # operator, position, updates (emitted inside the loop)
    top_keys: pd.DataFrame       # key, iterations changed, first, last, values over iterations
    agrees: bool = True          # the replay's counts equal flow.loop_differences
    notes: list = field(default_factory=list)
    #: coordinate (as shown) -> the keys whose records changed there (sorted): which keys
    #: did the work at a cell (last epoch, iteration) of the lattice grid
    keys_at: dict = field(default_factory=dict)

    @property
    def used(self) -> int:
        """Iterations listed in this epoch: every one up to the last with records in
        difference (per priority class), as :meth:`Dataflow.loop_differences` lists them."""
        return len(self.iterations)

    @property
    def busy(self) -> int:
        """Iterations whose feedback carried records in this epoch."""
        return int((self.iterations["records"] > 0).sum())

    def summary(self) -> str:
        if not self.used:
            return f"loop {self.loop}: no records in difference in epoch {self.epoch}"
        first, last = self.iterations["time"].iloc[0], self.iterations["time"].iloc[-1]
        total = int(self.iterations["records"].sum())
        empty = self.used - self.busy
        text = (f"loop {self.loop} in epoch {self.epoch}: iterations {first}..{last} "
                f"({self.busy} with records in difference" +
                (f", {empty} empty" if empty else "") + f"), {total:,} records in difference")
        if len(self.top_keys):
            key = self.top_keys["key"].tolist()[0]
            n = int(self.top_keys["iterations changed"].iloc[0])
            text += f"; key {key!r} changed in {n} of them (the longest)"
        return text

    def __repr__(self) -> str:
        return "\n".join([self.summary(), self.iterations.to_string(index=False),
                          "keys that kept changing longest:",
                          self.top_keys.to_string(index=False)] + self.notes)


def _feedbacks(flow, loop: str) -> list:
    return [op for op in flow.operators if op.kind == "feedback" and op.scope.path == loop]


def _user_key(record):
    return record[0] if isinstance(record, tuple) else record


def loop_activity(flow, loop: str | None = None, top: int = 10, max_values: int = 4
                  ) -> list[LoopActivity]:
    """The activity of ``loop`` (a scope path such as ``"root/cc"``; default: every loop)
    in the last completed epoch; ``top`` keys per loop, each with at most ``max_values``
    records shown per iteration."""
    if flow.epoch == 0:
        raise DataflowError("no epoch has completed yet: step() first")
    loops = flow.loops()
    if loop is not None:
        if loop not in loops:
            raise DataflowError(f"no loop {loop!r}; loops: {', '.join(loops) or 'none'}")
        loops = [loop]
    epoch = flow.epoch - 1
    feedback_ops = {path: _feedbacks(flow, path) for path in loops}
    include = [op for ops in feedback_ops.values() for op in ops]
    if not include:
        return []
    cone = set()
    for op in include:
        cone |= flow.upstream(op)
    replay = Replay(flow, include=include)
    taps = {path: [(fb.inputs[0], replay.tap(fb.inputs[0])) for fb in ops]
            for path, ops in feedback_ops.items()}
    if epoch > 0:      # the previous epoch's inputs untapped, then the last move tapped
        before, changes = previous_inputs(flow, cone)
        replay.step(before)
        _activate(taps)
        replay.step(changes)
    else:
        _activate(taps)
        replay.step(_current(flow, cone))
    hist = Histories(flow, budget=None)
    return [_activity(flow, hist, path, path.count("/"), epoch, taps[path],
                      replay.flow.interner, top, max_values) for path in loops]


def _sorted(values) -> list:
    try:
        return sorted(values)
    except TypeError:       # keys of mixed types
        return sorted(values, key=repr)


def _activate(taps) -> None:
    for pairs in taps.values():
        for _, tap in pairs:
            tap.active = True


def _current(flow, cone) -> dict:
    hist = Histories(flow, budget=None)
    return {o.name: dict(hist.content(o, None, ())) for o in flow.operators
            if o.id in cone and o.kind == "input"}


def _tapped(tap, interner, depth):
    """``[(record, loop coordinate, diff)]`` a tap saw (the feedback's input in the epoch)."""
    out = []
    for t, batch in tap.seen:
        rows = decode_rows(batch.cols, batch.kinds, interner)
        c = t[depth]
        out.extend((r, c, d) for r, d in zip(rows, batch.diffs.tolist()))
    return out


def _activity(flow, hist, path, depth, epoch, pairs, interner, top, max_values) -> LoopActivity:
    kind = next(op.scope.kind for op, _ in pairs)
    def show(c):
        return display_time((c,), (kind,))[0]
    # the feedback runs at the body's coordinate c (and delivers at c + 1): numbered by c,
    # as flow.loop_differences and flow.stats number them
    per_coord: Counter = Counter()
    keys_at: dict = {}
    for _, tap in pairs:
        for rec, c, _ in _tapped(tap, interner, depth):
            per_coord[c] += 1
            keys_at.setdefault(c, set()).add(_user_key(rec))
    coords = sorted(per_coord)
    # every iteration up to the last busy one (per priority class), the empty ones with 0,
    # as flow.loop_differences lists them; the replay's counts must be the statistics'
    stats = flow.loop_differences(epoch, path)
    shown = {show(c): c for c in coords}
    times = stats["time"].tolist() if "time" in stats else [show(c) for c in coords]
    iterations = pd.DataFrame({
        "iteration": range(len(times)), "time": times,
        "records": [per_coord.get(shown.get(t), 0) for t in times],
        "keys": [len(keys_at.get(shown.get(t), ())) for t in times]})
    agrees = stats["records"].tolist() == iterations["records"].tolist() and \
        set(shown) <= set(times)
    frame = flow.stats(epoch)
    inside = frame[frame["scope"] == path]
    per_op = (inside.groupby(["operator", "iteration"], sort=True)["out"].sum().reset_index()
              .rename(columns={"out": "updates"}))
    changed: Counter = Counter()
    span: dict = {}
    for c in coords:
        for k in keys_at[c]:
            changed[k] += 1
            lo, hi = span.get(k, (c, c))
            span[k] = (min(lo, c), max(hi, c))
    ranked = sorted(changed, key=lambda k: (-changed[k], repr(k)))[:top]
    values = _values_over(hist, [op for op, _ in pairs], depth, ranked, coords, max_values,
                          show)
    top_keys = pd.DataFrame({
        "key": ranked,
        "iterations changed": [changed[k] for k in ranked],
        "first": [show(span[k][0]) for k in ranked],
        "last": [show(span[k][1]) for k in ranked],
        "values": [values.get(k, []) for k in ranked]})
    notes = [] if agrees else [
        f"the replay's counts {iterations['records'].tolist()} differ from "
        f"flow.loop_differences {stats['records'].tolist()}"]
    shown_keys = {show(c): _sorted(keys_at[c]) for c in coords}
    return LoopActivity(path, epoch, iterations, per_op, top_keys, agrees, notes, shown_keys)


def _values_over(hist, bodies, depth, keys, coords, max_values, show) -> dict:
    """For each key: ``[(coordinate, [records the body holds for it there])]`` where that
    changed, read from the live flow's traces at the last epoch (in a nested loop, with the
    outer loops at their fixed points)."""
    if not keys:
        return {}
    out: dict = {k: [] for k in keys}
    pattern = key_pattern([as_record(k) for k in keys], 1)
    for body in bodies:
        ups = hist.updates(body, pattern)
        width = body.scope.depth - 1
        for k in keys:
            mine = {(rec, t): d for (rec, t), d in ups.items() if _user_key(user_form(rec)) == k}
            seq = out[k]
            for c in coords:
                at = (INF,) * (depth - 1) + (c,) + (INF,) * (width - depth)
                held = accumulate(mine, at)
                present = sorted((user_form(r) for r, m in held.items() if m > 0), key=repr)
                present = present[:max_values]
                if not seq or seq[-1][1] != present:
                    seq.append((show(c), present))
    return out


__all__ = ["LoopActivity", "loop_activity"]
