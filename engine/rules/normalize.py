"""Rewrites of parsed rules into the smaller language the analysis and the compiler know.

Why: each construct of the dialect that can be said with simpler ones is rewritten here once,
so the checks, the planner and the proofs see only atoms of variables, constants and ``_``,
comparisons and assignments.

- A relation with no fields, ``Satisfiable()``, has one field ``holds`` whose only value is
  ``True`` (ddlab's records have at least one field).
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

from .ast import (Aggregate, Atom, BinOp, BodyAggregate, Call, Comparison, Const, Negation,
                  Negative, Rule, Var, Wildcard, variables)
from .errors import UnsupportedError

__all__ = ["normalize", "is_fresh", "expand_aggregates"]


def is_fresh(name: str) -> bool:
    """Whether ``name`` is a variable the rewrites made (``$1``, ...)."""
    return name.startswith("$")


def normalize(rule: Rule) -> Rule:
    """``rule`` with every expression argument of a body atom bound to a fresh variable (and,
    for a count/sum rule, every ``_`` of a positive atom named)."""
    return _name_wildcards(_flatten(_nullary(rule)))


#: the one record of a relation with no fields (``.decl Satisfiable()``): ddlab's records have
#: at least one field, so such a relation has one, ``holds``, whose only value is ``True``
HOLDS = True


def _nullary(rule: Rule) -> Rule:
    """``S()`` (head or body) as ``S(True)``."""
    def fix(atom):
        return replace(atom, args=(Const(HOLDS, atom.pos),)) if not atom.args else atom
    body = tuple(replace(lit, atom=fix(lit.atom)) if isinstance(lit, Negation) else
                 fix(lit) if isinstance(lit, Atom) else lit for lit in rule.body)
    if rule.head.args and all(x is y for x, y in zip(body, rule.body)):
        return rule
    return replace(rule, head=fix(rule.head), body=body)


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


# -- Soufflé's body aggregates ---------------------------------------------------------------
def expand_aggregates(rules: list, text: str) -> list:
    """Every ``v = count : { body }`` (``sum e``, ``min e``, ``max e``) becomes a relation of
    its own, ``$count1(g..., count()) :- body.``, grouped by the variables the aggregate shares
    with the rest of its rule (Soufflé's "injected" variables), and an atom
    ``$count1(g..., v)`` in the rule.  As in Soufflé, a count or sum over no tuple is 0: when
    the rest of the rule binds the group, a second rule gives 0 where ``$count1`` has no
    tuple for it (``!$count1(g..., _)``).  Aux rules are appended, numbered after the rest."""
    out = list(rules)
    counter = [0]
    done: list = []
    todo = list(out)
    extra: list = []
    while todo:
        rule = todo.pop(0)
        found = _first_aggregate(rule)
        if found is None:
            done.append(rule)
            continue
        agg = found
        counter[0] += 1
        k = counter[0]
        name = f"${agg.func}{k}"
        result = Var(f"${agg.func}{k}.value", agg.pos)
        inner = set()
        for lit in agg.body:
            inner.update(_literal_vars(lit))
        if agg.arg is not None:
            inner.update(variables(agg.arg))
        rest = _vars_outside(rule, agg)
        group = [v for v in _ordered_vars(agg) if v in rest]
        positive = {v for lit in agg.body if isinstance(lit, Atom) for a in lit.args
                    for v in variables(a)}
        for v in group:
            if v not in positive:
                raise UnsupportedError(
                    f"variable {v} is bound outside {agg.func} : {{ ... }} and used inside it "
                    "only in a comparison or a negation", text, agg.pos,
                    f"use {v} in an atom inside the aggregate, or give the condition on {v} "
                    "a relation of its own")
        head = Atom(name, tuple(Var(v, agg.pos) for v in group)
                    + (Aggregate(agg.func, agg.arg, agg.pos),), agg.pos)
        extra.append(Rule(head, tuple(agg.body), agg.pos, rule.source, 0))
        reading = Atom(name, tuple(Var(v, agg.pos) for v in group) + (result,), agg.pos)
        body = tuple(_replace_aggregate(lit, agg, result) for lit in rule.body)
        todo.insert(0, replace(rule, body=body + (reading,)))
        if agg.func in ("count", "sum") and set(group) <= _bound_without(rule, agg):
            zero = Const(0, agg.pos)
            zbody = tuple(_replace_aggregate(lit, agg, zero) for lit in rule.body)
            absent = Negation(Atom(name, tuple(Var(v, agg.pos) for v in group)
                                   + (Wildcard(agg.pos),), agg.pos), agg.pos)
            todo.insert(1, replace(rule, body=zbody + (absent,)))
    numbered = []
    for i, rule in enumerate(done + extra, 1):
        numbered.append(replace(rule, index=i))
    return numbered


def _first_aggregate(rule):
    for lit in rule.body:
        if isinstance(lit, Comparison):
            for side in (lit.left, lit.right):
                found = _find(side)
                if found is not None:
                    return found
    return None


def _find(t):
    if isinstance(t, BodyAggregate):
        return t
    for child in _children(t):
        found = _find(child)
        if found is not None:
            return found
    return None


def _children(t):
    if isinstance(t, BinOp):
        return (t.left, t.right)
    if isinstance(t, Negative):
        return (t.operand,)
    if isinstance(t, Call):
        return t.args
    return ()


def _substitute(t, agg, by):
    if t is agg:
        return by
    if isinstance(t, BinOp):
        return replace(t, left=_substitute(t.left, agg, by), right=_substitute(t.right, agg, by))
    if isinstance(t, Negative):
        return replace(t, operand=_substitute(t.operand, agg, by))
    if isinstance(t, Call):
        return replace(t, args=tuple(_substitute(a, agg, by) for a in t.args))
    return t


def _replace_aggregate(lit, agg, by):
    if isinstance(lit, Comparison):
        return replace(lit, left=_substitute(lit.left, agg, by),
                       right=_substitute(lit.right, agg, by))
    return lit


def _literal_vars(lit) -> list:
    if isinstance(lit, Atom):
        return [v for a in lit.args for v in variables(a)]
    if isinstance(lit, Negation):
        return _literal_vars(lit.atom)
    if isinstance(lit, Comparison):
        return _term_vars(lit.left) + _term_vars(lit.right)
    return []


def _term_vars(t) -> list:
    if isinstance(t, BodyAggregate):
        return []            # an aggregate's variables are its own
    if isinstance(t, (BinOp, Negative, Call)):
        return [v for c in _children(t) for v in _term_vars(c)]
    return variables(t)


def _ordered_vars(agg) -> list:
    out = []
    for lit in agg.body:
        for v in _literal_vars(lit):
            if v not in out:
                out.append(v)
    return out


def _vars_outside(rule, agg) -> set:
    """The variables of ``rule`` outside the aggregate ``agg`` (its head included)."""
    out = set(v for a in rule.head.args for v in variables(a))
    for lit in rule.body:
        out.update(_literal_vars(lit))
    return out


def _bound_without(rule, agg) -> set:
    """Variables the rule's positive atoms bind (and assignments from them), the aggregate's
    own comparison aside: the group values a 0 can be given for."""
    bound = {v for lit in rule.body if isinstance(lit, Atom) for a in lit.args
             for v in variables(a)}
    grown = True
    while grown:
        grown = False
        for lit in rule.body:
            if isinstance(lit, Comparison) and lit.op == "=" and _find(lit.left) is None \
                    and _find(lit.right) is None:
                for target, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(target, Var) and target.name not in bound and \
                            set(_term_vars(expr)) <= bound:
                        bound.add(target.name)
                        grown = True
    return bound
