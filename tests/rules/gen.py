"""Random rule programs for the fuzzer, in a representation of their own, and their naive
bottom-up evaluation from scratch.

Written independently of the compiler: the generator's program (:class:`GProgram`) is
printed as text for ``ddlab.rules`` and evaluated here directly (nested loops over the
atoms' tuples; the strongly connected components of each level's relations, found with
networkx, in dependency order, each iterated from the empty set until nothing changes); it
never uses the compiler's parser, analysis or plan.

Programs read two inputs ``a(x, y)`` and ``b(x, y)`` of small integers and define relations
in levels: a level's rules read the inputs, lower levels (also under negation and in
aggregates) and, positively, their own level (recursion, mutual recursion, ``min``/``max``
inside recursion).  Every value stays in a finite domain (``% M`` arithmetic, ``min`` of
growing candidates, ``max`` of shrinking ones), so every program has a fixed point; a
program whose evaluation cycles all the same (negation-free levels can still oscillate
through ``min`` and a comparison) is reported as :class:`Diverges`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx
from hypothesis import strategies as st

M = 4                      # input values are 0..M-1
VARS = ("x", "y", "z", "w")
INPUTS = {"a": 2, "b": 2}


class Diverges(Exception):
    def __init__(self, cycle: bool):
        super().__init__("cycles" if cycle else "no fixed point within the bound")
        self.cycle = cycle


# -- the program -------------------------------------------------------------------------
@dataclass(frozen=True)
class GAtom:
    rel: str
    args: tuple            # variable names (str), constants (int), or "_"

    def text(self) -> str:
        return f"{self.rel}({', '.join(a.text() if isinstance(a, GExpr) else str(a) for a in self.args)})"


@dataclass(frozen=True)
class GExpr:
    """``(var + add) % mod`` (mod None: no modulo)."""
    var: str
    add: int = 0
    mod: int | None = None

    def text(self) -> str:
        s = self.var if not self.add else f"{self.var} + {self.add}" if self.add > 0 else \
            f"{self.var} - {-self.add}"
        return f"({s}) % {self.mod}" if self.mod else s

    def value(self, env):
        v = env[self.var] + self.add
        # C's remainder (the dividend's sign), as the rules define % (Soufflé's C++): -1 % 4 is
        # -1, where Python's floored % gives 3
        return int(math.fmod(v, self.mod)) if self.mod else v


@dataclass(frozen=True)
class GFun:
    """A functor or a bitwise/logical operator of two variables: ``max(x, y)``, ``x band y``."""
    name: str
    a: str
    b: str

    def text(self) -> str:
        if self.name in ("min", "max"):
            return f"{self.name}({self.a}, {self.b})"
        return f"{self.a} {self.name} {self.b}"

    def value(self, env):
        x, y = env[self.a], env[self.b]
        return {"min": min, "max": max, "band": lambda p, q: p & q, "bor": lambda p, q: p | q,
                "bxor": lambda p, q: p ^ q,
                "land": lambda p, q: int(bool(p) and bool(q))}[self.name](x, y)


@dataclass(frozen=True)
class GRule:
    head: str
    head_args: tuple                 # var names / ints / GExpr / ("agg", func, GExpr|None)
    positive: tuple                  # GAtom...
    negative: tuple = ()             # GAtom...
    compares: tuple = ()             # (op, var, var-or-int)
    lets: tuple = ()                 # (new var, GExpr)
    #: Soufflé's body aggregate ``c = count : { a(x, u1) }`` as (var, func, GAtom, arg var or
    #: None): variables of the atom bound outside are its group, ``u1``, ``u2`` its own
    bagg: tuple = ()

    def text(self) -> str:
        def head_arg(a):
            if isinstance(a, tuple):
                return f"{a[1]}({'' if a[2] is None else a[2].text()})"
            return a.text() if isinstance(a, GExpr) else str(a)
        body = [p.text() for p in self.positive]
        body += [f"{v} = {e.text()}" for v, e in self.lets]
        if self.bagg:
            var, func, atom, arg = self.bagg
            body.append(f"{var} = {func}{' ' + arg if arg else ''} : {{ {atom.text()} }}")
        body += [f"{left} {op} {right}" for op, left, right in self.compares]
        body += ["!" + n.text() for n in self.negative]
        return f"{self.head}({', '.join(head_arg(a) for a in self.head_args)}) :- {', '.join(body)}."


@dataclass
class GProgram:
    arity: dict                       # relation -> arity (inputs included)
    levels: list                      # [[relation, ...], ...]
    rules: list                       # GRule...
    aggregate: dict = field(default_factory=dict)    # relation -> (position, func)

    @property
    def derived(self) -> list:
        return [r for level in self.levels for r in level]

    def text(self) -> str:
        lines = [".input a(x, y)", ".input b(x, y)"]
        lines += [r.text() for r in self.rules]
        lines.append(".output " + ", ".join(self.derived))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return "rules program:\n" + self.text()


# -- evaluation ---------------------------------------------------------------------------
def _match(atom, tup, env):
    env = dict(env)
    for a, v in zip(atom.args, tup):
        if a == "_":
            continue
        if isinstance(a, GExpr):          # an expression argument: computed, then compared
            if a.value(env) != v:
                return None
            continue
        if isinstance(a, int):
            if v != a:
                return None
        elif a in env:
            if env[a] != v:
                return None
        else:
            env[a] = v
    return env


def _bindings(rule, db):
    envs = [{}]
    for atom in rule.positive:
        envs = [e2 for e in envs for tup in db[atom.rel] for e2 in [_match(atom, tup, e)]
                if e2 is not None]
    out = []
    for env in envs:
        for var, expr in rule.lets:
            env[var] = expr.value(env)
        if rule.bagg:
            var, func, atom, arg = rule.bagg
            # every matching tuple counts (Soufflé's counting); none: 0 for count and sum
            matched = [m for tup in db[atom.rel] for m in [_match(atom, tup, env)] if m is not None]
            values = [m[arg] for m in matched] if arg else []
            if func == "count":
                env[var] = len(matched)
            elif func == "sum":
                env[var] = sum(values)
            elif values:
                env[var] = min(values) if func == "min" else max(values)
            else:
                continue
        ok = True
        for op, left, right in rule.compares:
            lv, rv = env[left], (right if isinstance(right, int) else env[right])
            ok = ok and {"<": lv < rv, "<=": lv <= rv, "!=": lv != rv, "=": lv == rv,
                         ">": lv > rv}[op]
        for atom in rule.negative:
            if any(_match(atom, tup, env) is not None for tup in db[atom.rel]):
                ok = False
        if ok:
            out.append(env)
    return out


def _value(a, env):
    if isinstance(a, GExpr):
        return a.value(env)
    if isinstance(a, int):
        return a
    return env[a]


def _relation(program, name, db):
    rules = [r for r in program.rules if r.head == name]
    agg = program.aggregate.get(name)
    if agg is None:
        return {tuple(_value(a, env) for a in r.head_args) for r in rules
                for env in _bindings(r, db)}
    pos, func = agg
    if func in ("count", "sum"):
        (rule,) = rules
        groups: dict = {}
        # Soufflé's counting: every combination of matched tuples counts (each binding the
        # nested loops produce is one), ``_`` fields included
        for env in _bindings(rule, db):
            g = tuple(_value(a, env) for j, a in enumerate(rule.head_args) if j != pos)
            spec = rule.head_args[pos]
            groups[g] = groups.get(g, 0) + (1 if func == "count" else _value(spec[2], env))
        return {g[:pos] + (v,) + g[pos:] for g, v in groups.items()}
    best: dict = {}
    for r in rules:
        for env in _bindings(r, db):
            g = tuple(_value(a, env) for j, a in enumerate(r.head_args) if j != pos)
            spec = r.head_args[pos]
            v = _value(spec[2], env) if isinstance(spec, tuple) else _value(spec, env)
            if g not in best or (v < best[g] if func == "min" else v > best[g]):
                best[g] = v
    return {g[:pos] + (v,) + g[pos:] for g, v in best.items()}


def strata(program: GProgram) -> list:
    """The generator's levels cut into strata, as the rules' semantics define them: the
    strongly connected components of the relations' precedence graph, in dependency order.
    A level may hold two relations of which only one reads the other; evaluated together, the
    reader would see the other's intermediate values, which for a ``min``/``max`` relation are
    not a subset of its final ones (a candidate that a smaller one replaces later)."""
    out = []
    for level in program.levels:
        graph = nx.DiGraph()
        graph.add_nodes_from(level)
        graph.add_edges_from((atom.rel, rule.head) for rule in program.rules if rule.head in level
                             for atom in rule.positive + rule.negative if atom.rel in level)
        condensed = nx.condensation(graph)
        out.extend(sorted(condensed.nodes[c]["members"], key=level.index)
                   for c in nx.topological_sort(condensed))
    return out


def evaluate(program: GProgram, inputs: dict, bound: int = 60) -> dict:
    """Every derived relation as a set of tuples, from the input sets: each stratum iterated
    from the empty set, every rule applied at once to the previous round's relations."""
    db = {k: set(v) for k, v in inputs.items()}
    for level in strata(program):
        current = {r: set() for r in level}
        seen = []
        for _ in range(bound):
            env = dict(db)
            env.update(current)
            new = {r: _relation(program, r, env) for r in level}
            if new == current:
                break
            if new in seen:
                raise Diverges(cycle=True)
            seen.append(new)
            current = new
        else:
            raise Diverges(cycle=False)
        db.update(current)
    return {r: db[r] for r in program.derived}


# -- the strategy ------------------------------------------------------------------------
@st.composite
def programs(draw, max_levels: int = 3):
    arity = dict(INPUTS)
    levels, rules, aggregate = [], [], {}
    n_levels = draw(st.integers(1, max_levels))
    for li in range(n_levels):
        lower = list(arity)                    # inputs and lower levels
        n_rels = draw(st.integers(1, 2))
        names = [f"p{li}{k}" for k in range(n_rels)]
        kinds = {}
        for name in names:
            kind = draw(st.sampled_from(["set", "set", "set", "min", "max", "count", "sum",
                                         "gmin", "gmax", "gcount", "gsum"]))
            kinds[name] = kind
            # g...: a global aggregate, one field and no group
            arity[name] = 1 if kind[0] == "g" else 2 if kind != "set" else \
                draw(st.integers(1, 2))
        # aggregates over lower levels only for count/sum: keep them alone in a level of
        # their own relations' rules (their bodies read lower levels)
        for name in names:
            kind = kinds[name]
            same = [n for n in names if kinds[n] not in ("count", "sum", "gcount", "gsum")]
            if kind in ("count", "sum"):
                aggregate[name] = (draw(st.integers(0, 1)), kind)
                rules.append(draw(_rule(name, arity, lower, [], kind, aggregate[name][0])))
                continue
            if kind in ("gcount", "gsum"):
                aggregate[name] = (0, kind[1:])
                rules.append(draw(_rule(name, arity, lower, [], kind, 0)))
                continue
            if kind in ("min", "max"):
                aggregate[name] = (1, kind)
            if kind in ("gmin", "gmax"):
                aggregate[name] = (0, kind[1:])
            n_rules = draw(st.integers(1, 3))
            for i in range(n_rules):
                # a min/max relation's first rule aggregates in its head (the others may give
                # plain candidates): with only plain candidates the text would declare no
                # aggregate while the oracle applied one
                rules.append(draw(_rule(name, arity, lower, same, kind, 1, plain_ok=i > 0)))
        levels.append(names)
    return GProgram(arity, levels, rules, aggregate)


@st.composite
def _rule(draw, head, arity, lower, same, kind, agg_pos, plain_ok=True):
    sources = lower + same
    n_pos = draw(st.integers(1, 3))
    positive = []
    for _ in range(n_pos):
        rel = draw(st.sampled_from(sources))
        earlier = list(dict.fromkeys(a for p in positive for a in p.args
                                     if isinstance(a, str) and a != "_"))
        # an expression argument over a variable an earlier atom binds: fib(n - 1, a)
        exprs = [st.builds(GExpr, st.sampled_from(earlier), st.integers(-2, 2))] \
            if earlier else []
        args = tuple(draw(st.one_of(*[st.sampled_from(VARS)] * 5, st.integers(0, M - 1),
                                    st.just("_"), *exprs))
                     for _ in range(arity[rel]))
        positive.append(GAtom(rel, args))
    bound = [a for p in positive for a in p.args if isinstance(a, str) and a != "_"]
    bound = list(dict.fromkeys(bound))
    if not bound:        # at least one variable: a constant-only body makes tiny programs
        rel = draw(st.sampled_from(sources))
        positive.append(GAtom(rel, ("x",) + ("_",) * (arity[rel] - 1)))
        bound = ["x"]
    lets = ()
    if draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            lets = (("v", GExpr(draw(st.sampled_from(bound)), draw(st.integers(1, 3)), M)),)
        else:       # functors and operators keep values in 0..M-1 (M a power of two)
            lets = (("v", GFun(draw(st.sampled_from(["min", "max", "band", "bor", "bxor",
                                                     "land"])),
                               draw(st.sampled_from(bound)), draw(st.sampled_from(bound)))),)
        bound = bound + ["v"]
    bagg = ()
    if lower and kind == "set" and draw(st.integers(0, 3)) == 0:
        rel = draw(st.sampled_from(lower))
        args = tuple(draw(st.one_of(st.sampled_from(bound), st.sampled_from(["u1", "u2"]),
                                    st.just("_"), st.integers(0, M - 1)))
                     for _ in range(arity[rel]))
        func = draw(st.sampled_from(["count", "sum", "min", "max"]))
        local = [a for a in args if a in ("u1", "u2")]
        arg = None
        if func != "count":
            if not local:
                func = "count"
            else:
                arg = draw(st.sampled_from(local))
        bagg = ("c", func, GAtom(rel, args), arg)
        bound = bound + ["c"]
    compares = ()
    if draw(st.integers(0, 2)) == 0:
        op = draw(st.sampled_from(["<", "!=", "<=", "="]))
        left = draw(st.sampled_from(bound))
        right = draw(st.one_of(st.sampled_from(bound), st.integers(0, M - 1)))
        compares = ((op, left, right),)
    negative = ()
    if lower and draw(st.integers(0, 2)) == 0:
        rel = draw(st.sampled_from(lower))
        args = tuple(draw(st.one_of(st.sampled_from(bound), st.just("_"), st.integers(0, M - 1),
                                    st.builds(GExpr, st.sampled_from(bound),
                                              st.integers(-2, 2))))
                     for _ in range(arity[rel]))
        negative = (GAtom(rel, args),)
    recursive = any(p.rel in same for p in positive)
    n = arity[head]
    if kind == "set":
        head_args = tuple(draw(st.sampled_from(bound)) if draw(st.integers(0, 5)) else
                          draw(st.integers(0, M - 1)) for _ in range(n))
    elif kind in ("gcount", "gsum"):
        head_args = (("agg", kind[1:], GExpr(draw(st.sampled_from(bound))) if kind == "gsum"
                      else None),)
    elif kind in ("gmin", "gmax"):
        v = draw(st.sampled_from(bound))
        step = draw(st.integers(0, 2)) if recursive else draw(st.integers(-2, 2))
        head_args = (("agg", kind[1:], GExpr(v, step if kind == "gmin" else -step)),)
    elif kind in ("count", "sum"):
        g = draw(st.sampled_from(bound))
        spec = ("agg", kind, GExpr(draw(st.sampled_from(bound))) if kind == "sum" else None)
        head_args = (spec, g) if agg_pos == 0 else (g, spec)
    else:
        g = draw(st.sampled_from(bound))
        v = draw(st.sampled_from(bound))
        # min of growing candidates / max of shrinking ones: converges inside recursion
        step = draw(st.integers(0, 2)) if recursive else draw(st.integers(-2, 2))
        expr = GExpr(v, step if kind == "min" else -step)
        if plain_ok and draw(st.integers(0, 3)) == 0 and not recursive:
            head_args = (g, draw(st.integers(0, M - 1)))       # a plain candidate rule
        else:
            head_args = (g, ("agg", kind, expr))
    return GRule(head, head_args, tuple(positive), negative, compares, lets, bagg)


# -- input streams -------------------------------------------------------------------------
TUPLES = st.tuples(st.integers(0, M - 1), st.integers(0, M - 1))


@st.composite
def windows(draw):
    """Timestamped input events and a walk of window positions, forward and back: each
    epoch the inputs hold the events inside the window (a multiset: repeats count)."""
    n = draw(st.integers(4, 24))
    events = [(draw(st.sampled_from(["a", "b"])), draw(TUPLES), t) for t in range(n)]
    width = draw(st.integers(2, 12))
    starts = draw(st.lists(st.integers(0, n), min_size=2, max_size=8))
    return events, width, starts


def window_contents(events, start, width) -> dict:
    """``{input: {tuple: count}}`` of the events with start <= t < start + width."""
    out = {"a": {}, "b": {}}
    for rel, tup, t in events:
        if start <= t < start + width:
            out[rel][tup] = out[rel].get(tup, 0) + 1
    return out


@st.composite
def updates(draw):
    """Epochs of arbitrary signed updates (removing what is absent included)."""
    epochs = draw(st.lists(st.lists(st.tuples(st.sampled_from(["a", "b"]), TUPLES,
                                              st.sampled_from([1, 1, 1, -1, 2])),
                                    min_size=1, max_size=6), min_size=1, max_size=6))
    return epochs

