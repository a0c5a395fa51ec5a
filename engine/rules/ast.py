"""The parsed program: plain frozen dataclasses, each term and literal with its position.

Why positions everywhere: every error the analysis raises points at the place in the cell
(line, column and a caret), so a person can act on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pos:
    """Where something starts in the program text (1-based line and column)."""

    line: int
    column: int
    end_column: int | None = None


# -- terms --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Var:
    name: str
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Wildcard:
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Const:
    value: object              # int, float or str
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return f'"{self.value}"' if isinstance(self.value, str) else repr(self.value)


@dataclass(frozen=True)
class BinOp:
    op: str                    # + - * / %
    left: object
    right: object
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        prec = _PRECEDENCE[self.op]

        def side(t, right):
            if isinstance(t, BinOp) and (_PRECEDENCE[t.op] < prec
                                         or (right and _PRECEDENCE[t.op] == prec)):
                return f"({t})"
            return str(t)
        return f"{side(self.left, False)} {self.op} {side(self.right, True)}"


_PRECEDENCE = {"lor": -5, "land": -4, "bor": -3, "bxor": -2, "band": -1, "bshl": 0, "bshr": 0,
               "bshru": 0, "+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "^": 3}


@dataclass(frozen=True)
class Call:
    """A functor: ``cat(a, b)``, ``strlen(s)``, ``min(x, y)``, ``to_number(s)``, ``bnot x``
    (:mod:`.functors` names them all and computes them)."""

    name: str
    args: tuple
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Negative:
    operand: object
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        inner = str(self.operand)
        return f"-({inner})" if isinstance(self.operand, BinOp) else f"-{inner}"


@dataclass(frozen=True)
class Aggregate:
    """``count(y)``, ``sum(w)``, ``min(d + 1)``, ``max(v)`` in a head argument."""

    func: str
    arg: object | None         # an expression (None: count() / count(_))
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return f"{self.func}({'' if self.arg is None else self.arg})"


@dataclass(frozen=True)
class BodyAggregate:
    """Soufflé's ``count : { edge(x, _) }``, ``sum w : { ... }``: a term; ``body`` is one
    conjunction (a tuple of literals).  :mod:`.normalize` rewrites it into a relation of its
    own and an atom reading it."""

    func: str
    arg: object | None
    body: tuple
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        arg = f" {self.arg}" if self.arg is not None else ""
        return f"{self.func}{arg} : {{ {', '.join(map(str, self.body))} }}"


def variables(term) -> list[str]:
    """The variable names in a term, in order of first appearance."""
    out: list[str] = []

    def walk(t):
        if isinstance(t, Var):
            if t.name not in out:
                out.append(t.name)
        elif isinstance(t, BinOp):
            walk(t.left)
            walk(t.right)
        elif isinstance(t, Negative):
            walk(t.operand)
        elif isinstance(t, Call):
            for a in (t.args[:1] if t.name == "as" else t.args):     # as(x, type)
                walk(a)
        elif isinstance(t, Aggregate) and t.arg is not None:
            walk(t.arg)
    walk(term)
    return out


# -- literals -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Negation:
    atom: Atom
    pos: Pos = field(compare=False)

    def __str__(self) -> str:
        return f"!{self.atom}"


@dataclass(frozen=True)
class Comparison:
    op: str                    # = != < <= > >=
    left: object
    right: object
    pos: Pos = field(compare=False)
    #: for an assignment the compiler wrote (an atom's expression argument bound to a fresh
    #: variable), the atom as the person wrote it; error messages name it
    origin: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


# -- clauses and directives ---------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """One head and one conjunctive body (disjunctions and several heads are expanded into
    several rules sharing ``source``, the clause's text)."""

    head: Atom
    body: tuple
    pos: Pos = field(compare=False)
    source: str = field(default="", compare=False)
    index: int = field(default=0, compare=False)   # 1-based, in program order

    @property
    def aggregate(self) -> tuple[int, Aggregate] | None:
        for j, a in enumerate(self.head.args):
            if isinstance(a, Aggregate):
                return j, a
        return None

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(map(str, self.body))}."


@dataclass(frozen=True)
class Decl:
    name: str
    attributes: tuple          # ((name, type), ...)
    pos: Pos = field(compare=False)


@dataclass(frozen=True)
class InputDirective:
    name: str
    columns: tuple | None      # names given in .input NAME(a, b)
    source: str | None         # the collection after ``from``
    pos: Pos = field(compare=False)
    source_pos: Pos | None = field(default=None, compare=False)
    #: Soufflé's IO options, ``IO=file, filename="edge.csv", delimiter=","`` (key -> value)
    options: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class OutputDirective:
    names: tuple
    pos: Pos = field(compare=False)
    options: dict = field(default_factory=dict, compare=False)


@dataclass
class Program:
    """A parsed program: directives and rules in text order, and the text itself."""

    text: str
    decls: list = field(default_factory=list)
    types: dict = field(default_factory=dict)       # .type name -> ((names...), pos)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    rules: list = field(default_factory=list)
