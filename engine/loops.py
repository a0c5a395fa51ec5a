"""Loops: a scope with variables, entering outer collections, leaving at the fixed point.

A loop adds one coordinate to every time inside it (an iteration counter, or a
``(priority, iteration)`` pair for a prioritized loop).  ``Loop`` is the general form (any
number of variables: mutual recursion); ``Collection.iterate`` and ``Collection.prioritize``
are its one-variable shorthands.
"""
from __future__ import annotations

from .collection import Collection, bring_into
from .errors import DataflowError
from .lattice import ITERATION, MAX_PRIORITIZED_ITERATIONS, PRIORITY
from .operators.linear import Concat
from .operators.loops import Feedback, Ingress
from .runtime.scope import Scope

#: The iteration bound of every loop unless its ``max_iterations`` (or the Dataflow's) says
#: otherwise: a loop still changing after this many iterations raises NonConvergenceError.
DEFAULT_MAX_ITERATIONS = 10_000


class Loop:
    """A loop scope with any number of variables (mutual recursion).

    ``var = loop.variable(seed)``; build the body from the variables (and any outer
    collection); ``var.set(result)``; ``loop.leave(result)`` gives the fixed point outside.
    """

    def __init__(self, flow, outer_scope, name: str, max_iterations: int | None = None,
                 prioritized: bool = False, hint: str | None = None):
        """``hint``: what to tell the person when the loop does not converge, in the words of
        what built it (a rules program names its recursive rules); replaces the engine's
        generic advice in the :class:`NonConvergenceError`."""
        bound = max_iterations if max_iterations is not None else flow.max_iterations
        if prioritized and bound > MAX_PRIORITIZED_ITERATIONS:
            raise DataflowError(f"a prioritized loop counts at most {MAX_PRIORITIZED_ITERATIONS} "
                                f"iterations per priority; max_iterations={bound} is too large")
        flow.check_can_build(f"loop {name!r}")
        self.flow = flow
        self.scope = Scope(flow, outer_scope, _unique_scope_name(outer_scope, name),
                           PRIORITY if prioritized else ITERATION, bound)
        self.scope.hint = hint
        flow.mark_graph_changed()

    def variable(self, seed: Collection, priority=None) -> "Variable":
        """A loop variable starting from ``seed`` (brought into the loop); ``set`` it to the
        body's result.

        >>> flow = Dataflow(); xs = flow.input("xs")
        >>> loop = flow.loop("collatz"); n = loop.variable(xs)
        >>> nxt = n.map(lambda v: v // 2 if v % 2 == 0 else (3 * v + 1 if v > 1 else 1))
        >>> seen = n.set(n.concat(nxt).distinct())
        >>> out = loop.leave(seen).view(); xs.insert([6]); _ = flow.step()
        >>> sorted(out.to_dict())
        [1, 2, 3, 4, 5, 6, 8, 10, 16]
        """
        seed = bring_into(self.scope.parent, seed)
        ingress = Ingress(self.scope, seed.op, priority)
        head = Concat(self.scope, [ingress], name="variable")
        return Variable(head, seed.columns)

    def enter(self, collection: Collection) -> Collection:
        """An outer collection as seen inside this loop (constant across iterations).

        >>> flow = Dataflow(); xs = flow.input("xs"); loop = flow.loop()
        >>> loop.enter(xs).scope.path
        'root/loop'
        """
        return collection.enter(self)

    def leave(self, collection: Collection) -> Collection:
        """The fixed point of a collection of this loop, outside it.

        >>> flow = Dataflow(); xs = flow.input("xs"); loop = flow.loop(); x = loop.variable(xs)
        >>> out = loop.leave(x.set(x.distinct())).view(); xs.insert([1, 1]); _ = flow.step()
        >>> out.to_dict()
        {1: 1}
        """
        if collection.scope is not self.scope:
            raise DataflowError(f"{collection!r} is not in loop {self.scope.path!r}")
        return collection.leave()


def _unique_scope_name(parent, name):
    taken = {c.name for c in parent.children}
    if name not in taken:
        return name
    i = 2
    while f"{name}{i}" in taken:
        i += 1
    return f"{name}{i}"


class Variable(Collection):
    """A loop variable: the seed at iteration 0, then whatever :meth:`set` feeds back."""

    _set = False

    def set(self, result: Collection) -> Collection:
        """Feed ``result`` back as this variable's next iteration; returns ``result`` (in the
        loop).

        >>> flow = Dataflow(); xs = flow.input("xs"); loop = flow.loop(); x = loop.variable(xs)
        >>> body = x.set(x.concat(x.map(lambda v: v - 1).filter(lambda v: v >= 0)).distinct())
        >>> out = body.leave().view(); xs.insert([3]); _ = flow.step(); sorted(out.to_dict())
        [0, 1, 2, 3]
        """
        if self._set:
            raise DataflowError(f"loop variable {self.op.label} was already set")
        result = self._bring(result)
        fb = Feedback(self.scope, [result.op])
        self.op.add_input(fb)
        self._set = True
        return result
