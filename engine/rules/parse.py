"""Text -> :class:`~.ast.Program`: lark parses, a transformer builds the AST.

Disjunctions (``;``, also inside parentheses) and clauses with several heads are expanded here
into plain rules (one head, one conjunctive body), each remembering its clause's text, so the
rest of the compiler only ever sees conjunctive rules.
"""
from __future__ import annotations

import ast as pyast
import difflib
from functools import lru_cache
from itertools import product

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput,
                             UnexpectedToken, VisitError)

from .ast import (Aggregate, Atom, BinOp, BodyAggregate, Call, Comparison, Const, Decl, InputDirective, Negation,
                  Negative, OutputDirective, Pos, Program, Rule, Var, Wildcard)
from .errors import RulesError, RulesSyntaxError, UnsupportedError
from .functors import FUNCTORS
from .grammar import GRAMMAR, TERMINAL_WORDS

__all__ = ["parse"]


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def _pos(item) -> Pos:
    if isinstance(item, Token):
        return Pos(item.line, item.column, item.end_column if item.line == item.end_line else None)
    meta = item.meta if hasattr(item, "meta") else item
    end = meta.end_column if getattr(meta, "end_line", None) == meta.line else None
    return Pos(meta.line, meta.column, end)


class _Option(tuple):
    """``(key, value, pos)`` of one IO option."""


def _options(children, text) -> dict:
    out = {}
    for c in children:
        if isinstance(c, _Option):
            key, value, pos = c
            if key in out:
                raise RulesSyntaxError(f"IO option {key} is given twice", text, pos)
            out[key] = (value, pos)
    return out


_HEAD_AGGREGATES = ("count", "sum", "min", "max", "mean")
_OPPOSITE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


class _Conj(tuple):
    """A body under construction: a tuple of alternatives, each a tuple of literals."""


@v_args(meta=True)
class _Build(Transformer):
    def __init__(self, text: str):
        super().__init__()
        self.text = text
        self.program = Program(text)

    # -- terms ---------------------------------------------------------------------------
    def variable(self, meta, children):
        return Var(str(children[0]), _pos(children[0]))

    def integer(self, meta, children):
        text = str(children[0]).rstrip("u")          # 5u: Soufflé's unsigned, a number here
        return Const(int(text, 0) if text[:2] in ("0x", "0b") else int(text), _pos(children[0]))

    def call(self, meta, children):
        name = children[0]
        return Call(str(name), tuple(c for c in children[1:] if c is not None), _pos(name))

    def unop(self, meta, children):
        op, operand = children
        return Call(str(op), (operand,), _pos(op))

    def real(self, meta, children):
        return Const(float(children[0]), _pos(children[0]))

    def string(self, meta, children):
        tok = children[0]
        return Const(pyast.literal_eval(str(tok)), _pos(tok))

    def wildcard(self, meta, children):
        return Wildcard(_pos(children[0]))

    def negative(self, meta, children):
        (operand,) = children
        if isinstance(operand, Const) and not isinstance(operand.value, str):
            return Const(-operand.value, _pos(meta))
        return Negative(operand, _pos(meta))

    def binop(self, meta, children):
        left, op, right = children
        return BinOp(str(op).strip(), left, right, _pos(meta))

    def aggregate(self, meta, children):
        name = children[0]
        arg = children[1] if len(children) > 1 else None
        return Aggregate(str(name), arg, _pos(name))

    def body_aggregate(self, meta, children):
        func, rest = children[0], children[1:]
        arg = rest[0] if len(rest) == 2 else None
        body = rest[-1]
        if isinstance(body, Call):
            body = _Conj([(Atom(body.name, body.args, body.pos),)])
        if len(body) != 1:
            raise RulesSyntaxError(
                f"a disjunction inside {func} : {{ ... }} is not supported", self.text,
                _pos(func), f"give the alternatives a relation of their own and {func} over it")
        return BodyAggregate(str(func), arg, tuple(body[0]), _pos(func))

    def aggregate_wild(self, meta, children):
        return Aggregate(str(children[0]), None, _pos(children[0]))

    # -- literals ------------------------------------------------------------------------
    def atom(self, meta, children):
        return Atom(str(children[0]), tuple(children[1:]), _pos(children[0]))

    def head(self, meta, children):
        """A head's ``count(y)``, ``min(d + 1)`` (a call of one aggregate name with at most one
        argument) is its aggregate; ``min(x, y)`` stays the binary functor."""
        args = tuple(Aggregate(a.name, a.args[0] if a.args else None, a.pos)
                     if isinstance(a, Call) and len(a.args) <= 1 and (
                         a.name in _HEAD_AGGREGATES or a.name not in FUNCTORS)
                     else a for a in children[1:])
        return Atom(str(children[0]), args, _pos(children[0]))

    def bare(self, meta, children):
        """A literal that is neither a comparison nor a group: an atom (parsed as a call),
        or ``true``/``false``."""
        (item,) = children
        if isinstance(item, Call) and item.name in ("contains", "match"):
            # Soufflé's constraint functors: a literal that holds where they are true
            return Comparison("!=", item, Const(0, item.pos), item.pos)
        if isinstance(item, Call):
            return Atom(item.name, item.args, item.pos)
        if isinstance(item, Var) and item.name in ("true", "false"):
            if item.name == "true":
                return _Conj([()])
            return Comparison("!=", Const(0, item.pos), Const(0, item.pos), item.pos)
        raise RulesSyntaxError(f"{item} is not a literal: a body holds atoms such as e(x, y), "
                               "comparisons, negations and groups", self.text, _pos(meta),
                               "compare it with something, e.g. x > 0, or bind it: y = "
                               f"{item}")

    def negation(self, meta, children):
        (item,) = children
        if not isinstance(item, Call):
            raise RulesSyntaxError(f"!{item}: only an atom can be negated", self.text,
                                   _pos(meta), "write !e(x), or negate a comparison by its "
                                   "opposite (x >= 3 for !(x < 3))")
        return Negation(Atom(item.name, item.args, item.pos), _pos(meta))

    def comparison(self, meta, children):
        left, op, right = children
        return Comparison(str(op), left, right, _pos(meta))

    def group(self, meta, children):
        return children[0]

    def negated_group(self, meta, children):
        """``!(a(x) ; b(x))`` is ``!a(x), !b(x)`` (De Morgan); a comparison negates to its
        opposite.  A negated conjunction has no such form and is refused by name."""
        out = []
        for alt in children[0]:
            if len(alt) != 1:
                raise RulesSyntaxError(
                    f"negation of a conjunction, !({', '.join(map(str, alt))}), is not "
                    "supported", self.text, _pos(meta),
                    "give the conjunction its own relation over the variables it shares with "
                    "the rule, and negate that: both(x) :- a(x), b(x).  ... !both(x)")
            (lit,) = alt
            if isinstance(lit, Atom):
                out.append(Negation(lit, lit.pos))
            elif isinstance(lit, Negation):
                out.append(lit.atom)
            else:
                out.append(Comparison(_OPPOSITE[lit.op], lit.left, lit.right, lit.pos))
        return _Conj([tuple(out)])

    def conjunction(self, meta, children):
        # each literal is a plain literal or a nested body (alternatives): distribute
        options = [c if isinstance(c, _Conj) else _Conj([(c,)]) for c in children]
        return _Conj(tuple(lit for part in combo for lit in part) for combo in product(*options))

    def body(self, meta, children):
        return _Conj(alt for conj in children for alt in conj)

    def heads(self, meta, children):
        return children

    # -- clauses and directives ----------------------------------------------------------
    def clause(self, meta, children):
        heads = children[0]
        alternatives = children[1] if len(children) > 1 else _Conj([()])
        source = self.text[meta.start_pos:meta.end_pos]
        for head in heads:
            for alt in alternatives:
                self.program.rules.append(Rule(head, tuple(alt), _pos(meta), source,
                                               len(self.program.rules) + 1))

    def attribute(self, meta, children):
        return (str(children[0]), str(children[1]), _pos(children[0]))

    def decl(self, meta, children):
        for c in children[1:]:
            if isinstance(c, Token) and c.type == "QUALIFIER" and str(c) == "eqrel":
                raise UnsupportedError("eqrel is not supported", self.text, _pos(c),
                                       UNSUPPORTED["eqrel"])
        attrs = tuple((a[0], a[1]) for a in children[1:] if isinstance(a, tuple))
        self.program.decls.append(Decl(str(children[0]), attrs, _pos(children[0])))

    def type_dir(self, meta, children):
        """``.type Name <: symbol`` (a subtype), ``.type U = A | B`` (a union): the names it
        stands for; :func:`~.files.base_type` resolves them to number, float or symbol."""
        name = str(children[0])
        self.program.types[name] = (tuple(str(c) for c in children[1:]), _pos(children[0]))

    def column(self, meta, children):
        return str(children[0])

    def io_option(self, meta, children):
        key, op, value = children
        if str(op) != "=":
            raise RulesSyntaxError(f"an IO option is written {key}=value, not {key}{op}value",
                                   self.text, _pos(op))
        text = str(value)
        if value.type == "STRING":
            text = pyast.literal_eval(text)
        return _Option((str(key), text, _pos(key)))

    def input_dir(self, meta, children):
        name = children[0]
        columns, source, where = None, None, None
        rest = list(children[1:])
        if rest and isinstance(rest[-1], Token) and rest[-1].type == "NAME" and len(rest) >= 2 \
                and isinstance(rest[-2], Token) and rest[-2].type == "FROM":
            source, where = str(rest[-1]), _pos(rest[-1])
            rest = rest[:-2]
        options = _options(rest, self.text)
        rest = [c for c in rest if not isinstance(c, _Option)]
        if rest:
            columns = tuple(str(c) for c in rest)
        self.program.inputs.append(InputDirective(str(name), columns, source, _pos(name), where,
                                                  options))

    def output_dir(self, meta, children):
        names = tuple(str(c) for c in children if isinstance(c, Token) and c.type == "NAME")
        options = _options(children, self.text)
        columns = [c for c in children if isinstance(c, str) and not isinstance(c, Token)]
        if columns:
            raise RulesSyntaxError(f".output takes IO options, not fields ({', '.join(columns)})",
                                   self.text, _pos(meta), '.output r(IO=file, filename="r.csv")')
        self.program.outputs.append(OutputDirective(names, _pos(meta), options))

    def start(self, meta, children):
        return self.program


def parse(text: str) -> Program:
    """Parse a rules program; a :class:`RulesSyntaxError` points at the offending place.

    >>> p = parse("reach(y) :- reach(x), edge(x, y).")
    >>> str(p.rules[0]), p.rules[0].head.relation
    ('reach(y) :- reach(x), edge(x, y).', 'reach')
    """
    parser = _parser()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, text, parser) from None
    try:
        return _Build(text).transform(tree)
    except VisitError as err:        # lark wraps what a transformer method raises
        if isinstance(err.orig_exc, RulesError):
            raise err.orig_exc from None
        raise


#: tokens an expression may always continue with: named in "expected ..." only when nothing
#: else fits (after ``reach(x)`` the person forgot a ',' or '.', not a ``band``)
_CONTINUATIONS = {"LOR", "LAND", "BOR", "BXOR", "BAND", "SHIFT", "POW", "ADD", "MUL", "COLON",
                  "RBRACE", "COMPARE", "LPAR"}


def _describe_expected(names, parser) -> str:
    names = set(names)
    if names - _CONTINUATIONS:
        names -= _CONTINUATIONS
    words = []
    for name in sorted(names, key=lambda n: (" " in TERMINAL_WORDS.get(n, ""), n)):
        word = TERMINAL_WORDS.get(name)
        if word is None:
            try:
                word = parser.get_terminal(name).pattern.value
            except KeyError:
                word = name
            word = word.replace("\\", "")
        if word not in words:
            words.append(word)
    return ", ".join(w if " " in w else f"'{w}'" for w in words)


#: Soufflé constructs ddlab does not run: the error names them, with the way around
UNSUPPORTED = {
    ".comp": "components (.comp/.init) are not supported: write the component's relations "
             "out once per instance, with the instance's name as a prefix",
    ".init": "components (.comp/.init) are not supported: write the component's relations "
             "out once per instance, with the instance's name as a prefix",
    ".functor": "user-defined functors (.functor) are not supported: compute the values in "
                "Python (collection.map_columns) and give them as an input",
    ".pragma": ".pragma is not supported: give options to rules(...) instead",
    ".plan": ".plan is not supported: ddlab chooses join orders itself (program.explain())",
    ".override": "components (.override) are not supported",
    ".printsize": ".printsize is not supported: len(program[name].view().to_dict())",
    ".limitsize": ".limitsize is not supported: rules(..., limit=N) bounds recursion",
    "eqrel": "eqrel is not supported: declare a plain relation and close it with rules: "
             "eq(x, x) :- eq(x, _).  eq(y, x) :- eq(x, y).  eq(x, z) :- eq(x, y), eq(y, z).",
    "[": "records [a, b] are not supported: flatten the record into fields of the relation "
         "(p(a, b) for p([a, b]))",
    "$": "ADT constructors ($Name(...)) are not supported: give each branch a relation of its "
         "own, or encode the constructor as a field",
    "choice-domain": "choice-domain is not supported",
    "subsumption": "subsumption (<=) is not supported: keep the best fact per group with "
                   "min or max",
}


def _unsupported(text: str, line: int, column: int):
    """An :class:`UnsupportedError` when the syntax error sits on a construct of Soufflé's
    that ddlab does not run (its name, place and the way around), else None."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    src = lines[line - 1]
    rest = src[column - 1:]
    for word, hint in UNSUPPORTED.items():
        at = src.find(word)
        if at >= 0 and (rest.startswith(word) or word in (".comp", ".init", ".functor",
                                                           ".pragma", ".plan", ".override",
                                                           ".printsize", ".limitsize",
                                                           "eqrel", "choice-domain")):
            name = word.strip("[$") or word
            name = {"[": "a record", "$": "an ADT constructor"}.get(word, name)
            return UnsupportedError(f"{name} is not supported",
                                    text, Pos(line, at + 1, at + 1 + len(word)), hint)
    return None


def _syntax_error(err: UnexpectedInput, text: str, parser) -> RulesSyntaxError:
    line, column = getattr(err, "line", 1), getattr(err, "column", 1)
    refused = _unsupported(text, line, column)
    if refused is not None:
        return refused
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else "?"
        return RulesSyntaxError(f"unexpected character {ch!r}", text, Pos(line, column),
                                _hint_for(ch))
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken)
                                          and err.token.type == "$END"):
        lines = text.rstrip().splitlines() or [""]
        pos = Pos(len(lines), len(lines[-1]) + 1)
        expected = _describe_expected(getattr(err, "expected", ()), parser)
        return RulesSyntaxError(f"the text ended early; expected {expected}", text, pos,
                                "a rule ends with '.': reach(y) :- reach(x), edge(x, y).")
    tok = err.token
    expected = _describe_expected(err.expected, parser)
    end = tok.end_column if tok.line == tok.end_line else None
    hint = None
    if str(tok) in ("count", "sum", "min", "max") or (tok.type == "COLON" and "'='" not in expected):
        hint = ("an aggregate is written c = count : { edge(x, _) } in a body, or "
                "outdeg(x, count(y)) :- edge(x, y). in a head")
    elif tok.type == "NAME" and "'.'" in expected:
        hint = "did you forget the '.' that ends the previous rule?"
    elif str(tok) == "not":
        hint = "negation is written !atom, e.g. !reach(v)"
    return RulesSyntaxError(f"unexpected {str(tok)!r}; expected {expected}", text,
                            Pos(tok.line, tok.column, end), hint)


def _hint_for(ch: str) -> str | None:
    if ch == "'":
        return "strings use double quotes: \"abc\""
    if ch in "&|":
        return "conjunction is ',' and disjunction ';'"
    return None


def closest(word: str, names) -> str | None:
    """The closest of ``names`` to ``word`` (for "did you mean")."""
    found = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    return found[0] if found else None
