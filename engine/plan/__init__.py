"""The logical plan layer: relational algebra nodes with schemas (:mod:`.nodes`), scalar
expressions with SQL's NULL logic (:mod:`.expr`), the boxed values that keep an engine
column's kind fixed when NULLs come and go (:mod:`.values`), and the one lowering to engine
operators (:mod:`.lower`).  SQL produces plans now; see ``engine/plan/nodes.py`` for how the
rules compiler's constructs map onto the same nodes.
"""
from .expr import Expr
from .lower import Lowering
from .nodes import Node, walk
from .values import NULL, box_row, plain

__all__ = ["Expr", "Node", "Lowering", "walk", "NULL", "box_row", "plain", "explain"]


def explain(node: Node, operators: dict | None = None, indent: str = "",
            fused: set | None = None) -> str:
    """The plan as an indented tree, each node followed by the operators it became (a node
    in ``fused``, ids, was composed into the row-wise operator of the node reading it)."""
    lines: list = []
    seen: set = set()

    def visit(n, depth):
        pad = indent + "  " * depth
        if id(n) in seen:
            lines.append(f"{pad}{n.describe()}  (shared, above)")
            return
        seen.add(id(n))
        ops = (operators or {}).get(id(n))
        if fused and id(n) in fused and not ops:
            lines.append(f"{pad}{n.describe()}  (fused into the operator reading it)")
        else:
            lines.append(f"{pad}{n.describe()}  -> {', '.join(ops)}" if ops else
                         f"{pad}{n.describe()}")
        for child in n.inputs:
            visit(child, depth + 1)
    visit(node, 0)
    return "\n".join(lines)
