"""Replaying part of a program from scratch: the same operators in a fresh Dataflow.

Why: an explanation claims that its input records are *sufficient*: the program run from
scratch on them alone produces the record.  The claim is checked by doing exactly that, with
the engine itself (so the check has the engine's semantics, user functions included), on a
copy of the operators upstream of the explained collection.  The same copy replays the
previous epoch's inputs when a record that left on the last move is explained.

The copy is built from the operator graph: each operator copies itself into the new flow
(its ``copy_into`` hook) with its inputs' copies and its parameters; a choice a ``choose``
operator made on the first load (plain or prioritized label propagation) is kept, so the
copy runs the same program whatever its input size.
"""
from __future__ import annotations

from ..collection import Collection
from ..dataflow import Dataflow
from ..errors import DataflowError
from ..lattice import PRIORITY
from ..loops import Loop
from ..operators.base import Operator


class Tap(Operator):
    """Passes its input on and, while ``active``, keeps the batches it saw with their times
    (``seen``): what a replay needs to know of one epoch's updates at a loop's feedback,
    without a Python call per record."""

    kind = "tap"
    preserves_consolidation = True

    def __init__(self, scope, up):
        super().__init__(scope, [up], name="why tap")
        self.active = False
        self.seen: list = []

    def process(self, t, inputs):
        if self.active:
            self.seen.append((t, inputs[0]))
        self.emit(t, inputs[0])


class Replay:
    """A fresh flow holding a copy of the operators ``target`` depends on.

    ``inputs``: name -> copied input collection; :meth:`run` inserts records and steps."""

    def __init__(self, flow, target=None, max_iterations: int | None = None, include=()):
        if target is not None and target.scope.parent is not None:
            raise DataflowError(f"{target.label} is inside loop {target.scope.path!r}; "
                                "explain a collection outside loops (use leave())")
        cone = set()
        for op in ([target] if target is not None else []) + list(include):
            cone |= flow.upstream(op)
        self.flow = Dataflow(f"replay of {flow.name}", max_iterations=max_iterations or
                             flow.max_iterations, stats_epochs=1, max_rows_per_epoch=None,
                             retain_inputs=True, workers=1)
        scopes = {id(flow.root): self.flow.root}
        by_id = {op.id: op for op in flow.operators}
        copies: dict = {}
        deferred = []   # (copy, original input op) edges to ops built later (loop feedback)
        self.inputs: dict = {}
        needed = set()
        for op in flow.operators:
            if op.id in cone:
                s = op.scope
                while s is not None:
                    needed.add(id(s))
                    s = s.parent
        for op in flow.operators:
            kind = op.kind
            if kind == "loop" and id(op.inner) in needed:
                inner = op.inner
                loop = Loop(self.flow, scopes[id(inner.parent)], inner.name, inner.max_iterations,
                            prioritized=inner.kind == PRIORITY, hint=getattr(inner, "hint", None))
                scopes[id(inner)] = loop.scope
                continue
            if op.id not in cone:
                continue
            scope = scopes[id(op.scope)]
            if kind == "input":
                cols = flow.inputs[op.name].columns if op.name in flow.inputs else None
                inp = self.flow.input(op.name, columns=cols)
                copies[op.id] = inp.op
                self.inputs[op.name] = inp
                continue
            ready = [copies[up.id] for up in op.inputs if up.id in copies]
            later = [up for up in op.inputs if up.id not in copies]
            new = op.copy_into(scope, ready)
            copies[op.id] = new
            deferred.extend((new, up) for up in later)
        for new, up in deferred:
            new.add_input(copies[up.id])
        for op_id, new in copies.items():       # an algorithm's witness reads the copies
            witness = by_id[op_id].witness
            if witness is not None and witness.argument.id in copies:
                new.witness = witness.moved_to(copies[witness.argument.id])
        self._copies = copies
        self.target = Collection(copies[target.id]) if target is not None else None
        self._view = self.target.view() if target is not None else None

    def tap(self, op) -> Tap:
        """A :class:`Tap` on the copy of ``op`` (built before the first step)."""
        copy = self._copies[op.id]
        return Tap(copy.scope, copy)

    @property
    def copied(self) -> set:
        """Ids of the original operators this replay holds a copy of."""
        return set(self._copies)

    def copy_of(self, op) -> Collection:
        """The copy of one of the original flow's operators, as a collection."""
        return Collection(self._copies[op.id])

    def step(self, records: dict) -> None:
        """Insert ``{input name: {record: diff}}`` (decoded records, as tuples) and step once."""
        for name, recs in records.items():
            inp = self.inputs.get(name)
            if inp is None or not recs:
                continue
            inp.update([(r[0] if len(r) == 1 else r, int(m)) for r, m in recs.items()])
        self.flow.step()

    def run(self, records: dict) -> dict:
        """:meth:`step` with ``records``, then the target's contents ``{record tuple:
        multiplicity}``."""
        self.step(records)
        return {(r if isinstance(r, tuple) else (r,)): m for r, m in self._view.to_dict().items()}


def replay(flow, target, records: dict) -> dict:
    """The contents of ``target`` when the program upstream of it runs from scratch on
    ``records`` (``{input name: {record: multiplicity}}``)."""
    return Replay(flow, target).run(records)


__all__ = ["Replay", "replay"]
