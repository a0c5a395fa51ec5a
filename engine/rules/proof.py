"""Proof trees for the facts a rules program derives: each derived fact with the rule (its
source line) that derived it and the facts its body matched, down to input facts.

Built from the engine's explanation (:meth:`Dataflow.why`), read rule by rule: the operators
that assemble a relation give the facts, the operator that produces a rule's head gives the
rule.  The engine explains a fact of a loop at the first iteration at which it appears, and
each fact it used at that fact's own first iteration, so the tree has minimal height: a fact
first derived in round *k* of a naive evaluation (input facts: round 0) has a proof of height
*k*, which no shorter proof exists for.  Negated atoms hold by absence and are not shown; a
``min``/``max`` fact is explained by its winner's derivation; a ``count``/``sum`` fact by the
rule with its whole group as children: the facts its body matched in every binding the
aggregate counted (each derived one with a proof of its own).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from ..why.gc_pause import collector_paused
from .ast import Atom, Const, Var, Wildcard
from .errors import ArityError

__all__ = ["Proof", "ProofNode", "prove"]


@dataclass
class ProofNode:
    """A fact of ``relation``; ``rule`` derived it from ``children`` (``None``: an input
    fact, a leaf)."""

    relation: str
    fact: tuple
    rule: object = None
    children: list = field(default_factory=list)

    @property
    def height(self) -> int:
        """0 for an input fact, else one more than its tallest child."""
        return 0 if self.rule is None else 1 + max((c.height for c in self.children), default=0)

    def atom(self) -> str:
        return f"{self.relation}({', '.join(map(repr, self.fact))})"

    def lines(self, depth: int = 0) -> list[str]:
        pad = "  " * depth
        if self.rule is None:
            return [f"{pad}{self.atom()}   [input]"]
        out = [f"{pad}{self.atom()}   [r{self.rule.index}, line {self.rule.pos.line}: "
               f"{self.rule}]"]
        for child in self.children:
            out += child.lines(depth + 1)
        return out

    def html(self) -> str:
        atom = html.escape(self.atom())
        if self.rule is None:
            return f"<li><code>{atom}</code> <span style='color:#777'>input</span></li>"
        rule = (f"<span style='color:#777'>r{self.rule.index}, line {self.rule.pos.line}:</span>"
                f" <code>{html.escape(str(self.rule))}</code>")
        inner = "".join(c.html() for c in self.children)
        return (f"<li><details open><summary><code>{atom}</code> &larr; {rule}</summary>"
                f"<ul style='margin:0;padding-left:18px;list-style:none'>{inner}</ul>"
                f"</details></li>")


@dataclass
class Proof:
    """Why ``fact`` is in ``relation``: ``root`` (a :class:`ProofNode`; ``None`` when the fact
    is not derived), ``explanation`` (the engine's, with the input records that suffice)."""

    relation: str
    fact: tuple
    root: ProofNode | None
    explanation: object

    @property
    def present(self) -> bool:
        return self.root is not None

    @property
    def height(self) -> int | None:
        return self.root.height if self.root is not None else None

    def summary(self) -> str:
        atom = f"{self.relation}({', '.join(map(repr, self.fact))})"
        if self.root is None:
            return f"{atom} is not derived: {self.explanation.summary()}"
        ex = self.explanation
        return (f"{atom}: a proof of height {self.height} from {ex.size} input fact(s)"
                + ("; replayed from scratch on them alone: derived again" if ex.verified
                   else ""))

    def __repr__(self) -> str:
        if self.root is None:
            return self.summary()
        return "\n".join([self.summary()] + self.root.lines(1))

    def _repr_html_(self) -> str:
        body = "" if self.root is None else (
            "<ul style='margin:2px 0;padding-left:14px;list-style:none'>"
            f"{self.root.html()}</ul>")
        return f"<div><div>{html.escape(self.summary())}</div>{body}</div>"


def prove(program, relation: str, fact, *, verify: bool = True) -> Proof:
    """The proof tree of ``fact`` in ``relation`` of a compiled rules ``program`` (built
    with the cyclic garbage collector paused, as explanations are: ``why.gc_pause``)."""
    with collector_paused():
        return _Prover(program).proof(relation, fact, verify)


class _Prover:
    """Proofs of one program, sharing the sub-proofs one call needs (an aggregate's group)."""

    def __init__(self, program, roots: dict | None = None):
        self.program = program
        compiler = program._compiler
        self.rules = {r.index: r for r in program.rules}
        self.rel_of = {op: name for name, ops in compiler.relation_results.items()
                       for op in ops}
        self.rule_of = {op: index for index, ops in compiler.rule_outputs.items()
                        for op in ops}
        relations = program.analysis.relations
        self.inputs = {name for name, rel in relations.items() if rel.is_input}
        #: a count/sum rule's output operator -> (its bindings' operator id, their variables)
        self.grouped = {op: compiler.bindings[i] for op, i in self.rule_of.items()
                        if i in compiler.bindings}
        self._roots: dict = {} if roots is None else roots   # (relation, fact) -> proof root

    def proof(self, relation: str, fact, verify: bool) -> Proof:
        program = self.program
        fact = tuple(fact) if isinstance(fact, (tuple, list)) else (fact,)
        collection = program.relation(relation)
        rel = program.analysis.relations[relation]
        if len(fact) != rel.arity:
            raise ArityError(f"{relation}({', '.join(map(repr, fact))}) has {len(fact)} field"
                             f"{'s' if len(fact) != 1 else ''} but {relation} has {rel.arity} "
                             f"({', '.join(rel.columns)})")
        names = {op: f"r{i}: {self.rules[i]}" for op, i in self.rule_of.items()}
        ex = program.flow.why(collection, fact if len(fact) > 1 else fact[0], verify=verify,
                              names=names)
        ex.collection = relation
        if not ex.present:
            return Proof(relation, fact, None, ex)
        shown = set(self.rel_of) | set(self.rule_of) | {b for b, _ in self.grouped.values()}
        nodes = ex.nodes(keep=lambda op: op.id in shown or op.kind == "input")
        self.by_id = {n["id"]: n for n in nodes}
        root = self.by_id[0]
        while root["operator"] not in self.rel_of and root["children"]:
            root = self.by_id[root["children"][0]]
        return Proof(relation, fact, self.build(root, relation, top=True), ex)

    def build(self, node, relation_name, top=False) -> ProofNode:
        by_id, rel_of, rule_of = self.by_id, self.rel_of, self.rule_of
        first = node["records"][0] if node["records"] else ()
        record = tuple(first) if isinstance(first, tuple) else (first,)
        if relation_name in self.inputs or node["kind"] == "input":
            return ProofNode(relation_name, record)
        if node["operator"] in self.grouped:
            # an aggregate's fact: its group, read at its own explanation (nested, this node
            # may hold several groups)
            if not top:
                return self.sub_proof(relation_name, record)
            return self.aggregate(node, relation_name, record)
        derivations = [by_id[c] for c in node["children"] if by_id[c]["operator"] in rule_of]
        if not derivations:   # a relation's node over another of its own (plumbing): go down
            below = [by_id[c] for c in node["children"] if by_id[c]["operator"] in rel_of]
            if below:
                return self.build(below[0], relation_name, top)
            return ProofNode(relation_name, record)
        rule_node = derivations[0]
        rule = self.rules[rule_of[rule_node["operator"]]]
        children = [self.build(f, rel_of.get(f["operator"], relation_name)) for f in
                    self.facts_below(rule_node)]
        return ProofNode(relation_name, record, rule, _in_body_order(rule, children))

    def facts_below(self, node) -> list:
        """The relation facts (or input records) a rule node's body matched."""
        out = []
        for c in node["children"]:
            child = self.by_id[c]
            if child["operator"] in self.rel_of or child["kind"] == "input":
                out.append(child)
            else:
                out += self.facts_below(child)
        return out

    def aggregate(self, node, relation_name, record) -> ProofNode:
        """A count/sum fact: its rule, with the facts of its group's body bindings as
        children (each derived one with its own proof)."""
        rule = self.rules[self.rule_of[node["operator"]]]
        bindings_op, variables = self.grouped[node["operator"]]
        bindings = [n for n in self.by_id.values() if n["operator"] == bindings_op]
        facts: dict = {}
        for n in bindings:
            for values in n["records"]:
                env = dict(zip(variables, values if isinstance(values, tuple) else (values,)))
                for atom in rule.body:
                    if isinstance(atom, Atom):
                        found = self.instance(atom, env)
                        facts.setdefault((atom.relation, found), None)
        children = [ProofNode(rel, fact) if rel in self.inputs else self.sub_proof(rel, fact)
                    for rel, fact in sorted(facts, key=repr)]
        return ProofNode(relation_name, record, rule, _in_body_order(rule, children))

    def instance(self, atom, env) -> tuple:
        """The fact ``atom`` matched under ``env``; a ``_`` is filled from the explanation's
        facts of that relation (the engine read the whole group, so one matches)."""
        values = [env[a.name] if isinstance(a, Var) else a.value if isinstance(a, Const)
                  else None for a in atom.args]
        if all(not isinstance(a, Wildcard) for a in atom.args):
            return tuple(values)
        for n in self.by_id.values():
            if self.rel_of.get(n["operator"]) != atom.relation:
                continue
            for rec in sorted(n["records"], key=repr):
                rec = rec if isinstance(rec, tuple) else (rec,)
                if all(isinstance(a, Wildcard) or v == x
                       for a, v, x in zip(atom.args, values, rec)):
                    return rec
        raise LookupError(f"no fact of {atom.relation} matching {atom} in the explanation")

    def sub_proof(self, relation, fact) -> ProofNode:
        key = (relation, fact)
        if key not in self._roots:
            proof = _Prover(self.program, self._roots).proof(relation, fact, verify=False)
            self._roots[key] = proof.root
        return self._roots[key]


def _in_body_order(rule, children: list) -> list:
    """Children by their relation's first place in the rule's body (stable otherwise)."""
    order = [getattr(a, "relation", None) for a in rule.body]
    return sorted(children, key=lambda c: order.index(c.relation) if c.relation in order
                  else len(order))
