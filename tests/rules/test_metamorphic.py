"""Metamorphic checks: renaming variables, reordering body atoms, duplicating a subgoal,
splitting a rule (through a new relation, or a disjunction into two rules) never changes an
output.  Each transformed program runs beside the original over the same sliding window."""
from __future__ import annotations

import os
from dataclasses import replace

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import ddlab
from ddlab import NonConvergenceError

from .gen import GAtom, GExpr, GFun, GRule, GProgram, programs, window_contents, windows

EXAMPLES = int(os.environ.get("DDLAB_RULES_METAMORPHIC_EXAMPLES", "40"))
_SETTINGS = dict(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def _outputs_over(text, names, stream):
    flow = ddlab.Dataflow(max_iterations=200)
    inputs = {"a": flow.input("a", columns=["x", "y"]), "b": flow.input("b", columns=["x", "y"])}
    program = ddlab.rules(text, inputs)
    views = {n: program.relation(n).view() for n in names}
    events, width, starts = stream
    held = {"a": {}, "b": {}}
    out = []
    for start in starts:
        new = window_contents(events, start, width)
        for rel in ("a", "b"):
            delta = [(t, new[rel].get(t, 0) - held[rel].get(t, 0))
                     for t in set(new[rel]) | set(held[rel])]
            if any(d for _, d in delta):
                inputs[rel].update([(t, d) for t, d in delta if d])
        held = new
        try:
            flow.step()
        except NonConvergenceError:
            out.append("diverges")
            break
        out.append({n: v.to_dict() for n, v in views.items()})
    return out


def _same(program: GProgram, text: str, stream):
    note("original:\n" + program.text())
    note("transformed:\n" + text)
    names = program.derived
    assert _outputs_over(text, names, stream) == _outputs_over(program.text(), names, stream)


def _rename(rule: GRule, mapping: dict) -> GRule:
    def term(a):
        if isinstance(a, str) and a in mapping:
            return mapping[a]
        if isinstance(a, GExpr):
            return replace(a, var=mapping.get(a.var, a.var))
        if isinstance(a, GFun):
            return replace(a, a=mapping.get(a.a, a.a), b=mapping.get(a.b, a.b))
        if isinstance(a, tuple) and a and a[0] == "agg":
            return ("agg", a[1], term(a[2]) if a[2] is not None else None)
        return a
    atom = lambda g: GAtom(g.rel, tuple(term(x) for x in g.args))   # noqa: E731
    return GRule(rule.head, tuple(term(a) for a in rule.head_args),
                 tuple(atom(p) for p in rule.positive), tuple(atom(n) for n in rule.negative),
                 tuple((op, term(left), term(right)) for op, left, right in rule.compares),
                 tuple((term(v), term(e)) for v, e in rule.lets),
                 (rule.bagg[0], rule.bagg[1], atom(rule.bagg[2]), rule.bagg[3]) if rule.bagg
                 else ())


def _with_rules(program, rules):
    return GProgram(program.arity, program.levels, rules, program.aggregate)


@settings(**_SETTINGS)
@given(program=programs(), stream=windows())
def test_renaming_variables(program, stream):
    mapping = {"x": "Node", "y": "other_1", "z": "x", "w": "y", "v": "value"}
    renamed = _with_rules(program, [_rename(r, mapping) for r in program.rules])
    _same(program, renamed.text(), stream)


@settings(**_SETTINGS)
@given(program=programs(), stream=windows(), data=st.data())
def test_reordering_body_atoms(program, stream, data):
    rules = [replace(r, positive=tuple(data.draw(st.permutations(r.positive))))
             for r in program.rules]
    # also the literals' order in the text: negations and comparisons first
    text = _with_rules(program, rules).text()
    lines = []
    for line in text.splitlines():
        if ":-" in line:
            head, body = line[:-1].split(" :- ")
            parts = _split_top(body)
            parts = [p for p in parts if not _is_atom(p)] + [p for p in parts if _is_atom(p)]
            line = f"{head} :- {', '.join(parts)}."
        lines.append(line)
    _same(program, "\n".join(lines), stream)


@settings(**_SETTINGS)
@given(program=programs(), stream=windows(), data=st.data())
def test_duplicating_a_subgoal(program, stream, data):
    k = data.draw(st.integers(0, len(program.rules) - 1))
    rule = program.rules[k]
    dup = data.draw(st.sampled_from(rule.positive))
    if "_" in dup.args and program.aggregate.get(rule.head, (0, ""))[1] in ("count", "sum"):
        return      # a count/sum counts combinations of tuples: a second a(_, x) multiplies
    rules = list(program.rules)
    rules[k] = replace(rule, positive=rule.positive + (dup,),
                       negative=rule.negative + rule.negative)
    _same(program, _with_rules(program, rules).text(), stream)


@settings(**_SETTINGS)
@given(program=programs(), stream=windows(), data=st.data())
def test_splitting_a_rule_through_a_new_relation(program, stream, data):
    # not a count/sum rule: those count every combination of matched tuples (Soufflé's
    # counting), which a projection onto the named variables changes
    candidates = [i for i, r in enumerate(program.rules) if len(r.positive) >= 2
                  and program.aggregate.get(r.head, (0, ""))[1] not in ("count", "sum")
                  and any(isinstance(a, str) and a != "_" for p in r.positive[:2] for a in p.args)]
    if not candidates:
        return
    k = data.draw(st.sampled_from(candidates))
    rule = program.rules[k]
    first, second = rule.positive[0], rule.positive[1]
    names = list(dict.fromkeys(a for p in (first, second) for a in p.args
                               if isinstance(a, str) and a != "_"))
    aux = GRule("split_aux", tuple(names), (first, second))
    rules = list(program.rules)
    rules[k] = replace(rule, positive=(GAtom("split_aux", tuple(names)),) + rule.positive[2:])
    text = _with_rules(program, rules).text() + "\n" + aux.text()
    _same(program, text, stream)


@settings(**_SETTINGS)
@given(program=programs(), stream=windows())
def test_two_rules_as_one_disjunction(program, stream):
    """Rules of one set relation merged into one clause with ';' (its inverse: splitting the
    disjunction into rules) give the same relation."""
    lines = program.text().splitlines()
    by_head: dict = {}
    for r in program.rules:
        if r.head not in program.aggregate:
            by_head.setdefault(r.head, []).append(r)
    merged = [rs for rs in by_head.values() if len(rs) >= 2
              and len({r.head_args for r in rs}) == 1]
    if not merged:
        return
    rs = merged[0]
    bodies = [r.text().split(" :- ", 1)[1][:-1] for r in rs]
    clause = rs[0].text().split(" :- ")[0] + " :- " + " ; ".join(bodies) + "."
    keep = [line for line in lines if line not in {r.text() for r in rs}]
    _same(program, "\n".join(keep[:-1] + [clause, keep[-1]]), stream)


def _split_top(body: str) -> list:
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    parts.append(cur.strip())
    return parts


def _is_atom(part: str) -> bool:
    return part[:1].isalpha() and "(" in part.split()[0] and not part.startswith("!")
