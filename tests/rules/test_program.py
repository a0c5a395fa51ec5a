"""The Python entry point: outputs as collections, ``limit``/``on_limit``, facts, strings and
``.decl`` names, arithmetic's C semantics, several heads, ``explain`` and ``differences``."""
from __future__ import annotations

import pytest

import ddlab
from ddlab import NonConvergenceError

CHAIN = ".input e from edges\nr(x) :- e(x, _), x = 0.\nr(y) :- r(x), e(x, y)."


def _flow():
    flow = ddlab.Dataflow()
    return flow, flow.input("edges", columns=["src", "dst"])


def test_limit_error_rolls_back_and_partial_keeps_the_rounds():
    flow, edges = _flow()
    strict = ddlab.rules(CHAIN, {"edges": edges}, limit=3)["r"].view()
    edges.insert([(i, i + 1) for i in range(10)])
    with pytest.raises(NonConvergenceError, match="did not converge within 3 iterations"):
        flow.step()
    assert strict.to_dict() == {} and flow.epoch == 0

    flow, edges = _flow()
    partial = ddlab.rules(CHAIN, {"edges": edges}, limit=3, on_limit="partial")
    view = partial["r"].view()
    edges.insert([(i, i + 1) for i in range(10)])
    flow.step()
    assert view.to_dict() == {0: 1, 1: 1, 2: 1, 3: 1}       # what 3 rounds derive
    edges.remove([(1, 2)])
    flow.step()
    assert view.to_dict() == {0: 1, 1: 1}
    assert partial.loops == [] and "unrolled 3 rounds" in partial.explain()


def test_bad_options_are_refused():
    _, edges = _flow()
    with pytest.raises(ValueError, match="on_limit must be one of error, partial"):
        ddlab.rules(CHAIN, {"edges": edges}, on_limit="truncate")
    with pytest.raises(ValueError, match="needs a limit"):
        ddlab.rules(CHAIN, {"edges": edges}, on_limit="partial")
    with pytest.raises(ddlab.DataflowError, match="rules need a flow"):
        ddlab.rules("p(1).")


def test_facts_strings_decl_names_and_several_heads():
    flow = ddlab.Dataflow()
    program = ddlab.rules('''
        .decl person(name: symbol, age: number)
        person("ann", 31). person("bob", 17). person("cy", 45).
        adult(n), known(n) :- person(n, a), a >= 18.
        minor(n) :- person(n, a) ; person(n, a), a < 18, n = "nobody".
        oldest(max(a)) :- person(_, a).
        .output adult, known, oldest, person''', {}, flow=flow)
    views = {n: c.view() for n, c in program.items()}
    flow.step()
    assert views["adult"].to_dict() == views["known"].to_dict() == {"ann": 1, "cy": 1}
    assert views["oldest"].to_dict() == {45: 1}
    assert program["person"].columns == ["name", "age"]
    assert program.relation("minor").columns == ["n"]
    with pytest.raises(KeyError, match="not an .output"):
        program["minor"]
    with pytest.raises(KeyError, match="did you mean 'adult'"):
        program["adullt"]


def test_arithmetic_truncates_toward_zero_and_division_by_zero_derives_nothing():
    flow = ddlab.Dataflow()
    nums = flow.input("nums", columns=["a", "b"])
    out = ddlab.rules(".input n from nums\nq(a, b, a / b, a % b) :- n(a, b).",
                      {"nums": nums})["q"].view()
    nums.insert([(7, 2), (-7, 2), (7, -2), (5, 0)])
    flow.step()
    assert set(out.to_dict()) == {(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1)}


def test_float_remainder_has_the_dividends_sign_as_the_integer_one_does():
    """``%`` is C's remainder for floats too (``fmod``: the sign of the dividend, as for
    integers), so a float equal to an integer gives the integer's answer; ``/`` is true
    division for floats; a zero divisor derives nothing."""
    import math

    flow = ddlab.Dataflow()
    nums = flow.input("nums", columns=["a", "b"])
    out = ddlab.rules(".input n from nums\nq(a, b, a / b, a % b) :- n(a, b).",
                      {"nums": nums})["q"].view()
    rows = [(-7.5, 2.0), (7.5, -2.0), (-7.0, 2.0), (7.25, 0.5), (-0.5, 3.0), (5.5, 0.0)]
    nums.insert(rows)
    flow.step()
    assert set(out.to_dict()) == {(a, b, a / b, math.fmod(a, b)) for a, b in rows if b}
    assert {(a, b): r for a, b, _, r in out.to_dict()}[(-7.0, 2.0)] == -1.0   # as -7 % 2


def test_inputs_pick_fields_by_name_and_multiplicities_read_as_presence():
    flow = ddlab.Dataflow()
    events = flow.input("events", columns=["time", "src", "dst"])
    program = ddlab.rules(".input e(src, dst) from events\nout(x) :- e(x, _).", {"events": events})
    view = program["out"].view()
    events.insert([(1, 5, 6), (2, 5, 7), (3, 8, 9)])
    events.remove([(4, 1, 1)])                   # a negative multiplicity is absent
    flow.step()
    assert view.to_dict() == {5: 1, 8: 1}


def test_differences_and_explain_name_rules_and_relations():
    flow, edges = _flow()
    program = ddlab.rules(".input e from edges\np(x, y) :- e(x, y).\n"
                          "p(x, z) :- p(x, y), e(y, z).", {"edges": edges})
    _ = program["p"].view()
    edges.insert([(1, 2), (2, 3), (3, 4)])
    flow.step()
    by_rule = program.differences(0)
    loop = by_rule[by_rule["rule"] == "r2"].set_index("iteration")["updates"].to_dict()
    assert loop == {0.0: 2, 1.0: 1}              # (1,3),(2,4), then (1,4)
    by_relation = program.differences(0, by="relation")
    assert set(by_relation["relation"]) == {"e", "p"}
    text = program.explain()
    assert "r2  p(x, z) :- p(x, y), e(y, z)." in text and "join e(y, z) on y" in text
    labels = set(flow.stats(0)["operator"])
    assert any(label.startswith("r2 p: join e#") for label in labels)


def test_a_set_input_is_read_without_a_distinct_and_gives_the_same_answers():
    """An input made with ``distinct=True`` is a set already: the compiled program reads it
    as is (one reduce fewer per epoch); a plain input gets its ``distinct``."""
    text = """
    .input edge(src, dst) from edges
    reach(x, y) :- edge(x, y).
    reach(x, z) :- reach(x, y), edge(y, z).
    .output reach
    """
    views, reduces = {}, {}
    for sets in (False, True):
        flow = ddlab.Dataflow()
        edges = flow.input("edges", columns=["src", "dst"], distinct=sets)
        program = ddlab.rules(text, {"edges": edges})
        views[sets] = (flow, edges, program["reach"].view())
        reduces[sets] = sum(1 for op in flow.operators if op.kind == "reduce")
    assert reduces[True] == reduces[False] - 1
    for ups in ([((1, 2), 1), ((2, 3), 1), ((3, 1), 1)], [((2, 3), -1)], [((2, 3), 1), ((1, 2), -1)]):
        for flow, edges, _ in views.values():
            edges.update(ups)
            flow.step()
        assert views[True][2].to_dict() == views[False][2].to_dict()
    assert views[True][2].to_dict() == {(2, 3): 1, (2, 1): 1, (3, 1): 1}
