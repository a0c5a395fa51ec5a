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
     ".input edge from edges\nn(x, c) :- edge(x, _), c = count : { edge(x, _) ; edge(_, x) }.",
     "line 2, column 28: a disjunction inside count : { ... } is not supported\n"
     "    n(x, c) :- edge(x, _), c = count : { edge(x, _) ; edge(_, x) }.\n"
     "                               ^^^^^\n"
     "Hint: give the alternatives a relation of their own and count over it"),
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
     ".input edge from edges\nn(x, y) :- edge(x, y).\nn(x, count(y)) :- edge(x, y).",
     "line 2, column 1: n is a count (the rule at line 3) and must be defined by that rule "
     "alone, but it also has the rule at line 2\n"
     "    n(x, y) :- edge(x, y).\n"
     "    ^^^^^^^^^^^^^^^^^^^^^^\n"
     "Hint: give the other rules' results their own relation and count over the union in one "
     "rule"),
    (AggregateError,
     ".input edge from edges\nn(x, y) :- edge(x, y).\nn(x, count(y)) :- n(x, y).",
     "line 3, column 6: count inside recursion: n depends on itself through n -> n; count is "
     "not monotone (a fact derived in a later iteration changes a count already used), so the "
     "recursion has no well-defined fixed point and ddlab refuses to compute it\n"
     "    n(x, count(y)) :- n(x, y).\n"
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


def test_a_recursion_that_does_not_converge_names_its_rules_and_the_limit():
    """In the program's words: the recursive relation, its recursive rule with its line, and
    ``limit=`` / ``--limit``, not the engine's operators and ``max_iterations``."""
    flow = ddlab.Dataflow(max_iterations=200)
    seeds = flow.input("seeds", columns=["v"])
    ddlab.rules(".input s from seeds\nn(x) :- s(x).\nn(y) :- n(x), y = x + 1.", {"seeds": seeds})
    seeds.insert([1])
    with pytest.raises(ddlab.NonConvergenceError) as info:
        flow.step()
    message = str(info.value)
    assert "did not converge within 200 iterations" in message
    assert ("The recursive relation n still derived new facts after that many rounds of "
            "r2 (line 3): n(y) :- n(x), y = x + 1. ") in message
    assert "limit=N" in message and "--limit N" in message and 'on_limit="partial"' in message
    assert "max_iterations" not in message and "ingress" not in message
    assert "\n" not in message            # the magics show an error's first line


def test_mutual_recursion_that_does_not_converge_names_each_recursive_rule():
    flow = ddlab.Dataflow(max_iterations=50)
    seeds = flow.input("seeds", columns=["v"])
    ddlab.rules(".input s from seeds\neven(x) :- s(x).\nodd(y) :- even(x), y = x + 1.\n"
                "even(y) :- odd(x), y = x + 1.", {"seeds": seeds}, limit=40)
    seeds.insert([0])
    with pytest.raises(ddlab.NonConvergenceError,
                       match=r"within 40 iterations .* recursive relations even, odd still "
                             r"derived new facts after that many rounds of r3 \(line 4\): "
                             r"even\(y\) :- odd\(x\), y = x \+ 1\.; r2 \(line 3\): "
                             r"odd\(y\) :- even\(x\), y = x \+ 1\. "):
        flow.step()


@pytest.mark.parametrize("rule, where, message", [
    ("r(n) :- e(n), n > 3.", (2, 15),
     "n > 3 compares a symbol and a number: n is a symbol ('abc'), 3 is a number"),
    ("r(y) :- e(n), y = n * 2.", (2, 19),
     "n * 2 applies * to a symbol and a number: n is a symbol ('abc'), 2 is a number"),
], ids=["comparison", "arithmetic"])
def test_a_type_mismatch_at_run_time_is_said_in_the_rules_words(rule, where, message):
    """Which rule, where (line, column, caret), the expression and the two types; the epoch
    is rolled back."""
    from ddlab.engine.rules import RulesRuntimeTypeError

    flow = ddlab.Dataflow()
    e = flow.input("e", columns=["n"])
    view = ddlab.rules(".input e\n" + rule, {"e": e})["r"].view()
    e.insert(["abc"])
    with pytest.raises(ddlab.OperatorError) as info:
        flow.step()
    cause = info.value.__cause__
    assert isinstance(cause, RulesRuntimeTypeError) and (cause.line, cause.column) == where
    first = str(info.value).splitlines()[0]
    assert first.endswith(f"rule r1 (line 2) raised RulesRuntimeTypeError: line {where[0]}, "
                          f"column {where[1]}: {message}"), first
    assert f"    {rule}" in str(info.value) and "Hint: symbols compare" in str(info.value)
    assert flow.epoch == 0 and view.to_dict() == {}
