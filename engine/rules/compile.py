"""Compilation of an analysed program onto the engine's public operators.

Strata come in dependency order.  A non-recursive stratum is one relation built from its rules;
a recursive one is one engine loop (``flow.loop``) with one variable per relation, seeded with
what its rules derive from lower strata alone, its body all of its rules.  Each rule is planned
as a sequence of joins in an order chosen by bound variables (start with the first atom, then
always the atom sharing most variables with what is bound), with every comparison, assignment
and negation applied as soon as its variables are bound; negation is an antijoin against a
relation of a lower stratum; a relation is the ``distinct`` union of its rules (``min``/``max``
for a min/max relation, ``count``/``sum`` for an aggregate rule).  An atom's access path (its
constant filters and field order) is built once per relation and shared by every rule that
reads the relation the same way, so joins share its arrangement.

Every operator is named after its rule (``r2 reach: join edge``) or relation (``reach``), so
``flow.stats()``, ``%dd graph`` and the explorer show per-rule and per-relation differences.
"""
from __future__ import annotations

import numpy as np

from ddlab.engine import Collection, DataflowError
from ddlab.engine.loops import Loop

from .analyze import Analysis, Relation
from .errors import RulesRuntimeTypeError
from . import functors
from .ast import (Aggregate, Atom, BinOp, Call, Comparison, Const, Negation, Negative, Rule, Var,
                  Wildcard, variables)

__all__ = ["Compiler", "evaluate_columns"]


# -- expressions on numpy columns ----------------------------------------------------------
def evaluate_columns(expr, columns: dict, n: int):
    """``(values, ok)``: ``expr`` evaluated on whole columns (``columns``: variable -> array);
    ``ok`` is None or a mask of the rows where it is defined (division by zero is not)."""
    if isinstance(expr, Var):
        return columns[expr.name], None
    if isinstance(expr, Const):
        value = expr.value
        arr = np.empty(n, dtype=object) if isinstance(value, str) else np.full(n, value)
        if isinstance(value, str):
            arr[:] = value
        return arr, None
    if isinstance(expr, Negative):
        v, ok = evaluate_columns(expr.operand, columns, n)
        return -v, ok
    if isinstance(expr, BinOp):
        a, ok_a = evaluate_columns(expr.left, columns, n)
        b, ok_b = evaluate_columns(expr.right, columns, n)
        try:
            if expr.op in ARITHMETIC:
                return _arithmetic(expr.op, a, b, _and(ok_a, ok_b))
            values, ok = functors.operate(expr.op, a, b)
            return values, _and(_and(ok_a, ok_b), ok)
        except TypeError as err:     # e.g. a symbol plus a number
            raise _Mismatch(expr, a, b) from err
    if isinstance(expr, Call):
        if expr.name == "as":
            values, ok = evaluate_columns(expr.args[0], columns, n)
            cast, ok_c = functors.cast(values, expr.args[1].name)
            return cast, _and(ok, ok_c)
        args, ok = [], None
        for a in expr.args:
            values, ok_a = evaluate_columns(a, columns, n)
            args.append(values)
            ok = _and(ok, ok_a)
        try:
            values, ok_f = functors.call(expr.name, args)
        except TypeError as err:
            raise RulesFunctorError(expr, err) from err
        return values, _and(ok, ok_f)
    raise DataflowError(f"cannot evaluate {expr}")  # pragma: no cover - the grammar has no other


def _arithmetic(op: str, a, b, ok):
    """``a op b`` on columns, with C semantics for integers; ``(values, ok)``.  Symbols
    (object columns) take no arithmetic: numpy would repeat or join strings."""
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        raise TypeError(f"{op} of a symbol")
    if op == "+":
        return a + b, ok
    if op == "-":
        return a - b, ok
    if op == "*":
        return a * b, ok
    zero = b == 0
    ok = _and(ok, ~zero) if np.any(zero) else ok
    safe = np.where(zero, 1, b)
    integral = a.dtype.kind in "iu" and safe.dtype.kind in "iu"
    if op == "/":
        if not integral:
            return a / safe, ok
        q = a // safe                       # C semantics (Soufflé): truncate toward zero
        return np.where((q < 0) & (q * safe != a), q + 1, q), ok
    # "%": C's remainder for integers and floats alike (the sign of the dividend, as
    # Soufflé's C++ computes it), so -7.0 % 2 is -1.0 as -7 % 2 is -1; np.mod's floored
    # remainder (Python's) would give 1.0 for the float and -1 for the int
    return np.fmod(a, safe), ok


ARITHMETIC = ("+", "-", "*", "/", "%")


class RulesFunctorError(TypeError):
    """A functor met values it does not take (``strlen`` of a number)."""

    def __init__(self, node, err):
        super().__init__(f"{node}: {err}")
        self.node = node


class _Mismatch(TypeError):
    """Values of types ``node`` (a comparison or an operator) cannot take together; the
    compiler's wrapper (:meth:`Compiler._in_words`) turns it into a RulesRuntimeTypeError."""

    def __init__(self, node, left, right):
        super().__init__(str(node))
        self.node, self.left, self.right = node, left, right

    def message(self) -> str:
        node = self.node
        sides = [(node.left, _type_of(self.left)), (node.right, _type_of(self.right))]
        what = "compares" if isinstance(node, Comparison) else f"applies {node.op} to"
        described = ", ".join(f"{term} is a {kind}" + (f" ({example!r})" if not isinstance(
            term, Const) and example is not None else "") for term, (kind, example) in sides)
        return f"{node} {what} a {sides[0][1][0]} and a {sides[1][1][0]}: {described}"


def _type_of(values) -> tuple:
    """``(type name in the rules' words, an example value)`` of a column."""
    arr = np.asarray(values)
    example = arr.flat[0].item() if arr.size and hasattr(arr.flat[0], "item") else \
        (arr.flat[0] if arr.size else None)
    kind = arr.dtype.kind
    if kind in "iu":
        return "number", example
    if kind == "f":
        return "float", example
    if kind == "b":
        return "boolean", example
    names = {str: "symbol", int: "number", float: "float", bool: "boolean"}
    seen = sorted({names.get(type(v), type(v).__name__) for v in arr.flat[:1000]})
    return (seen[0] if len(seen) == 1 else " or ".join(seen) or "value"), example


def _and(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


_COMPARE = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
            ">": np.greater, ">=": np.greater_equal}


class _Bindings:
    """A collection whose records are the values of ``vars`` (one field per variable)."""

    def __init__(self, coll: Collection, vars: list):
        self.coll, self.vars = coll, list(vars)


class Compiler:
    """Builds one analysed program on a flow; see the module docstring.

    ``relations`` maps every relation to its collection outside loops; ``rule_ops`` maps a
    rule's index to the ids of the operators built for it; ``relation_ops`` a relation to the
    ids of the operators that assemble it; ``plans`` a rule's index to its steps in words;
    ``bindings`` a count/sum rule's index to ``(operator id, variables)`` of its distinct body
    bindings (what its proofs show as the group's facts).
    """

    def __init__(self, analysis: Analysis, inputs: dict, flow, prefix: str = "",
                 limit: int | None = None, partial: bool = False):
        self.analysis, self.inputs, self.flow = analysis, inputs, flow
        self.prefix, self.limit, self.partial = prefix, limit, partial
        self.relations: dict[str, Collection] = {}
        self.rule_ops: dict[int, list] = {}
        self.rule_outputs: dict[int, list] = {}
        self.relation_ops: dict[str, list] = {}
        self.relation_results: dict[str, list] = {}
        self.plans: dict[int, list] = {}
        self.bindings: dict[int, tuple] = {}
        self.loops: list[str] = []
        self._paths: dict = {}
        self._empty = None
        self._unit = None
        self._owner = None          # (rule index) or ("relation", name): who an op belongs to

    # -- naming and bookkeeping ----------------------------------------------------------
    def _name(self, what: str) -> str:
        owner = self._owner
        if owner is None:
            return what
        if isinstance(owner, tuple):
            return f"{owner[1]}{': ' + what if what else ''}"
        return f"r{owner} {self.analysis.program.rules[owner - 1].head.relation}: {what}"

    def _made(self, coll: Collection) -> Collection:
        owner = self._owner
        if isinstance(owner, tuple):
            self.relation_ops.setdefault(owner[1], []).append(coll.id)
        elif owner is not None:
            self.rule_ops.setdefault(owner, []).append(coll.id)
        return coll

    def _in_words(self, fn):
        """``fn`` (a column function of the rule being built) raising a type mismatch as a
        :class:`RulesRuntimeTypeError` at the place in the program, with the two types; the
        engine names it ``rule rN (line L)`` in the OperatorError around it."""
        rule = self.analysis.program.rules[self._owner - 1]
        text = self.analysis.program.text
        hint = ("symbols compare and combine with symbols, numbers with numbers: check which "
                "field of the input holds what")

        def in_words(*cols):
            try:
                return fn(*cols)
            except _Mismatch as err:
                raise RulesRuntimeTypeError(err.message(), text, err.node.pos, hint) from None
            except RulesFunctorError as err:
                raise RulesRuntimeTypeError(str(err), text, err.node.pos, hint) from None
            except TypeError as err:
                raise RulesRuntimeTypeError(f"r{rule.index} met values it cannot take: {err}",
                                            text, rule.pos, hint) from err
        in_words.__qualname__ = f"rule r{rule.index} (line {rule.pos.line})"
        return in_words

    # -- sources -------------------------------------------------------------------------
    def empty(self) -> Collection:
        """An always-empty collection (the seed of a variable with no base rules)."""
        if self._empty is None:
            self._empty = self.flow.input(self._unique_input("empty"))
        return self._empty

    def unit(self) -> Collection:
        """A collection of one record (the binding of a rule whose body has no positive
        atom: ``Satisfiable() :- !Inconsistent().``)."""
        if self._unit is None:
            self._unit = self.flow.input(self._unique_input("one binding"))
            self._unit.insert([0])
        return self._unit

    def _unique_input(self, what: str) -> str:
        base = f"{self.prefix}{what}"
        name, k = base, 2
        while name in self.flow.inputs:
            name, k = f"{base} {k}", k + 1
        return name

    def _source(self, rel: Relation) -> list:
        """Collections holding the tuples that rules do not derive: the input and the facts."""
        parts = []
        if rel.is_input:
            coll = self.inputs[rel.source]
            if rel.source_columns:
                cols = list(coll.columns)
                coll = coll.project(*[cols.index(c) for c in rel.source_columns],
                                    name=f"{rel.name}: fields of {rel.source}")
            parts.append(coll)
        if rel.facts:
            facts = self.flow.input(self._unique_input(f"facts {rel.name}"))
            facts.insert([tuple(a.value for a in f.head.args) if rel.arity > 1
                          else f.head.args[0].value for f in rel.facts])
            parts.append(facts)
        return parts

    # -- the program ---------------------------------------------------------------------
    def build(self) -> dict:
        rels = self.analysis.relations
        for rel in rels.values():
            if rel.declared and not (rel.derived or rel.is_input):
                self.relations[rel.name] = self.empty()      # declared, never given tuples
            if rel.is_input and not rel.rules:
                self._owner = ("relation", rel.name)
                parts = self._source(rel)
                self.relations[rel.name] = self._assemble(rel, parts, inside=False)
        for stratum in self.analysis.strata:
            if not stratum.recursive:
                (name,) = stratum.relations
                rel = rels[name]
                outs = [self._rule(rule, self.relations) for rule in rel.rules]
                self._owner = ("relation", name)
                self.relations[name] = self._assemble(rel, self._source(rel) + outs, False)
            elif self.partial:
                self._unrolled(stratum)
            else:
                self._loop(stratum)
        self._owner = None
        out = {}
        for name, coll in self.relations.items():
            out[name] = coll.rename(*rels[name].columns)
        return out

    def _assemble(self, rel: Relation, parts: list, inside: bool) -> Collection:
        """The relation from its parts (rule outputs in head order, inputs, facts)."""
        out = self._assembled(rel, parts)
        if out is not self._empty:
            self.relation_results.setdefault(rel.name, []).append(out.id)
        return out

    def _assembled(self, rel: Relation, parts: list) -> Collection:
        if not parts:
            return self.empty()
        coll = parts[0] if len(parts) == 1 else self._made(
            parts[0].concat(*parts[1:], name=self._name("union")))
        if rel.aggregate is None:
            if len(parts) == 1 and coll.holds_set:   # e.g. an input made with distinct=True
                return coll
            return self._made(coll.distinct(name=self._name("")))
        pos, func = rel.aggregate
        if func in ("count", "sum"):
            return coll          # the rule's reduce made the relation already
        return self._extreme(coll, rel.arity, pos, func)

    def _extreme(self, coll, arity, pos, func):
        order = [j for j in range(arity) if j != pos] + [pos]
        if order != list(range(arity)):
            coll = self._made(coll.project(*order, name=self._name("group first")))
        coll = self._made(getattr(coll, func)(key_columns=arity - 1, name=self._name(func)))
        if order != list(range(arity)):
            back = [order.index(j) for j in range(arity)]
            coll = self._made(coll.project(*back, name=self._name("fields in order")))
        return coll

    def _base_rules(self, rel, members):
        return [r for r in rel.rules if not any(
            isinstance(lit, Atom) and lit.relation in members for lit in r.body)]

    def _loop(self, stratum) -> None:
        rels = self.analysis.relations
        members = set(stratum.relations)
        seeds = {}
        for name in stratum.relations:
            rel = rels[name]
            outs = [self._rule(r, self.relations) for r in self._base_rules(rel, members)]
            self._owner = ("relation", name)
            parts = self._source(rel) + outs
            seeds[name] = self._assemble(rel, parts, False) if parts else self.empty()
        self._owner = None
        loop = Loop(self.flow, self.flow.root, stratum.name, self.limit,
                    hint=self._divergence_hint(stratum))
        self.loops.append(loop.scope.path)
        variables_ = {n: loop.variable(seeds[n]) for n in stratum.relations}
        inside = dict(self.relations)
        inside.update(variables_)
        for name in stratum.relations:
            rel = rels[name]
            outs = [self._rule(r, inside) for r in rel.rules
                    if r not in self._base_rules(rel, members)]
            self._owner = ("relation", name)
            seed = seeds[name]
            parts = ([seed.enter(loop)] if seed is not self._empty else []) + outs
            result = self._assemble(rel, parts, True)
            variables_[name].set(result)
            self.relations[name] = loop.leave(result)
        self._owner = None

    def _divergence_hint(self, stratum) -> str:
        """What the non-convergence error of the stratum's loop says, in the program's words:
        the recursive relations, their recursive rules with line numbers, and the options."""
        rels = self.analysis.relations
        members = set(stratum.relations)
        recursive = [r for name in stratum.relations for r in rels[name].rules
                     if r not in self._base_rules(rels[name], members)]
        which = (f"relation {stratum.relations[0]}" if len(stratum.relations) == 1 else
                 f"relations {', '.join(stratum.relations)}")
        rules = "; ".join(f"r{r.index} (line {r.pos.line}): {r}" for r in recursive)
        return (f"The recursive {which} still derived new facts after that many rounds of "
                f"{rules} If they can derive facts without end (y = x + 1 around a cycle), "
                f"bound them, e.g. with a comparison in the rule; else allow more rounds with "
                f"rules(..., limit=N) (a %%dd rules cell: --limit N), or keep what N rounds "
                f'derive with on_limit="partial" (--partial).')

    def _unrolled(self, stratum) -> None:
        """``limit`` rounds of the stratum's rules without a loop: what a loop would hold
        after that many iterations (``on_limit="partial"``)."""
        rels = self.analysis.relations
        members = set(stratum.relations)
        current = {}
        for name in stratum.relations:
            rel = rels[name]
            outs = [self._rule(r, self.relations) for r in self._base_rules(rel, members)]
            self._owner = ("relation", name)
            parts = self._source(rel) + outs
            current[name] = self._assemble(rel, parts, False) if parts else self.empty()
        base = dict(current)
        for _ in range(self.limit or 0):
            env = dict(self.relations)
            env.update(current)
            nxt = {}
            for name in stratum.relations:
                rel = rels[name]
                outs = [self._rule(r, env) for r in rel.rules
                        if r not in self._base_rules(rel, members)]
                self._owner = ("relation", name)
                parts = ([base[name]] if base[name] is not self._empty else []) + outs
                nxt[name] = self._assemble(rel, parts, False)
            current = nxt
        self._owner = None
        self.relations.update(current)

    # -- one rule ------------------------------------------------------------------------
    def _rule(self, rule: Rule, env: dict) -> Collection:
        """The rule's output: head tuples (for count/sum: the relation itself)."""
        self._owner = rule.index
        plan = self.plans.setdefault(rule.index, [])
        plan.clear()
        atoms = [lit for lit in rule.body if isinstance(lit, Atom)]
        pending = [lit for lit in rule.body if not isinstance(lit, Atom)]
        order = _join_order(atoms, pending)
        if order:
            first = order.pop(0)
            b = self._atom_bindings(first, env)
            plan.append(f"scan {first}")
        else:        # a body of negations and tests alone: they filter the one empty binding
            b = _Bindings(self.unit(), ["$unit"])
            plan.append("start from one empty binding")
        b, pending = self._apply_ready(b, pending, plan, env)
        for atom in order:
            b = self._join(b, atom, env, plan)
            b, pending = self._apply_ready(b, pending, plan, env)
        assert not pending, f"unapplied literals {pending}"   # safety was checked
        out = self._head(rule, b, plan)
        self.rule_outputs.setdefault(rule.index, []).append(out.id)
        return out

    def _access(self, atom: Atom, env: dict, key: list, distinct: bool = False):
        """The relation of ``atom`` filtered by its constants and repeated variables, with
        fields ``key`` first then the atom's other variables: built once and shared."""
        coll = env[atom.relation]
        consts = tuple((j, a.value) for j, a in enumerate(atom.args) if isinstance(a, Const))
        first_at: dict = {}
        equal = []
        for j, a in enumerate(atom.args):
            if isinstance(a, Var):
                if a.name in first_at:
                    equal.append((first_at[a.name], j))
                else:
                    first_at[a.name] = j
        names = list(first_at)
        fields = [v for v in key] + [v for v in names if v not in key]
        positions = tuple(first_at[v] for v in fields)
        memo = (id(coll), consts, tuple(equal), positions, distinct)
        if memo in self._paths:
            return self._paths[memo], fields or ["$exists"]
        owner, self._owner = self._owner, ("relation", atom.relation)
        out = coll
        if consts or equal:
            def keep(*cols, consts=consts, equal=equal):
                mask = np.ones(len(cols[0]), dtype=bool)
                for j, v in consts:
                    mask &= cols[j] == v
                for i, j in equal:
                    mask &= cols[i] == cols[j]
                return mask
            what = ", ".join([f"{atom.relation}[{j}] = {v!r}" for j, v in consts]
                             + [f"{atom.relation}[{i}] = {atom.relation}[{j}]" for i, j in equal])
            out = self._made(out.filter_columns(keep, name=self._name(f"where {what}")))
        if positions != tuple(range(len(atom.args))) and positions:
            out = self._made(out.project(*positions, name=self._name(
                f"fields {', '.join(fields)}")))
        if distinct and any(isinstance(a, Wildcard) for a in atom.args):
            out = self._made(out.distinct(name=self._name("distinct")))
        if not fields:
            # no variable: the atom is a test; one record (0) while any tuple matches
            out = self._made(out.map_columns(lambda *c: np.zeros(len(c[0]), np.int64),
                                             name=self._name("exists")))
            out = self._made(out.distinct(name=self._name("exists")))
        self._owner = owner
        self._paths[memo] = out
        return out, fields or ["$exists"]

    def _atom_bindings(self, atom, env) -> _Bindings:
        coll, fields = self._access(atom, env, [])
        return _Bindings(coll, fields)

    def _keyed(self, b: _Bindings, key: list, plan=None) -> _Bindings:
        """``b`` with the ``key`` variables first (a projection if they are not already)."""
        fields = key + [v for v in b.vars if v not in key]
        if fields == b.vars:
            return b
        order = [b.vars.index(v) for v in fields]
        return _Bindings(self._made(b.coll.project(*order, name=self._name(
            f"key {', '.join(key)}"))), fields)

    def _join(self, b: _Bindings, atom: Atom, env, plan) -> _Bindings:
        names = _vars_of(atom)
        key = [v for v in names if v in b.vars]
        if not key:
            plan.append(f"cross product with {atom}")
            right, fields = self._access(atom, env, [])
            one = self._made(b.coll.map_columns(lambda *c: (np.zeros(len(c[0]), np.int64),) + c,
                                                name=self._name("constant key")))
            other = self._made(right.map_columns(
                lambda *c: (np.zeros(len(c[0]), np.int64),) + c, name=self._name("constant key")))
            joined = self._made(one.join(other, name=self._name(f"join {atom.relation}")))
            width = 1 + len(b.vars) + len(fields)
            out = self._made(joined.project(*range(1, width), name=self._name("drop key")))
            return _Bindings(out, b.vars + fields)
        right, fields = self._access(atom, env, key)
        left = self._keyed(b, key)
        plan.append(f"join {atom} on {', '.join(key)}")
        joined = self._made(left.coll.join(right, key_columns=len(key),
                                           name=self._name(f"join {atom.relation}")))
        return _Bindings(joined, left.vars + fields[len(key):])

    def _apply_ready(self, b: _Bindings, pending: list, plan, env):
        """Apply every literal whose variables are bound (assignments bind more)."""
        progress = True
        while progress:
            progress = False
            for lit in list(pending):
                new = self._try(b, lit, plan, env)
                if new is not None:
                    b = new
                    pending.remove(lit)
                    progress = True
        return b, pending

    def _try(self, b: _Bindings, lit, plan, env):
        have = set(b.vars)
        if isinstance(lit, Negation):
            if set(_vars_of(lit.atom)) <= have:
                return self._antijoin(b, lit.atom, env, plan)
            return None
        if not isinstance(lit, Comparison):  # pragma: no cover - atoms are joined
            return None
        lv, rv = set(variables(lit.left)), set(variables(lit.right))
        if lv | rv <= have:
            plan.append(f"where {lit}")
            return self._filter(b, lit)
        if lit.op == "=":
            for target, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(target, Var) and target.name not in have and \
                        set(variables(expr)) <= have:
                    plan.append(f"let {target.name} = {expr}")
                    return self._assign(b, target.name, expr)
        return None

    def _filter(self, b: _Bindings, lit: Comparison) -> _Bindings:
        names, cmp = list(b.vars), _COMPARE[lit.op]

        def keep(*cols):
            env = dict(zip(names, cols))
            n = len(cols[0])
            left, ok_l = evaluate_columns(lit.left, env, n)
            right, ok_r = evaluate_columns(lit.right, env, n)
            try:
                mask = np.asarray(cmp(left, right), dtype=bool)
            except TypeError as err:     # e.g. a symbol compared with a number
                raise _Mismatch(lit, left, right) from err
            ok = _and(ok_l, ok_r)
            return mask if ok is None else mask & ok
        return _Bindings(self._made(b.coll.filter_columns(self._in_words(keep), name=self._name(
            f"where {lit}"))), b.vars)

    def _assign(self, b: _Bindings, var: str, expr) -> _Bindings:
        names = list(b.vars)
        coll = self._defined(b, [expr], f"{var} defined")

        def add(*cols):
            value, _ = evaluate_columns(expr, dict(zip(names, cols)), len(cols[0]))
            return tuple(cols) + (value,)
        return _Bindings(self._made(coll.map_columns(self._in_words(add),
                                                     name=self._name(f"let {var} = {expr}"))),
                         names + [var])

    def _defined(self, b: _Bindings, exprs, what) -> Collection:
        """``b``'s collection without the rows where an expression is undefined (x / 0)."""
        if not any(_divides(e) for e in exprs):
            return b.coll
        names = list(b.vars)

        def keep(*cols):
            env, n = dict(zip(names, cols)), len(cols[0])
            mask = np.ones(n, dtype=bool)
            for e in exprs:
                _, ok = evaluate_columns(e, env, n)
                if ok is not None:
                    mask &= ok
            return mask
        return self._made(b.coll.filter_columns(self._in_words(keep), name=self._name(what)))

    def _antijoin(self, b: _Bindings, atom: Atom, env, plan) -> _Bindings:
        key = [v for v in _vars_of(atom)]
        right, fields = self._access(atom, env, key, distinct=True)
        plan.append(f"antijoin {atom}" + (f" on {', '.join(key)}" if key else ""))
        if not key:
            left = self._made(b.coll.map_columns(
                lambda *c: (np.zeros(len(c[0]), np.int64),) + c, name=self._name("constant key")))
            hit = self._made(left.join(right, name=self._name(f"semijoin {atom.relation}")))
            hit = self._made(hit.project(*range(1, 1 + len(b.vars)), name=self._name("drop key")))
            gone = self._made(hit.negate(name=self._name(f"not {atom.relation}")))
            return _Bindings(self._made(b.coll.concat(gone, name=self._name(
                f"antijoin {atom.relation}"))), b.vars)
        left = self._keyed(b, key)
        hit = self._made(left.coll.join(right, key_columns=len(key),
                                        name=self._name(f"semijoin {atom.relation}")))
        gone = self._made(hit.negate(name=self._name(f"not {atom.relation}")))
        return _Bindings(self._made(left.coll.concat(gone, name=self._name(
            f"antijoin {atom.relation}"))), left.vars)

    def _head(self, rule: Rule, b: _Bindings, plan) -> Collection:
        rel = self.analysis.relations[rule.head.relation]
        args = list(rule.head.args)
        agg = rule.aggregate
        if agg and agg[1].func in ("count", "sum"):
            return self._count_sum(rule, rel, b, plan)
        exprs = [a.arg if isinstance(a, Aggregate) else a for a in args]
        plan.append(f"emit {rule.head}")
        if all(isinstance(e, Var) for e in exprs):
            # always an operator of the rule's own, so its output counts per rule in stats
            order = [b.vars.index(e.name) for e in exprs]
            return self._made(b.coll.project(*order, name=self._name("head")))
        coll = self._defined(b, exprs, "defined")
        names = list(b.vars)
        floats = [bool(rel.types) and rel.types[j] == "float" for j in range(len(exprs))]

        def make(*cols):
            env, n = dict(zip(names, cols)), len(cols[0])
            return tuple(_as_float(evaluate_columns(e, env, n)[0]) if f else
                         evaluate_columns(e, env, n)[0] for e, f in zip(exprs, floats))
        return self._made(coll.map_columns(self._in_words(make), name=self._name("head")))

    def _count_sum(self, rule, rel, b: _Bindings, plan) -> Collection:
        """``count``/``sum`` over the rule's distinct bindings, grouped by the other head
        fields; the result is the relation (in head order)."""
        pos, agg = rule.aggregate
        plan.append(f"{agg.func} over distinct bindings of {', '.join(b.vars)}")
        distinct = self._made(b.coll.distinct(name=self._name("distinct bindings")))
        self.bindings[rule.index] = (distinct.id, list(b.vars))
        b = _Bindings(distinct, b.vars)
        group = [a for j, a in enumerate(rule.head.args) if j != pos]
        exprs = group + ([agg.arg] if agg.func == "sum" else [])
        coll = self._defined(b, exprs, "defined")
        names = list(b.vars)
        grouped = len(group) > 0

        def make(*cols):
            env, n = dict(zip(names, cols)), len(cols[0])
            out = tuple(evaluate_columns(e, env, n)[0] for e in exprs)
            if not grouped:
                out = (np.zeros(n, np.int64),) + out
            if agg.func == "count":
                return out
            return out
        keyed = self._made(coll.map_columns(self._in_words(make), name=self._name("group")))
        nkey = max(len(group), 1)
        reduced = self._made(getattr(keyed, agg.func)(key_columns=nkey,
                                                      name=self._name(agg.func)))
        arity = rel.arity
        if not grouped:
            return self._made(reduced.project(1, name=self._name("total")))
        order = [j for j in range(arity) if j != pos] + [pos]
        if order != list(range(arity)):
            back = [order.index(j) for j in range(arity)]
            reduced = self._made(reduced.project(*back, name=self._name("fields in order")))
        return reduced


def _join_order(atoms: list, pending: list) -> list:
    """Atoms in join order: first one whose variables need no computed value (a written
    ``e(x + 1)`` has a fresh variable an assignment computes), then always the atom sharing
    most variables with what is bound or computable from it."""
    computed = {}
    for lit in pending:
        if isinstance(lit, Comparison) and lit.origin and isinstance(lit.left, Var):
            computed[lit.left.name] = set(variables(lit.right))

    def closure(bound):
        grown = True
        while grown:
            grown = False
            for var, needs in computed.items():
                if var not in bound and needs <= bound:
                    bound.add(var)
                    grown = True
        return bound

    if not atoms:
        return []
    plain = [a for a in atoms if not set(_vars_of(a)) & set(computed)]
    first = plain[0] if plain else atoms[0]
    order, rest = [first], [a for a in atoms if a is not first]
    bound = closure(set(_vars_of(first)))
    while rest:
        best = max(rest, key=lambda a: (len(set(_vars_of(a)) & bound), -rest.index(a)))
        order.append(best)
        rest.remove(best)
        bound = closure(bound | set(_vars_of(best)))
    return order


def _as_float(values):
    """A head field declared ``float``: integer results (``x + 1`` of an int column) as floats,
    so the column never mixes the two kinds."""
    arr = np.asarray(values)
    return arr.astype(np.float64) if arr.dtype.kind in "iub" else arr


def _vars_of(atom: Atom) -> list:
    out = []
    for a in atom.args:
        if isinstance(a, Var) and a.name not in out:
            out.append(a.name)
    return out


def _divides(expr) -> bool:
    """Whether ``expr`` may be undefined on some rows (a division, a power, a functor)."""
    if isinstance(expr, BinOp):
        return expr.op in ("/", "%", "^") or _divides(expr.left) or _divides(expr.right)
    if isinstance(expr, Negative):
        return _divides(expr.operand)
    return isinstance(expr, Call)
