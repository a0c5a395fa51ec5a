"""Backward tracing: from one output record to input records sufficient to produce it.

The rules follow Chothia, Liagouris, McSherry and Roscoe, "Explaining Outputs in Modern Data
Analytics" (VLDB 2016): a record is explained operator by operator towards the inputs, each
operator asked which of its input records at that time justify the output record.

- *Present* demands ("record r has a multiplicity of this sign at time t") follow one
  derivation: a linear operator one input record (user functions evaluated forward over the
  candidates), a concat one input, a join one pair, ``min``/``max``/``top_k``/``distinct``
  the record itself (the winner: the rest of its group is not needed), a union one side.
- *Exact* demands ("the collection restricted to these records/keys at time t") follow every
  derivation: ``count``, ``sum``, user reduces, cogroups, thresholds and ``except`` need their
  whole group, so their group is demanded exactly, and exactness propagates upstream.
- Inside loops a present demand moves to the *first* time (lexicographically, over the loop
  coordinates) at which the record is present, as the paper explains a record at its first
  iteration: for label propagation that walks a shortest path back to the seed.  An exact
  demand moves to the last time its restricted collection changed (a fixed point at iteration
  11, not at "infinity").

Among equally early candidates, one already used by the explanation is preferred (so the
seed of a path reuses the path's own edge).  The result is a DAG of derivation steps and the
input records at its leaves; :mod:`.explain` checks it by replaying the program on them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..operators.aggregates import DISTINCT, Extreme, SetOperation, TopK
from .history import (INF, Histories, key_pattern, leq, lub, normalized, record_pattern)

#: operators that pass each record through unchanged (same record, same time)
PASS = {"arrange", "consolidate", "inspect", "choose", "filter", "filter_columns", "view"}
#: operators presenting their input's whole collection unchanged (an enter pads the times
#: with zeros): a demand on one is a demand on its input, and the trace looks through them
#: (their steps would be plumbing nobody is shown, each costing a read)
THROUGH = {"arrange", "consolidate", "inspect", "choose", "view", "enter"}


def through(op, t: tuple):
    """``(the operator whose collection op presents, t at its depth)``."""
    while op.kind in THROUGH:
        up = op.inputs[0]
        if op.kind == "enter":
            t = t[:up.scope.depth - 1]
        op = up
    return op, t


@dataclass
class Step:
    """One node of the derivation: an operator, what was demanded of it, where it came from."""

    key: tuple
    op: object
    exact: bool
    records: list            # the record (present) or the records of the group (exact)
    time: tuple              # inner time (loop coordinates), () outside loops
    sign: int = 1
    note: str = ""
    children: list = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.op.label


class Tracer:
    """One backward trace over one flow's retained state."""

    def __init__(self, flow, hist: Histories | None = None, exact_only: bool = False):
        self.flow = flow
        self.hist = hist or Histories(flow)
        self.exact_only = exact_only
        self.steps: dict = {}
        self.facts: dict = {}      # input op id -> {record: multiplicity}
        self.root_key = None

    # -- driver ------------------------------------------------------------------------------
    def run(self, op, record) -> None:
        """Trace ``record`` of root-scope operator ``op`` (present now, at the last epoch)."""
        if self.exact_only:
            first = ("E", op, record_pattern([record]), ())
        else:
            sign = 1 if self.hist.content(op, record_pattern([record]), ())[record] > 0 else -1
            first = ("P", op, record, (), sign)
        stack = [(first, None)]
        while stack:
            demand, parent = stack.pop()
            if parent is not None:     # the root stays what was asked about
                demand = _looked_through(demand)
            key, children = self._visit(demand)
            if parent is None:
                self.root_key = key
            elif key is not None and key not in self.steps[parent].children:
                self.steps[parent].children.append(key)
            for child in reversed(children):
                stack.append((child, key))

    def _visit(self, demand):
        """Normalise a demand, record its step, return ``(key, child demands)`` (the
        children only the first time the step is seen)."""
        if demand[0] == "P":
            _, op, rec, t, sign = demand
            if len(t):
                u = self.hist.first(op, rec, t, sign)
                if u is None:
                    raise LookupError(f"{op.label}: {rec!r} is not present at {t}")
            else:
                u = ()
            key = ("P", op.id, rec, u, sign)
            if key in self.steps:
                return key, []
            step = Step(key, op, False, [rec], u, sign)
            self.steps[key] = step
            return key, self._present(step, op, rec, u, sign)
        _, op, pattern, t = demand
        ups = self.hist.updates(op, pattern)
        u = normalized(ups, t) if len(t) else (() if ups else None)
        if u is None:
            return None, []
        key = ("E", op.id, pattern, u)
        if key in self.steps:
            return key, []
        content = self.hist.content(op, pattern, u)
        if not content:
            return None, []
        step = Step(key, op, True, sorted(content, key=repr), u)
        self.steps[key] = step
        return key, self._exact(step, op, pattern, u, content)

    # -- choosing among candidate derivations -------------------------------------------------
    def _rank(self, op, rec, t, sign):
        """Sort key of a candidate: earliest first (at ``op``'s depth), then one already in
        the explanation."""
        source, ts = through(op, t)
        u = self.hist.first(source, rec, ts, sign)
        if u is None:
            return None
        used = ("P", source.id, rec, u, sign) in self.steps
        return (u + (0,) * (len(t) - len(ts)), 0 if used else 1, repr(rec))

    # -- present demands ------------------------------------------------------------------------
    def _present(self, step, op, rec, t, sign):
        kind = op.kind
        P = lambda o, r, tt, s=sign: ("P", o, r, tt, s)  # noqa: E731
        if kind == "input":
            mult = self.hist.content(op, record_pattern([rec]), ())[rec]
            self.facts.setdefault(op.id, {})[rec] = mult
            step.note = f"input record (multiplicity {mult})"
            return []
        if kind in PASS:
            return [P(op.inputs[0], rec, t)]
        if kind == "negate":
            return [P(op.inputs[0], rec, t, -sign)]
        if kind == "enter":
            up = op.inputs[0]
            return [P(up, rec, t[:up.scope.depth - 1])]
        if kind == "leave":
            up = op.inputs[0]
            pad = (INF,) * (up.scope.depth - op.scope.depth)
            return [P(up, rec, t + pad)]
        if kind == "feedback":
            return [P(op.inputs[0], rec, t[:-1] + (t[-1] - 1,))]
        if kind == "ingress":
            return [P(op.inputs[0], rec, t[:-1])]
        if kind == "concat":
            ranked = [(self._rank(up, rec, t, sign), up) for up in op.inputs]
            ranked = [(r, up) for r, up in ranked if r is not None]
            if not ranked:
                raise LookupError(f"{op.label}: no input holds {rec!r}")
            up = min(ranked, key=lambda x: x[0])[1]
            return [P(up, rec, t)]
        if kind in ("project", "map", "flat_map", "map_columns"):
            return [self._linear_choice(step, op, rec, t, sign)]
        if kind == "join":
            return self._join(step, op, rec, t, sign)
        if kind == "reduce":
            return self._reduce_present(step, op, rec, t, sign)
        raise LookupError(f"explanations do not know operator kind {kind!r}")

    def _linear_choice(self, step, op, rec, t, sign):
        """One upstream record whose image under a linear operator is ``rec``."""
        up = op.inputs[0]
        if op.kind == "project":
            from .history import push_project

            cands = self.hist.content(up, push_project(record_pattern([rec]), op.columns), t)
            counts = {x: 1 for x in cands if tuple(x[j] for j in op.columns) == rec}
        else:
            counts = self.hist.preimages(op).get(rec, {})
            cands = self.hist.content(up, record_pattern(counts), t) if counts else {}
        ranked = []
        for x in cands:
            n = counts.get(x, 0)
            if n and cands[x] * n * sign > 0:
                r = self._rank(up, x, t, 1 if cands[x] > 0 else -1)
                if r is not None:
                    ranked.append((r, x))
        if not ranked:
            raise LookupError(f"{op.label}: no input record maps to {rec!r}")
        r, x = min(ranked, key=lambda z: z[0])
        step.note = f"from {x!r}" + (f" (one of {len(ranked)})" if len(ranked) > 1 else "")
        return ("P", up, x, t, 1 if cands[x] > 0 else -1)

    def _pairs(self, op, pattern, t):
        """``[(left record, mult, right record, mult, output)]`` of the join at ``t`` whose
        output matches ``pattern`` (sides read as the join's history reads them)."""
        from .history import accumulate, join_layout, join_output, join_sides, push_join

        layout = join_layout(op, self.hist)
        if layout is None:
            return []
        nkey, nleft, _ = layout
        left_op, right_op = op.inputs
        out = []
        for conj in ([()] if pattern is None else pattern):
            pushed = push_join(op, conj, nkey, nleft)
            if pushed is None:
                continue
            lups, rups = join_sides(self.hist, op, *pushed, nkey)
            left, right = accumulate(lups, t), accumulate(rups, t)
            by_key: dict = {}
            for r, m in right.items():
                by_key.setdefault(r[:nkey], []).append((r, m))
            test = self.hist.matcher(frozenset([conj])) if conj else None
            for lrec, lm in left.items():
                for rrec, rm in by_key.get(lrec[:nkey], ()):
                    res = join_output(op, nkey, nleft, lrec, rrec)
                    if test is None or test(res):
                        out.append((lrec, lm, rrec, rm, res))
        return list(dict.fromkeys(out))

    def _join(self, step, op, rec, t, sign):
        left_op, right_op = op.inputs
        ranked = []
        for lrec, lm, rrec, rm, _ in self._pairs(op, record_pattern([rec]), t):
            if lm * rm * sign <= 0:
                continue
            ls, rs = (1 if lm > 0 else -1), (1 if rm > 0 else -1)
            lr, rr = self._rank(left_op, lrec, t, ls), self._rank(right_op, rrec, t, rs)
            if lr is None or rr is None:
                continue
            ranked.append(((lub(lr[0], rr[0]), lr[1] + rr[1], lr[2], rr[2]), lrec, ls, rrec, rs))
        if not ranked:
            raise LookupError(f"{op.label}: no pair of input records makes {rec!r}")
        _, lrec, ls, rrec, rs = min(ranked, key=lambda z: z[0])
        step.note = f"{lrec!r} \u22c8 {rrec!r}" + (
            f" (one of {len(ranked)} pairs)" if len(ranked) > 1 else "")
        # the right side first: in a loop it is usually the constant side (the edges), so
        # the chain on the left, explored after it, can reuse what the right side used
        return [("P", right_op, rrec, t, rs), ("P", left_op, lrec, t, ls)]

    def _reduce_present(self, step, op, rec, t, sign):
        logic = op.logic
        ins = op.inputs
        nkey = op.nkey
        if self.exact_only:
            return self._exact_groups(step, op, [rec], t)
        if isinstance(logic, (Extreme, TopK)) or (logic is DISTINCT and sign > 0):
            group = self.hist.content(ins[0], key_pattern([rec], nkey or len(rec)), t)
            what = {"min": "smallest", "max": "largest"}.get(logic.name, "kept")
            step.note = (f"the {what} of {len(group)} record(s) of its group" if nkey
                         else "present upstream")
            return [("P", ins[0], rec, t, 1)]
        if isinstance(logic, SetOperation):
            a = self.hist.content(ins[0], record_pattern([rec]), t)[rec]
            b = self.hist.content(ins[1], record_pattern([rec]), t)[rec]
            if logic.name == "union" and sign > 0:
                ranked = [(self._rank(up, rec, t, 1), up) for up, m in zip(ins, (a, b)) if m > 0]
                ranked = [(r, up) for r, up in ranked if r is not None]
                up = min(ranked, key=lambda x: x[0])[1]
                step.note = "the larger multiplicity of the two sides"
                return [("P", up, rec, t, 1)]
            if logic.name == "intersect" and sign > 0:
                step.note = "present on both sides"
                return [("P", ins[0], rec, t, 1), ("P", ins[1], rec, t, 1)]
            if logic.name == "intersect":
                up = ins[0] if a < 0 else ins[1]
                return [("P", up, rec, t, -1)]
        return self._exact_groups(step, op, [rec], t)

    def _exact_groups(self, step, op, records, t):
        """Every input of a reduce restricted to the groups of ``records``, exactly."""
        width = op.nkey or len(records[0])
        keys = {r[:width] for r in records}
        pattern = key_pattern(keys, width)
        step.note = "its whole group" if len(keys) == 1 else f"its {len(keys)} whole groups"
        return [("E", up, pattern, t) for up in op.inputs]

    # -- exact demands ---------------------------------------------------------------------------
    def _exact(self, step, op, pattern, t, content):
        kind = op.kind
        E = lambda o, p, tt: ("E", o, p, tt)  # noqa: E731
        if kind == "input":
            facts = self.facts.setdefault(op.id, {})
            facts.update(content)
            step.note = f"{len(content)} input record(s), all of them"
            return []
        if kind in PASS or kind in ("negate", "concat"):
            return [E(up, pattern, t) for up in op.inputs]
        if kind == "enter":
            up = op.inputs[0]
            return [E(up, pattern, t[:up.scope.depth - 1])]
        if kind == "leave":
            up = op.inputs[0]
            return [E(up, pattern, t + (INF,) * (up.scope.depth - op.scope.depth))]
        if kind == "feedback":
            return [E(op.inputs[0], pattern, t[:-1] + (t[-1] - 1,))]
        if kind == "ingress":
            return [E(op.inputs[0], pattern, t[:-1])]
        if kind == "project":
            from .history import push_project

            return [E(op.inputs[0], push_project(pattern, op.columns), t)]
        if kind in ("map", "flat_map", "map_columns"):
            up = op.inputs[0]
            xs = {x for y, into in self.hist.preimages(op).items()
                  if self.hist.matches(y, pattern) for x in into}
            hit = list(self.hist.content(up, record_pattern(sorted(xs, key=repr)), t)) \
                if xs else []
            return [E(up, record_pattern(hit), t)] if hit else []
        if kind == "join":
            pairs = self._pairs(op, pattern, t)
            keys = {lrec[:op.nkey] for lrec, _, _, _, _ in pairs}
            kp = key_pattern(keys, op.nkey)
            step.note = f"{len(keys)} whole key group(s) of both sides"
            return [E(up, kp, t) for up in op.inputs] if keys else []
        if kind == "reduce":
            width = op.nkey or len(next(iter(content)))
            keys = {r[:width] for r in content}
            kp = key_pattern(keys, width)
            step.note = f"{len(keys)} whole group(s)"
            return [E(up, kp, t) for up in op.inputs]
        raise LookupError(f"explanations do not know operator kind {kind!r}")


def _looked_through(demand):
    """A demand on an operator of :data:`THROUGH` as the demand on what it presents."""
    if demand[1].kind not in THROUGH:
        return demand
    op, t = through(demand[1], demand[3])
    return (demand[0], op, demand[2], t) + tuple(demand[4:])


__all__ = ["Tracer", "Step", "PASS", "THROUGH", "through", "leq"]
