"""Rewrites of parsed rules into the smaller language the analysis and the compiler know.

Why: each construct of the dialect that can be said with simpler ones is rewritten here once,
so the checks, the planner and the proofs see only atoms of variables, constants and ``_``,
comparisons and assignments.

- An expression as an atom's argument, ``fib(n - 1, a)`` or ``!e(x + 1)``, becomes a fresh
  variable bound by an assignment, ``fib($1, a), $1 = n - 1`` (``$`` names cannot be written
  in a program, so they never clash).  For a positive atom the assignment is an equality test
  once the atom is matched, or binds the variable first so the atom is joined on it; for a
  negated atom it computes the key the antijoin looks up.
- In the body of a ``count``/``sum`` rule, every ``_`` of a positive atom becomes a fresh
  variable: the aggregate ranges over the rule's distinct bindings, so with the wildcards
  named it counts every combination of matched tuples, as Soufflé's ``count : { ... }`` does
  (``c(count()) :- a(_, _).`` is the number of tuples of ``a``, not 1).
"""
from __future__ import annotations

from dataclasses import replace

from .ast import Atom, Comparison, Const, Negation, Rule, Var, Wildcard

__all__ = ["normalize", "is_fresh"]


def is_fresh(name: str) -> bool:
    """Whether ``name`` is a variable the rewrites made (``$1``, ...)."""
    return name.startswith("$")


def normalize(rule: Rule) -> Rule:
    """``rule`` with every expression argument of a body atom bound to a fresh variable (and,
    for a count/sum rule, every ``_`` of a positive atom named)."""
    return _name_wildcards(_flatten(rule))


def _name_wildcards(rule: Rule) -> Rule:
    agg = rule.aggregate
    if not agg or agg[1].func not in ("count", "sum"):
        return rule
    body, k = [], 0
    for lit in rule.body:
        if isinstance(lit, Atom) and any(isinstance(a, Wildcard) for a in lit.args):
            args = []
            for a in lit.args:
                if isinstance(a, Wildcard):
                    k += 1
                    a = Var(f"$_{k}", a.pos)
                args.append(a)
            lit = replace(lit, args=tuple(args))
        body.append(lit)
    return replace(rule, body=tuple(body)) if k else rule


def _flatten(rule: Rule) -> Rule:
    body, counter = [], [0]
    for lit in rule.body:
        atom = lit.atom if isinstance(lit, Negation) else lit
        if not isinstance(atom, Atom) or all(isinstance(a, (Var, Const, Wildcard))
                                             for a in atom.args):
            body.append(lit)
            continue
        args, assigns = [], []
        for a in atom.args:
            if isinstance(a, (Var, Const, Wildcard)):
                args.append(a)
                continue
            counter[0] += 1
            fresh = Var(f"${counter[0]}", a.pos)
            args.append(fresh)
            assigns.append(Comparison("=", fresh, a, a.pos, origin=str(lit)))
        new = replace(atom, args=tuple(args))
        body.append(replace(lit, atom=new) if isinstance(lit, Negation) else new)
        body.extend(assigns)
    if counter[0] == 0:
        return rule
    return replace(rule, body=tuple(body))
