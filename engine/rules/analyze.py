"""Checks and stratification: from a parsed program to relations, strata and outputs.

Everything a person can get wrong is found here, before any operator is built: arity,
unknown relations and inputs, unsafe variables, misused aggregates, constants of the wrong
type, negation through recursion.  The precedence graph's strongly connected components are
the strata: a component with a cycle becomes one loop of the engine.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..plan.recursion import components
from .ast import (Aggregate, Atom, BinOp, Call, Comparison, Const, Negation, Negative, Program, Rule,
                  Var, Wildcard, variables)
from .errors import (AggregateError, ArityError, RulesTypeError, UnknownFunctorError,
                     UnknownRelationError, UnsafeRuleError, UnstratifiableError,
                     UnsupportedError)
from .files import base_type
from .functors import FUNCTORS, REFUSED
from .normalize import expand_aggregates, is_fresh, normalize
from .parse import closest

__all__ = ["Relation", "Stratum", "Analysis", "analyze", "AGGREGATES", "MONOTONE"]

AGGREGATES = ("count", "sum", "min", "max")
#: aggregates allowed inside recursion: they only move one way as facts are derived
MONOTONE = ("min", "max")
_NUMERIC_TYPES = {"number", "unsigned", "float", "int", "integer"}
_STRING_TYPES = {"symbol", "string"}


@dataclass
class Relation:
    """One relation of the program: its arity, field names, where its tuples come from."""

    name: str
    arity: int
    columns: list
    types: list | None = None
    source: str | None = None         # the collection an .input reads
    source_columns: tuple | None = None   # fields picked from that collection, by name
    declared: bool = False            # has a .decl (with no rules nor input: empty)
    rules: list = field(default_factory=list)
    facts: list = field(default_factory=list)
    aggregate: tuple | None = None    # (position, function) of its aggregate rules

    @property
    def is_input(self) -> bool:
        return self.source is not None

    @property
    def derived(self) -> bool:
        return bool(self.rules or self.facts)


@dataclass
class Stratum:
    """A strongly connected component of the precedence graph (dependencies come first)."""

    relations: list
    recursive: bool

    @property
    def name(self) -> str:
        return "+".join(self.relations)


@dataclass
class Analysis:
    program: Program
    relations: dict
    strata: list
    outputs: list

    @property
    def inputs(self) -> dict:
        """Relation name -> the collection name it reads."""
        return {r.name: r.source for r in self.relations.values() if r.is_input}


def analyze(program: Program, available: dict) -> Analysis:
    """Check ``program`` against the collections ``available`` (name -> field names, or None
    when unknown) and stratify it.  Raises a :class:`~.errors.RulesError` subclass."""
    text = program.text
    program.rules = [normalize(rule) for rule in expand_aggregates(program.rules, text)]
    rels: dict[str, Relation] = {}
    first_use: dict[str, tuple] = {}

    def use(atom, arity_from="used"):
        n = len(atom.args)
        if atom.relation in rels:
            rel = rels[atom.relation]
            if rel.arity != n:
                origin = first_use.get(atom.relation)
                where = (f"line {origin[1].line}" if origin else "its declaration")
                raise ArityError(
                    f"{atom.relation} has {n} field{'s' if n != 1 else ''} here but "
                    f"{rel.arity} at {where} ({origin[0] if origin else 'declared'})",
                    text, atom.pos,
                    f"every use of {atom.relation} needs {rel.arity} argument"
                    f"{'s' if rel.arity != 1 else ''}: {atom.relation}("
                    f"{', '.join(c or f'c{j}' for j, c in enumerate(rel.columns))})")
        else:
            rels[atom.relation] = Relation(atom.relation, n, [None] * n)
            first_use[atom.relation] = (str(atom), atom.pos)

    # -- declarations and inputs ----------------------------------------------------------
    for d in program.decls:
        if d.name in rels:
            raise ArityError(f"{d.name} is declared twice", text, d.pos,
                             "keep one .decl per relation")
        attributes = d.attributes or (("holds", "bool"),)    # S(): see normalize.HOLDS
        rels[d.name] = Relation(d.name, len(attributes), [a for a, _ in attributes],
                                [base_type(t, program.types, text) for _, t in attributes],
                                declared=True)
        first_use[d.name] = (f".decl {d.name}", d.pos)
    for inp in program.inputs:
        source = inp.source or inp.name
        rel = rels.get(inp.name)
        if source not in available:
            names = sorted(available)
            near = closest(source, names)
            given = ", ".join(names) if names else "none"
            raise UnknownRelationError(
                f"unknown input {source!r}: no collection of that name was given",
                text, inp.source_pos or inp.pos,
                (f"did you mean {near!r}? " if near else "")
                + f"collections available: {given}"
                + (f". Read one with .input {inp.name}(...) from NAME" if names else ""))
        have = available[source]
        cols = inp.columns
        picked = None
        if cols is not None and have is not None and len(cols) != len(have) and \
                all(c in have for c in cols):
            picked = cols             # fields picked from the collection by name
        arity = len(cols) if cols is not None else (rel.arity if rel else
                                                      (len(have) if have else None))
        if cols is not None and have is not None and picked is None and len(cols) != len(have):
            raise ArityError(
                f".input {inp.name} gives {len(cols)} field{'s' if len(cols) != 1 else ''} "
                f"but collection {source!r} has {len(have)} ({', '.join(have)})", text,
                inp.pos, f"name {len(have)} fields, or pick some of {', '.join(have)} by name")
        if arity is None:
            raise ArityError(f"the fields of input {source!r} are not known", text, inp.pos,
                             f"name them: .input {inp.name}(a, b) from {source}")
        if rel is not None and rel.arity != arity:
            raise ArityError(f".input {inp.name} has {arity} fields but {inp.name} is declared "
                             f"with {rel.arity}", text, inp.pos)
        if have is not None and picked is None and len(have) != arity:
            raise ArityError(
                f"{inp.name} has {arity} field{'s' if arity != 1 else ''} but collection "
                f"{source!r} has {len(have)} ({', '.join(have)})", text, inp.pos,
                f"declare {inp.name} with {len(have)} fields, or pick fields by name: "
                f".input {inp.name}({', '.join(have[:arity])}) from {source}")
        if rel is None:
            columns = list(cols) if cols else (list(have) if have else [f"c{j}" for j in range(arity)])
            rel = rels[inp.name] = Relation(inp.name, arity, columns)
            first_use[inp.name] = (f".input {inp.name}", inp.pos)
        elif cols:
            rel.columns = list(cols)
        rel.source, rel.source_columns = source, picked

    program.rules = [_floats(rule, rels) for rule in program.rules]
    # -- rules: arity, aggregates, safety, types ------------------------------------------
    for rule in program.rules:
        use(rule.head)
        for lit in rule.body:
            if isinstance(lit, Atom):
                use(lit)
            elif isinstance(lit, Negation):
                use(lit.atom)
        _check_head(rule, text)
        _check_calls(rule, text)
        _check_safety(rule, text)
        rel = rels[rule.head.relation]
        if not rule.body:
            rel.facts.append(rule)
        else:
            rel.rules.append(rule)
    for rule in program.rules:
        for lit in rule.body:
            atom = lit.atom if isinstance(lit, Negation) else lit
            if isinstance(atom, Atom) and not (rels[atom.relation].derived
                                               or rels[atom.relation].is_input
                                               or rels[atom.relation].declared):
                _unknown(atom, rels, text, available)
    # -- strata (first: a count or sum inside recursion is the more basic problem) --------
    strata = _stratify(rels, text)
    for rel in rels.values():
        _check_aggregates(rel, text)
        _fill_columns(rel)
    _check_types(program, rels, text)

    # -- outputs -------------------------------------------------------------------------
    outputs: list[str] = []
    for out in program.outputs:
        for name in out.names:
            if name not in rels or not (rels[name].derived or rels[name].is_input):
                defined = [r.name for r in rels.values() if r.derived or r.is_input]
                near = closest(name, defined)
                raise UnknownRelationError(
                    f".output {name}: no relation {name!r} is defined", text, out.pos,
                    (f"did you mean {near!r}? " if near else "")
                    + f"defined: {', '.join(defined) or 'none'}")
            if name not in outputs:
                outputs.append(name)
    if not program.outputs:
        outputs = [r.name for r in rels.values() if r.derived and not is_fresh(r.name)]
    return Analysis(program, rels, strata, outputs)


def _unknown(atom, rels, text, available):
    defined = [r.name for r in rels.values() if r.derived or r.is_input]
    near = closest(atom.relation, defined)
    if atom.relation in available:
        hint = (f"{atom.relation!r} is a collection: read it with "
                f".input {atom.relation}")
    elif near:
        hint = f"did you mean {near!r}? defined: {', '.join(defined)}"
    else:
        hint = (f"defined: {', '.join(defined) or 'none'}; give it rules or facts, read a "
                f"collection with .input {atom.relation}(...) from NAME, or .decl it (an "
                "empty relation)")
    raise UnknownRelationError(f"{atom.relation} is used but has no rules, facts or .input",
                               text, atom.pos, hint)


def _fill_columns(rel: Relation) -> None:
    """Field names for a derived relation without a .decl: the head variables (or the
    aggregate's name) its rules use in each position, else ``c0``, ``c1``..."""
    if all(rel.columns):
        return
    taken: list[str] = []
    for j in range(rel.arity):
        name = rel.columns[j]
        for rule in (rel.rules + rel.facts) if not name else ():
            a = rule.head.args[j]
            name = a.name if isinstance(a, Var) else (a.func if isinstance(a, Aggregate) else None)
            if name:
                break
        name = name or f"c{j}"
        base, k = name, 2
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.append(name)
        rel.columns[j] = name


def _floats(rule: Rule, rels: dict) -> Rule:
    """``rule`` with every integer constant in a field declared ``float`` written as a float
    (``u(0.5, 1).`` holds ``1.0``), so a column never mixes the two kinds."""
    def fix(atom):
        rel = rels.get(atom.relation)
        if not rel or not rel.types or len(rel.types) != len(atom.args):
            return atom
        args = tuple(Const(float(a.value), a.pos) if t == "float" and isinstance(a, Const)
                     and isinstance(a.value, int) else a for a, t in zip(atom.args, rel.types))
        same = all(x is y for x, y in zip(args, atom.args))
        return atom if same else replace(atom, args=args)
    body = tuple(replace(lit, atom=fix(lit.atom)) if isinstance(lit, Negation) else
                 fix(lit) if isinstance(lit, Atom) else lit for lit in rule.body)
    head = fix(rule.head)
    if head is rule.head and all(x is y for x, y in zip(body, rule.body)):
        return rule
    return replace(rule, head=head, body=body)


_TYPE_NAMES = ("number", "unsigned", "float", "symbol")


def _check_calls(rule: Rule, text: str) -> None:
    """Every functor call names a functor and gives it its number of arguments."""
    for node in _calls(rule):
        if node.name == "as":
            if len(node.args) != 2 or not isinstance(node.args[1], Var):
                raise UnknownFunctorError(f"{node}: as takes an expression and a type",
                                          text, node.pos, "as(x, number), as(s, symbol)")
            continue
        if any(isinstance(a, Wildcard) for a in node.args):
            raise UnsafeRuleError(f"'_' as an argument of {node.name}: a functor needs values",
                                  text, node.pos, "name a bound variable instead")
        if node.name in REFUSED:
            raise UnsupportedError(f"{node.name} is not supported", text, node.pos,
                                   REFUSED[node.name])
        if node.name not in FUNCTORS:
            near = closest(node.name, FUNCTORS)
            raise UnknownFunctorError(
                f"unknown functor {node.name!r}", text, node.pos,
                (f"did you mean {near!r}? " if near else "")
                + f"functors: {', '.join(sorted(FUNCTORS))}, as(x, type)")
        want = FUNCTORS[node.name][0]
        if want is not None and want != len(node.args):
            raise UnknownFunctorError(
                f"{node.name} takes {want} argument{'s' if want != 1 else ''}, not "
                f"{len(node.args)}", text, node.pos)


def _calls(rule: Rule) -> list:
    out = []

    def walk(t):
        if isinstance(t, Call):
            out.append(t)
            if t.name == "as":
                walk(t.args[0])
                return
            for a in t.args:
                walk(a)
        elif isinstance(t, BinOp):
            walk(t.left)
            walk(t.right)
        elif isinstance(t, Negative):
            walk(t.operand)
        elif isinstance(t, Aggregate) and t.arg is not None:
            walk(t.arg)
        elif isinstance(t, Atom):
            for a in t.args:
                walk(a)
        elif isinstance(t, Negation):
            walk(t.atom)
        elif isinstance(t, Comparison):
            walk(t.left)
            walk(t.right)
    walk(rule.head)
    for lit in rule.body:
        walk(lit)
    return out


def _check_head(rule: Rule, text: str) -> None:
    aggs = [a for a in rule.head.args if isinstance(a, Aggregate)]
    for a in rule.head.args:
        if isinstance(a, Wildcard):
            raise UnsafeRuleError(f"'_' in the head of {rule.head.relation}: a derived fact "
                                  "needs a value in every field", text, a.pos,
                                  "name a variable bound in the body instead")
    if len(aggs) > 1:
        raise AggregateError(f"{rule.head.relation} has {len(aggs)} aggregates in one head",
                             text, aggs[1].pos,
                             "use one aggregate per rule (and one rule per aggregate relation)")
    for a in aggs:
        if a.func not in AGGREGATES:
            near = closest(a.func, AGGREGATES)
            raise AggregateError(f"unknown aggregate {a.func!r}", text, a.pos,
                                 (f"did you mean {near!r}? " if near else "")
                                 + "aggregates: count, sum, min, max")
        if a.arg is None and a.func != "count":
            raise AggregateError(f"{a.func} needs an argument, e.g. {a.func}(d + 1)", text, a.pos)
        if not rule.body:
            raise AggregateError(f"a fact cannot aggregate: {rule.head}", text, a.pos)


def _bindings(rule: Rule) -> tuple[set, list]:
    """Variables bound by the body (positive atoms, then assignments ``v = expr``), and the
    assignments in the order they bind."""
    bound = set()
    for lit in rule.body:
        if isinstance(lit, Atom):
            bound.update(v for a in lit.args for v in variables(a))
    assigns = []
    pending = [lit for lit in rule.body if isinstance(lit, Comparison) and lit.op == "="]
    progress = True
    while progress:
        progress = False
        for c in list(pending):
            for target, expr in ((c.left, c.right), (c.right, c.left)):
                if isinstance(target, Var) and target.name not in bound and \
                        set(variables(expr)) <= bound:
                    bound.add(target.name)
                    assigns.append(c)
                    pending.remove(c)
                    progress = True
                    break
    return bound, assigns


def _check_safety(rule: Rule, text: str) -> None:
    bound, _ = _bindings(rule)
    for lit in rule.body:
        if isinstance(lit, Negation):
            for v in _vars_with_pos(lit.atom):
                if v.name not in bound and not is_fresh(v.name):
                    raise UnsafeRuleError(
                        f"variable {v.name} appears only under negation (!{lit.atom}), "
                        "so it ranges over everything", text, v.pos,
                        f"bind {v.name} in a positive atom of the body, or write _ if any "
                        "value will do")
        elif isinstance(lit, Comparison):
            for v in _vars_with_pos(lit):
                if is_fresh(v.name):
                    continue      # the expression's own variables are named instead
                if v.name not in bound and lit.origin:
                    raise UnsafeRuleError(
                        f"variable {v.name} appears only in the expression {lit.right}, an "
                        f"argument of {lit.origin}, so nothing gives it a value", text, v.pos,
                        f"bind {v.name} in a positive atom of the body (an expression "
                        "argument is computed from bound variables, never solved for them)")
                if v.name not in bound:
                    raise UnsafeRuleError(
                        f"variable {v.name} appears only in a comparison ({lit})", text, v.pos,
                        f"bind {v.name} in a positive atom, or assign it: {v.name} = <expression "
                        "of bound variables>")
    for v in _vars_with_pos(rule.head):
        if v.name not in bound:
            where = "only in the head" if not rule.body else "in the head but not in the body"
            raise UnsafeRuleError(
                f"variable {v.name} appears {where} of {rule.head.relation}", text, v.pos,
                f"bind {v.name} in a positive atom of the body"
                + (", or give a constant for a fact" if not rule.body else ""))


def _vars_with_pos(node) -> list:
    out = []

    def walk(t):
        if isinstance(t, Var):
            out.append(t)
        elif isinstance(t, BinOp):
            walk(t.left)
            walk(t.right)
        elif isinstance(t, Negative):
            walk(t.operand)
        elif isinstance(t, Call):
            for a in (t.args[:1] if t.name == "as" else t.args):     # as(x, type)
                walk(a)
        elif isinstance(t, Aggregate):
            if t.arg is not None:
                walk(t.arg)
        elif isinstance(t, Atom):
            for a in t.args:
                walk(a)
        elif isinstance(t, Comparison):
            walk(t.left)
            walk(t.right)
    walk(node)
    return out


def _check_aggregates(rel: Relation, text: str) -> None:
    aggregated = [(r, r.aggregate) for r in rel.rules if r.aggregate]
    if not aggregated:
        return
    (first, (pos, agg)) = aggregated[0]
    for _, (p, a) in aggregated[1:]:
        if a.func != agg.func or p != pos:
            raise AggregateError(
                f"{rel.name} aggregates with {a.func} in field {p + 1} here but with "
                f"{agg.func} in field {pos + 1} at line {first.pos.line}", text, a.pos,
                "all aggregate rules of one relation use the same aggregate in the same field")
    if agg.func in ("count", "sum"):
        others = [r for r in rel.rules if r is not first] + list(rel.facts)
        if others or rel.is_input:
            other = others[0] if others else None
            also = ("is also an .input" if other is None else
                    f"also has the {'fact' if not other.body else 'rule'} at line "
                    f"{other.pos.line}")
            raise AggregateError(
                f"{rel.name} is a {agg.func} (the rule at line {first.pos.line}) and must be "
                f"defined by that rule alone, but it {also}",
                text, other.pos if other is not None else first.pos,
                f"give the other rules' results their own relation and {agg.func} over the "
                "union in one rule")
    rel.aggregate = (pos, agg.func)


def _check_types(program, rels, text) -> None:
    for rule in program.rules:
        atoms = [rule.head] + [lit.atom if isinstance(lit, Negation) else lit for lit in rule.body
                               if isinstance(lit, (Atom, Negation))]
        for atom in atoms:
            rel = rels[atom.relation]
            if not rel.types:
                continue
            for j, a in enumerate(atom.args):
                if not isinstance(a, Const):
                    continue
                t = rel.types[j]
                if t in _NUMERIC_TYPES and isinstance(a.value, str):
                    raise RulesTypeError(f"{a} is a string but field {rel.columns[j]} of "
                                         f"{rel.name} is a {t}", text, a.pos)
                if t in _STRING_TYPES and not isinstance(a.value, str):
                    raise RulesTypeError(f"{a} is a number but field {rel.columns[j]} of "
                                         f"{rel.name} is a {t}", text, a.pos,
                                         f'write it as a string: "{a.value}"')


# -- the precedence graph -----------------------------------------------------------------
def _edges(rels) -> dict:
    """head -> [(body relation, negated, aggregate function or None, rule, literal)]."""
    out = {name: [] for name in rels}
    for rel in rels.values():
        for rule in rel.rules:
            agg = rule.aggregate[1].func if rule.aggregate else None
            for lit in rule.body:
                if isinstance(lit, Atom):
                    out[rel.name].append((lit.relation, False, agg, rule, lit))
                elif isinstance(lit, Negation):
                    out[rel.name].append((lit.atom.relation, True, agg, rule, lit))
    return out


def _stratify(rels, text) -> list[Stratum]:
    edges = _edges(rels)
    order = list(rels)
    succ = {n: [b for b, *_ in edges[n]] for n in order}
    comps = components(order, succ)
    where = {n: i for i, comp in enumerate(comps) for n in comp}
    strata = []
    for comp in comps:
        members = [n for n in order if n in comp]   # program order within a component
        recursive = len(comp) > 1 or any(b == comp[0] for b in succ[comp[0]])
        for head in members:
            for body, negated, agg, rule, lit in edges[head]:
                if where[body] != where[head]:
                    continue
                if negated:
                    cycle = _cycle(body, head, edges, set(comp))
                    raise UnstratifiableError(
                        f"{head} depends on its own negation through the cycle "
                        f"{head} -> !{body}{cycle}", text, lit.pos,
                        "negation must not go through recursion: compute the negated relation "
                        "completely first (it must not depend on " + head + ")")
                if agg in ("count", "sum"):
                    cycle = _cycle(body, head, edges, set(comp))
                    raise AggregateError(
                        f"{agg} inside recursion: {head} depends on itself through "
                        f"{head} -> {body}{cycle}; {agg} is not monotone (a fact derived in a "
                        f"later iteration changes a {agg} already used), so the recursion has "
                        f"no well-defined fixed point and ddlab refuses to compute it",
                        text, rule.aggregate[1].pos,
                        f"compute the recursive relation first and {agg} it in a rule outside "
                        "the cycle; min and max may be used inside recursion")
        if any(rels[n].derived for n in members):
            strata.append(Stratum(members, recursive))
    return strata


def _cycle(start, goal, edges, comp) -> str:
    """`` -> x -> !y -> goal``: the shortest path from ``start`` back to ``goal`` in one
    component, edges marked ``!`` where negated (empty when ``start`` is ``goal``)."""
    if start == goal:
        return ""
    from collections import deque

    prev = {start: None}
    todo = deque([start])
    while todo:
        v = todo.popleft()
        if v == goal:
            break
        for b, negated, *_ in edges[v]:
            if b in comp and b not in prev:
                prev[b] = (v, negated)
                todo.append(b)
    path, v = [], goal
    while prev.get(v) is not None:
        u, negated = prev[v]
        path.append(("!" if negated else "") + v)
        v = u
    return "".join(f" -> {p}" for p in reversed(path))
