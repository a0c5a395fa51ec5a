"""One golden error per error class: the exact text a person reads (what, where with a caret,
what to do), and that nothing is built when compilation fails."""
from __future__ import annotations

import pytest

import ddlab
from ddlab.engine.rules import (AggregateError, ArityError, RulesSyntaxError, RulesTypeError,
                                UnknownRelationError, UnsafeRuleError, UnstratifiableError)

GOLDEN = [
    (RulesSyntaxError,
     "reach(x) :- root(x).\nreach(y) :- reach(x) edge(x, y).",
     "line 2, column 22: unexpected 'edge'; expected ',', '.', ')', ';'\n"
     "    reach(y) :- reach(x) edge(x, y).\n"
     "                         ^^^^\n"
     "Hint: did you forget the '.' that ends the previous rule?"),
    (RulesSyntaxError,
     "reach(y) :- reach(x), edge(x, y)",
     "line 1, column 33: the text ended early; expected ',', '.', ')', ';'\n"
     "    reach(y) :- reach(x), edge(x, y)\n"
     "                                    ^\n"
     "Hint: a rule ends with '.': reach(y) :- reach(x), edge(x, y)."),
    (RulesSyntaxError,
     "n(x, c) :- edge(x, _), c = count : { edge(x, _) }.",
     "line 1, column 34: unexpected ':'; expected ',', '.', ')', ';', + or -, "
     "a comparison (=, !=, <, ...), *, / or %\n"
     "    n(x, c) :- edge(x, _), c = count : { edge(x, _) }.\n"
     "                                     ^\n"
     "Hint: aggregates go in the head: outdeg(x, count(y)) :- edge(x, y). (Soufflé's body "
     "form `c = count : { ... }` is not supported)"),
    (UnknownRelationError,
     ".input edge from edgs\nreach(y) :- edge(_, y).",
     "line 1, column 18: unknown input 'edgs': no collection of that name was given\n"
     "    .input edge from edgs\n"
     "                     ^^^^\n"
     "Hint: did you mean 'edges'? collections available: edges, roots. Read one with "
     ".input edge(...) from NAME"),
    (UnknownRelationError,
     ".input edge from edges\nreach(y) :- reach(x), egde(x, y).",
     "line 2, column 23: egde is used but has no rules, facts or .input\n"
     "    reach(y) :- reach(x), egde(x, y).\n"
     "                          ^^^^\n"
     "Hint: did you mean 'edge'? defined: edge, reach"),
    (UnknownRelationError,
     ".input edge from edges\nreach(y) :- edge(_, y).\n.output rech",
     "line 3, column 1: .output rech: no relation 'rech' is defined\n"
     "    .output rech\n"
     "    ^^^^^^^^^^^^\n"
     "Hint: did you mean 'reach'? defined: edge, reach"),
    (ArityError,
     ".input edge from edges\nreach(y) :- edge(y).",
     "line 2, column 13: edge has 1 field here but 2 at line 1 (.input edge)\n"
     "    reach(y) :- edge(y).\n"
     "                ^^^^\n"
     "Hint: every use of edge needs 2 arguments: edge(src, dst)"),
    (ArityError,
     ".input edge(a, b, c) from edges\nreach(y) :- edge(_, y, _).",
     "line 1, column 8: .input edge gives 3 fields but collection 'edges' has 2 (src, dst)\n"
     "    .input edge(a, b, c) from edges\n"
     "           ^^^^\n"
     "Hint: name 2 fields, or pick some of src, dst by name"),
    (UnsafeRuleError,
     ".input edge from edges\np(x, z) :- edge(x, y).",
     "line 2, column 6: variable z appears in the head but not in the body of p\n"
     "    p(x, z) :- edge(x, y).\n"
     "         ^\n"
     "Hint: bind z in a positive atom of the body"),
    (UnsafeRuleError,
     ".input edge from edges\np(x) :- edge(x, _), !edge(x, z).",
     "line 2, column 30: variable z appears only under negation (!edge(x, z)), so it ranges "
     "over everything\n"
     "    p(x) :- edge(x, _), !edge(x, z).\n"
     "                                 ^\n"
     "Hint: bind z in a positive atom of the body, or write _ if any value will do"),
    (UnsafeRuleError,
     ".input edge from edges\np(x) :- edge(x, _), x < z.",
     "line 2, column 25: variable z appears only in a comparison (x < z)\n"
     "    p(x) :- edge(x, _), x < z.\n"
     "                            ^\n"
     "Hint: bind z in a positive atom, or assign it: z = <expression of bound variables>"),
    (UnstratifiableError,
     ".input edge from edges\np(x) :- edge(x, _), !q(x).\nq(x) :- r(x).\nr(x) :- p(x).",
     "line 2, column 21: p depends on its own negation through the cycle p -> !q -> r -> p\n"
     "    p(x) :- edge(x, _), !q(x).\n"
     "                        ^^^^^\n"
     "Hint: negation must not go through recursion: compute the negated relation completely "
     "first (it must not depend on p)"),
    (AggregateError,
     ".input edge from edges\nc(x, count(y)) :- edge(x, y), c(y, _).",
     "line 2, column 6: count inside recursion: c depends on itself through c -> c; count is "
     "not monotone (a fact derived in a later iteration changes a count already used), so the "
     "recursion has no well-defined fixed point and ddlab refuses to compute it\n"
     "    c(x, count(y)) :- edge(x, y), c(y, _).\n"
     "         ^^^^^\n"
     "Hint: compute the recursive relation first and count it in a rule outside the cycle; "
     "min and max may be used inside recursion"),
    (AggregateError,
     ".input edge from edges\nd(x, avg(y)) :- edge(x, y).",
     "line 2, column 6: unknown aggregate 'avg'\n"
     "    d(x, avg(y)) :- edge(x, y).\n"
     "         ^^^\n"
     "Hint: aggregates: count, sum, min, max"),
    (RulesTypeError,
     ".decl p(name: symbol)\n.input edge from edges\np(1) :- edge(_, _).",
     "line 3, column 3: 1 is a number but field name of p is a symbol\n"
     "    p(1) :- edge(_, _).\n"
     "      ^\n"
     "Hint: write it as a string: \"1\""),
]


@pytest.mark.parametrize("kind, text, message", GOLDEN,
                         ids=[f"{k.__name__}-{i}" for i, (k, _, _) in enumerate(GOLDEN)])
def test_golden_error(kind, text, message):
    flow = ddlab.Dataflow()
    inputs = {"edges": flow.input("edges", columns=["src", "dst"]),
              "roots": flow.input("roots", columns=["v"])}
    before = len(flow.operators)
    with pytest.raises(kind) as info:
        ddlab.rules(text, inputs)
    assert str(info.value) == message
    assert len(flow.operators) == before           # nothing was built
    assert info.value.line == int(message.split(",")[0].split()[1])


def test_sum_inside_mutual_recursion_is_rejected_with_the_cycle():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    with pytest.raises(AggregateError, match=r"sum inside recursion: t depends on itself "
                                             r"through t -> a -> t; sum is not monotone"):
        ddlab.rules(".input e from edges\na(x, v) :- t(x, v).\na(x, 1) :- e(x, _).\n"
                    "t(x, sum(v)) :- a(y, v), e(y, x).", {"edges": edges})


def test_min_inside_recursion_is_accepted():
    flow = ddlab.Dataflow()
    edges = flow.input("edges", columns=["src", "dst"])
    program = ddlab.rules(".input e from edges\nd(x, 0) :- e(x, _).\n"
                          "d(y, min(v + 1)) :- d(x, v), e(x, y).", {"edges": edges})
    assert program.loops == ["root/d"]
