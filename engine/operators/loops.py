"""Loop plumbing: entering a scope, the loop variable's ingress, feedback, and leaving.

Inside a loop times are ``(outer..., i)``.  ``Enter`` shows an outer collection unchanged at
every iteration (update at ``t`` -> ``(t, 0)``).  A loop variable is ``Ingress(seed)`` plus the
feedback of the body's result: the seed enters as ``+x`` at iteration 0 and ``-x`` at iteration
1, the feedback adds one to the iteration coordinate, so ``var(0) = seed`` and
``var(i + 1) = body(var(i))``.  ``Leave`` drops the loop coordinate: summing all iterations'
updates gives the fixed point.  A prioritized loop's coordinate is a packed
``(priority, iteration)`` pair (see ``lattice``): the seed enters at ``(p, 0)`` and leaves at
``(p, 1)`` for its record's priority ``p``, so priority classes are introduced in order, each
starting from the fixed point of the ones before.
"""
from __future__ import annotations

import numpy as np

from ..batch import Batch
from ..columns import columns_of, decode_column, decode_rows
from ..errors import OperatorError
from ..lattice import FIXED_POINT, MAX_PRIORITY, PRIORITY, pack_priority
from ..trace import EnteredTrace
from .base import Operator


class ScopeNode(Operator):
    """A nested scope as one node of its parent: its pointstamps are the inner scope's,
    projected (the loop coordinate dropped); running it sweeps the inner scope."""

    kind = "loop"
    hosts_fused = False  # (running it sweeps a nested scope: nothing runs inside it)

    def __init__(self, parent, inner):
        self.inner = inner
        super().__init__(parent, [], name=inner.name)

    def step(self) -> bool:
        return self.inner.run()

    def derive_history(self, hist, pattern):
        return {}


class Enter(Operator):
    """Bring an outer collection (at any depth above) into this scope at iteration 0."""

    kind = "enter"
    eager = True  # (see Operator.eager)

    def __init__(self, scope, up, name=None):
        super().__init__(scope, [up], name)
        self.extra = scope.depth - up.scope.depth
        upstream_trace = getattr(up, "trace", None)
        self.trace = EnteredTrace(upstream_trace, self.extra) if upstream_trace is not None else None
        self.nkey = upstream_trace.nkey if upstream_trace is not None else None

    def input_time(self, port, t):
        return t + (0,) * self.extra

    def process(self, t, inputs):
        self.emit(t, inputs[0])

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    passes_records = presents_input = True

    def upstream_time(self, t):
        return t[:self.inputs[0].scope.depth - 1]

    def derive_history(self, hist, pattern):
        pad = (0,) * (self.scope.depth - self.inputs[0].scope.depth)
        return {(rec, t + pad): d for (rec, t), d in hist.updates(self.inputs[0], pattern).items()}

    def copy_into(self, scope, inputs):
        return Enter(scope, inputs[0])


class Ingress(Operator):
    """The seed of a loop variable: ``+x`` at iteration 0, ``-x`` at iteration 1 (per
    priority class in a prioritized loop)."""

    kind = "ingress"
    eager = True  # (see Operator.eager)

    def __init__(self, scope, up, priority=None, name=None):
        super().__init__(scope, [up], name)
        self.priority = priority

    def input_time(self, port, t):
        return t + (0,)

    def process(self, t, inputs):
        b = inputs[0]
        outer = t[:-1]
        if self.scope.kind != PRIORITY:
            self.emit(t, b)
            self.emit(outer + (1,), b.negate())
            return
        prio = self._priorities(b)
        for p in np.unique(prio).tolist():
            part = b.take(prio == p)
            self.emit(outer + (pack_priority(p, 0),), part)
            self.emit(outer + (pack_priority(p, 1),), part.negate())

    def _priorities(self, b: Batch) -> np.ndarray:
        spec = self.priority
        if spec is None:
            prio = np.zeros(len(b), dtype=np.int64)
        elif isinstance(spec, int):
            if b.kinds[spec] not in ("i", "b"):
                raise OperatorError(f"{self.label}: priority column {spec} must hold integers",
                                    operator=self.label)
            prio = b.cols[spec]
        else:
            args = [decode_column(c, k, self.flow.interner) for c, k in zip(b.cols, b.kinds)]
            try:
                prio = np.asarray(spec(*args))
            except Exception as err:
                raise OperatorError(f"{self.label}: priority function raised "
                                    f"{type(err).__name__}: {err}", operator=self.label) from err
            if prio.shape != (len(b),) or prio.dtype.kind not in "iub":
                raise OperatorError(f"{self.label}: the priority function must return one "
                                    f"integer per record (got {prio.dtype} of shape {prio.shape})",
                                    operator=self.label)
            prio = prio.astype(np.int64)
        bad = (prio < 0) | (prio > MAX_PRIORITY)
        if bad.any():
            row = decode_rows(b.take(bad).cols, b.kinds, self.flow.interner)[0]
            raise OperatorError(f"{self.label}: priority of {row!r} is {int(prio[bad][0])}; "
                                f"priorities must be integers in 0..{MAX_PRIORITY}",
                                operator=self.label, row=row)
        return prio

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    passes_records = True

    def upstream_time(self, t):
        return t[:-1]

    def priorities_of(self, records: list) -> list:
        """The priority class of each of ``records`` (decoded tuples)."""
        spec = self.priority
        if spec is None:
            return [0] * len(records)
        if isinstance(spec, int):
            return [int(r[spec]) for r in records]
        return [int(p) for p in np.asarray(spec(*columns_of(records))).tolist()]

    def derive_history(self, hist, pattern):
        seed = hist.updates(self.inputs[0], pattern)
        if not seed:
            return {}
        items = list(seed.items())
        if self.scope.kind == PRIORITY:
            prios = self.priorities_of([rec for (rec, _), _ in items])
            starts = [pack_priority(p, 0) for p in prios]
        else:
            starts = [0] * len(items)
        out: dict = {}
        for ((rec, t), d), start in zip(items, starts):
            for k, dd in (((rec, t + (start,)), d), ((rec, t + (start + 1,)), -d)):
                out[k] = out.get(k, 0) + dd
        return {k: d for k, d in out.items() if d}

    def copy_into(self, scope, inputs):
        return Ingress(scope, inputs[0], self.priority)


class Feedback(Operator):
    """The loop's back edge: the body's result at ``(..., i)`` reaches the variable at ``i + 1``.

    Like every operator it sends a time only once it is complete there, all of it in one
    consolidated batch: pieces of one iteration's result that cancel (``+x`` from one path,
    ``-x`` from another) cancel before they go around, or a loop would never look quiet (trap
    1 of the design note)."""

    kind = "feedback"
    eager = True  # (see Operator.eager)

    def process(self, t, inputs):
        nxt = t[:-1] + (t[-1] + 1,)
        if self.scope.max_iterations is not None:
            self.scope.check_iteration(nxt)
        self.emit(nxt, inputs[0])

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    passes_records = True

    def upstream_time(self, t):
        return t[:-1] + (t[-1] - 1,)

    def derive_history(self, hist, pattern):
        return {(rec, t[:-1] + (t[-1] + 1,)): d for (rec, t), d in
                hist.updates(self.inputs[0], pattern).items()}

    def copy_into(self, scope, inputs):
        return Feedback(scope, inputs, self.name)


class Leave(Operator):
    """Leave a loop: drop the loop coordinate(s); the sum over iterations is the limit."""

    kind = "leave"
    eager = True  # (see Operator.eager)

    def __init__(self, scope, up, name=None):
        super().__init__(scope, [up], name)
        self.drop = up.scope.depth - scope.depth

    def input_time(self, port, t):
        return t[: len(t) - self.drop]

    def process(self, t, inputs):
        self.emit(t, inputs[0])

    # -- hooks of the analyses (see Operator) -------------------------------------------------
    passes_records = True

    def upstream_time(self, t):
        """Its value at the fixed point: the loop's collection past every iteration."""
        return t + (FIXED_POINT,) * (self.inputs[0].scope.depth - self.scope.depth)

    def derive_history(self, hist, pattern):
        keep = self.scope.depth - 1
        return hist.consolidated((rec, t[:keep], d) for (rec, t), d in
                                 hist.updates(self.inputs[0], pattern).items())

    def copy_into(self, scope, inputs):
        return Leave(scope, inputs[0])
