"""Which loops the explorer can plot: every loop the shown collections depend on, and the one
it plots first.

Why apart: the choice reads only the flow's public graph (``flow.graph()``, ``flow.upstream``,
``flow.loops()``), and the default is a claim about the papers (the label propagation whose
per-iteration work is the CIDR paper's Figure 1) worth keeping in one place.
"""
from __future__ import annotations

from ddlab.engine import Collection

__all__ = ["upstream_loops", "default_loop"]


def upstream_loops(flow, objs) -> list[str]:
    """Every loop the collections or views ``objs`` depend on, in the flow's order
    (outermost first); ``None`` entries are skipped."""
    ops, _ = flow.graph()
    scope_of = dict(zip(ops["id"], ops["scope"]))
    label_to_op = {op.label: op for op in flow.operators}
    scopes = set()
    for obj in objs:
        if obj is None:
            continue
        op = obj if isinstance(obj, Collection) else label_to_op.get(obj.label)
        if op is not None:
            scopes |= {scope_of[i] for i in flow.upstream(op)}
    return [path for path in flow.loops()
            if any(s == path or s.startswith(path + "/") for s in scopes)]


def default_loop(loops: list[str]) -> str | None:
    """The first loop; if it holds nested loops (SCC), its first nested one: the label
    propagation whose per-iteration work is the CIDR paper's Figure 1.

    >>> default_loop(["root/scc", "root/cc", "root/scc/reach", "root/scc/reach2"])
    'root/scc/reach'
    >>> default_loop(["root/cc"]), default_loop([])
    ('root/cc', None)
    """
    if not loops:
        return None
    inner = [p for p in loops if p.startswith(loops[0] + "/")]
    return inner[0] if inner else loops[0]
