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

Each operator carries its own rule (its class's ``explain_present`` and ``explain_exact``
hooks, :class:`~ddlab.engine.operators.base.Operator`): the tracer here is the driver, and
offers those hooks the choices several rules share (:meth:`Tracer.earliest`,
:meth:`Tracer.linear_choice`, :meth:`Tracer.pairs`, :meth:`Tracer.exact_groups`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .history import (Histories, accumulate, join_layout, join_output, join_sides, key_pattern,
                      leq, normalized, push_join, record_pattern)


def through(op, t: tuple):
    """``(the operator whose collection op presents, t at its depth)``: through the
    operators presenting their input's whole collection unchanged (``presents_input``: an
    enter pads the times with zeros), whose steps would be plumbing nobody is shown, each
    costing a read."""
    while op.presents_input:
        t = op.upstream_time(t)
        op = op.inputs[0]
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

    def __init__(self, flow, hist: Histories | None = None, exact_only: bool = False,
                 witnesses: bool = True):
        self.flow = flow
        self.hist = hist or Histories(flow)
        self.exact_only = exact_only
        self.witnesses = witnesses and not exact_only
        #: the labels of the operators whose witness (:mod:`.witness`) gave a derivation
        self.witnessed: list = []
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

    # -- choosing among candidate derivations (for the operators' hooks) -----------------------
    def rank(self, op, rec, t, sign):
        """Sort key of a candidate: earliest first (at ``op``'s depth), then one already in
        the explanation."""
        source, ts = through(op, t)
        u = self.hist.first(source, rec, ts, sign)
        if u is None:
            return None
        used = ("P", source.id, rec, u, sign) in self.steps
        return (u + (0,) * (len(t) - len(ts)), 0 if used else 1, repr(rec))

    def earliest(self, ups, rec, t, sign):
        """The one of ``ups`` holding ``rec`` (with sign ``sign``) earliest (:meth:`rank`),
        or ``None`` when none holds it."""
        ranked = [(self.rank(up, rec, t, sign), up) for up in ups]
        ranked = [(r, up) for r, up in ranked if r is not None]
        return min(ranked, key=lambda x: x[0])[1] if ranked else None

    def linear_choice(self, step, op, rec, t, sign, cands, counts):
        """One upstream record whose image under a linear operator is ``rec``, among
        ``cands`` (``{input record: multiplicity}`` at ``t``) of which ``counts`` says how
        many times each maps to ``rec``."""
        up = op.inputs[0]
        ranked = []
        for x in cands:
            n = counts.get(x, 0)
            if n and cands[x] * n * sign > 0:
                r = self.rank(up, x, t, 1 if cands[x] > 0 else -1)
                if r is not None:
                    ranked.append((r, x))
        if not ranked:
            raise LookupError(f"{op.label}: no input record maps to {rec!r}")
        r, x = min(ranked, key=lambda z: z[0])
        step.note = f"from {x!r}" + (f" (one of {len(ranked)})" if len(ranked) > 1 else "")
        return ("P", up, x, t, 1 if cands[x] > 0 else -1)

    def pairs(self, op, pattern, t):
        """``[(left record, mult, right record, mult, output)]`` of the join at ``t`` whose
        output matches ``pattern`` (sides read as the join's history reads them)."""
        layout = join_layout(op, self.hist)
        if layout is None:
            return []
        nkey, nleft, _ = layout
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

    def exact_groups(self, step, op, records, t):
        """Every input of a keyed operator restricted to the groups of ``records``,
        exactly."""
        width = op.nkey or len(records[0])
        keys = {r[:width] for r in records}
        pattern = key_pattern(keys, width)
        step.note = "its whole group" if len(keys) == 1 else f"its {len(keys)} whole groups"
        return [("E", up, pattern, t) for up in op.inputs]

    # -- the operators' rules ------------------------------------------------------------------
    def _present(self, step, op, rec, t, sign):
        witness = op.witness
        if witness is not None and self.witnesses and not t and sign > 0:
            found = witness.demands(self, step, rec)     # an algorithm's own reason
            if found is not None:
                if op.label not in self.witnessed:
                    self.witnessed.append(op.label)
                return found
        return op.explain_present(self, step, rec, t, sign)

    def _exact(self, step, op, pattern, t, content):
        return op.explain_exact(self, step, pattern, t, content)


def _looked_through(demand):
    """A demand on an operator presenting its input's collection as the demand on what it
    presents (:func:`through`)."""
    if not demand[1].presents_input:
        return demand
    op, t = through(demand[1], demand[3])
    return (demand[0], op, demand[2], t) + tuple(demand[4:])


__all__ = ["Tracer", "Step", "through", "leq"]
