"""Proof trees for the facts a rules program derives: each derived fact with the rule (its
source line) that derived it and the facts its body matched, down to input facts.

Built from the engine's explanation (:meth:`Dataflow.why`), read rule by rule: the operators
that assemble a relation give the facts, the operator that produces a rule's head gives the
rule.  The engine explains a fact of a loop at the first iteration at which it appears, and
each fact it used at that fact's own first iteration, so the tree has minimal height: a fact
first derived in round *k* of a naive evaluation (input facts: round 0) has a proof of height
*k*, which no shorter proof exists for.  Negated atoms hold by absence and are not shown; an
aggregate's head is explained by the group's facts the engine keeps (its whole group, or the
winner of a ``min``/``max``).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

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
    """The proof tree of ``fact`` in ``relation`` of a compiled rules ``program``."""
    fact = tuple(fact) if isinstance(fact, (tuple, list)) else (fact,)
    compiler = program._compiler
    collection = program.relation(relation)
    rules = {r.index: r for r in program.rules}
    rel_of = {op: name for name, ops in compiler.relation_results.items() for op in ops}
    rule_of = {op: index for index, ops in compiler.rule_outputs.items() for op in ops}
    inputs = {name for name, rel in program.analysis.relations.items() if rel.is_input}
    names = {op: f"r{i}: {rules[i]}" for op, i in rule_of.items()}
    ex = program.flow.why(collection, fact if len(fact) > 1 else fact[0], verify=verify,
                          names=names)
    if not ex.present:
        return Proof(relation, fact, None, ex)
    nodes = ex.nodes(keep=lambda op: op.id in rel_of or op.id in rule_of or op.kind == "input")
    by_id = {n["id"]: n for n in nodes}

    def facts_below(node) -> list:
        """The relation facts (or input records) a rule node's body matched."""
        out = []
        for c in node["children"]:
            child = by_id[c]
            if child["operator"] in rel_of or child["kind"] == "input":
                out.append(child)
            else:
                out += facts_below(child)
        return out

    def build(node, relation_name) -> ProofNode:
        first = node["records"][0] if node["records"] else ()
        record = tuple(first) if isinstance(first, tuple) else (first,)
        if relation_name in inputs or node["kind"] == "input":
            return ProofNode(relation_name, record)
        derivations = [by_id[c] for c in node["children"] if by_id[c]["operator"] in rule_of]
        if not derivations:   # a relation's node over another of its own (plumbing): go down
            below = [by_id[c] for c in node["children"] if by_id[c]["operator"] in rel_of]
            if below:
                return build(below[0], relation_name)
            return ProofNode(relation_name, record)
        rule_node = derivations[0]
        rule = rules[rule_of[rule_node["operator"]]]
        children = [build(f, rel_of.get(f["operator"], relation_name)) for f in
                    facts_below(rule_node)]
        order = [getattr(a, "relation", None) for a in rule.body]   # the body's order
        children.sort(key=lambda c: order.index(c.relation) if c.relation in order else len(order))
        return ProofNode(relation_name, record, rule, children)

    root = by_id[0]
    while root["operator"] not in rel_of and root["children"]:
        root = by_id[root["children"][0]]
    return Proof(relation, fact, build(root, relation), ex)
