"""Proof trees of rules outputs (``RulesProgram.why``) against a naive evaluation written here:
every node is an instance of its rule (a substitution maps the head to the fact and the body
atoms to the children's facts), leaves are input facts, and the height is the round in which
a naive evaluation first derives the fact (its minimal proof height), over epochs that insert
and remove edges."""
from __future__ import annotations

import random

import pytest

import ddlab

# Each program: its text, and its rules as (head, body) with atoms (relation, variables), for
# the naive evaluation below (apart from the compiler's parser).
PROGRAMS = {
    "linear closure": (
        ".input edge\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n"
        ".output path",
        [(("path", "xy"), [("edge", "xy")]),
         (("path", "xz"), [("path", "xy"), ("edge", "yz")])]),
    "doubling closure": (
        ".input edge\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), path(y, z).\n"
        ".output path",
        [(("path", "xy"), [("edge", "xy")]),
         (("path", "xz"), [("path", "xy"), ("path", "yz")])]),
    "odd and even walks": (
        ".input edge\nodd(x, y) :- edge(x, y).\neven(x, z) :- odd(x, y), edge(y, z).\n"
        "odd(x, z) :- even(x, y), edge(y, z).\n.output odd\n.output even",
        [(("odd", "xy"), [("edge", "xy")]),
         (("even", "xz"), [("odd", "xy"), ("edge", "yz")]),
         (("odd", "xz"), [("even", "xy"), ("edge", "yz")])]),
}


def naive_rounds(rules, edges: set) -> dict:
    """``(relation, fact) -> the round a naive evaluation first derives it`` (inputs: 0)."""
    rounds = {("edge", e): 0 for e in edges}
    k = 0
    while True:
        k += 1
        known = dict(rounds)
        new = {}
        for (head_rel, head_vars), body in rules:
            for env in _matches(body, known):
                fact = (head_rel, tuple(env[v] for v in head_vars))
                if fact not in known and fact not in new:
                    new[fact] = k
        if not new:
            return rounds
        rounds.update(new)


def _matches(body, known, env=None):
    env = env or {}
    if not body:
        yield env
        return
    (rel, vars_), rest = body[0], body[1:]
    for (r, fact) in list(known):
        if r != rel:
            continue
        e = dict(env)
        if all(e.setdefault(v, x) == x for v, x in zip(vars_, fact)):
            yield from _matches(rest, known, e)


def check_node(node, rules, edges: set) -> None:
    if node.rule is None:
        assert node.relation == "edge" and node.fact in edges, node.atom()
        return
    (head_rel, head_vars), body = rules[node.rule.index - 1]
    assert node.relation == head_rel
    env = dict(zip(head_vars, node.fact))
    children = [(c.relation, c.fact) for c in node.children]
    assert len(children) == len(body), (node.atom(), children, body)
    # some order of the children matches the body under one substitution extending env
    assert any(_consistent(body, perm, env) for perm in _orders(children)), \
        f"{node.atom()} by r{node.rule.index} is not an instance with {children}"
    for c in node.children:
        check_node(c, rules, edges)


def _orders(items):
    if len(items) <= 1:
        yield list(items)
        return
    for i, x in enumerate(items):
        for rest in _orders(items[:i] + items[i + 1:]):
            yield [x] + rest


def _consistent(body, facts, env) -> bool:
    e = dict(env)
    for (rel, vars_), (r, fact) in zip(body, facts):
        if rel != r or not all(e.setdefault(v, x) == x for v, x in zip(vars_, fact)):
            return False
    return True


def moving_edges(rng, flow, edge, epochs: int, nodes: int, add: int, remove: int):
    """``epochs`` steps that each insert up to ``add`` random edges among ``nodes`` nodes and
    remove ``remove`` present ones; yields the edge set after each step."""
    edges: set = set()
    for _ in range(epochs):
        added = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(add)} - edges
        removed = set(rng.sample(sorted(edges), min(remove, len(edges))))
        edge.insert(sorted(added))
        edge.remove(sorted(removed))
        edges = (edges | added) - removed
        flow.step()
        yield edges


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_proofs_are_rule_instances_of_minimal_height_over_moving_edges(name):
    text, rules = PROGRAMS[name]
    rng = random.Random(7)
    flow = ddlab.Dataflow()
    edge = flow.input("edge", columns=["src", "dst"])
    program = ddlab.rules(text, {"edge": edge}, flow=flow)
    outputs = list(program)
    checked = 0
    for edges in moving_edges(rng, flow, edge, epochs=6, nodes=9, add=6, remove=3):
        rounds = naive_rounds(rules, edges)
        derived = sorted(f for f in rounds if f[0] in outputs)
        for relation, fact in rng.sample(derived, min(6, len(derived))):
            proof = program.why(relation, fact)
            assert proof.present and proof.explanation.verified
            check_node(proof.root, rules, edges)
            assert proof.height == rounds[(relation, fact)], (relation, fact, repr(proof))
            checked += 1
        # a fact that is not derived says so
        missing = next((("path" if "path" in outputs else "odd", (a, b)) for a in range(12)
                        for b in range(12) if (("path" if "path" in outputs else "odd"), (a, b))
                        not in rounds), None)
        proof = program.why(*missing)
        assert not proof.present and "is not derived" in repr(proof)
    assert checked >= 20


AGGREGATES = """.input edge
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
outs(x, count(y)) :- edge(x, y).
weight(x, sum(y)) :- edge(x, y).
far(x, count(z)) :- path(x, y), edge(y, z).
.output outs, weight, far"""
PATH_RULES = PROGRAMS["linear closure"][1]


def _groups(edges: set) -> dict:
    """``relation -> {group key: (aggregate value, the facts its bindings matched)}`` by
    naive evaluation (count/sum over distinct body bindings, as the rules define them)."""
    paths = {f for (r, f) in naive_rounds(PATH_RULES, edges) if r == "path"}
    out = {"outs": {}, "weight": {}, "far": {}}
    for x, y in edges:
        for name, value in (("outs", 1), ("weight", y)):
            total, facts = out[name].get(x, (0, set()))
            out[name][x] = (total + value, facts | {("edge", (x, y))})
    for x, y in paths:
        for y2, z in edges:
            if y2 == y:
                total, facts = out["far"].get(x, (0, set()))
                out["far"][x] = (total + 1, facts | {("path", (x, y)), ("edge", (y, z))})
    return out


def test_count_and_sum_proofs_show_the_rule_with_its_groups_facts():
    """The proof of a count/sum fact is its rule's instance, with every fact of its group's
    bindings as a child (a derived one with its own proof, a rule instance down to edges),
    against a naive evaluation, over epochs that insert and remove edges."""
    rng = random.Random(11)
    flow = ddlab.Dataflow()
    edge = flow.input("edge", columns=["src", "dst"])
    program = ddlab.rules(AGGREGATES, {"edge": edge}, flow=flow)
    checked = 0
    for edges in moving_edges(rng, flow, edge, epochs=4, nodes=7, add=5, remove=2):
        for name, groups in _groups(edges).items():
            for key, (value, facts) in sorted(groups.items())[:3]:
                proof = program.why(name, (key, value))
                assert proof.present and proof.explanation.verified, repr(proof)
                root = proof.root
                assert root.rule is not None and root.rule.head.relation == name
                assert {(c.relation, c.fact) for c in root.children} == facts, repr(proof)
                for child in root.children:
                    if child.relation == "path":
                        check_node(child, PATH_RULES, edges)
                    else:
                        assert child.rule is None and child.fact in edges
                assert proof.height == 1 + max(c.height for c in root.children)
                checked += 1
    assert checked >= 20


def test_a_fact_of_the_wrong_arity_is_refused_and_an_absent_one_named_by_its_relation():
    flow = ddlab.Dataflow()
    edge = flow.input("edge", columns=["src", "dst"])
    program = ddlab.rules(AGGREGATES, {"edge": edge}, flow=flow)
    edge.insert([(1, 2)])
    flow.step()
    with pytest.raises(ddlab.engine.rules.ArityError,
                       match=r"outs\(1, 1, 1\) has 3 fields but outs has 2 \(x, count\)"):
        program.why("outs", (1, 1, 1))
    absent = program.why("outs", (1, 5))
    assert not absent.present
    assert repr(absent) == "outs(1, 5) is not derived: (1, 5) is not in outs after epoch 0."
