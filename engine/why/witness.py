"""Witnesses: an algorithm's own short reason for a record of its result.

The backward trace (:mod:`.lineage`) explains a record operator by operator, which for most
algorithms is also the short answer (label propagation: a shortest path to the label).  For
the strongly connected components of the Naiad report (Figure 8) it is not.  An edge stays
because its ends carry equal labels in the forward trim and again in the reverse trim.
Those labels hold paths from the component's smallest node to both ends and back, and, for
every edge of the reverse trim's path, that edge's own forward paths: on a 20,000-edge
street grid, about 580 edges and 5,700 derivation steps, half a second, where the reason a
person gives is one cycle through the edge.

An algorithm that knows such a reason attaches a :class:`Witness` to its result: given one
record of the result, it names records of one of the algorithm's argument collections that
suffice, reading that collection through the explanation's histories.  The tracer takes them
as the record's derivation (one step whose children are those records, traced on to the
inputs like any other), and the explanation is then checked by replaying the whole program
on its inputs, like any other: a witness is trusted for nothing, and one that fails its
check leaves the explanation to the operators' own rules.  The exact method
(``exact_only``: every derivation) never asks a witness.
"""
from __future__ import annotations

from collections import deque

#: An argument whose trace holds at most this many rows is read whole, once per epoch, into
#: an index by first field (a long cycle's search reaches most of its component: one read of
#: 20,000 edges instead of a read per level of the search); a larger one is read by key,
#: level by level, so a short cycle in a large graph reads only what it needs.
WHOLE_ROWS = 250_000


class Witness:
    """A short reason for the records of an algorithm's result (see the module docstring).

    ``find(record, out_edges)`` returns records of ``argument`` sufficient for ``record``
    (or ``None`` when it has none: the operators' rules explain it then).  The argument's
    records are read as a graph's edges, by their first two fields: ``out_edges(nodes)``
    gives ``{node: [(second field, record)]}`` for the records with a positive
    multiplicity whose first field is one of ``nodes`` (in a fixed order, so an
    explanation is the same every time).  ``what`` says what the records are, for the
    derivation's note."""

    def __init__(self, argument, find, what: str):
        self.argument = getattr(argument, "op", argument)   # a collection, or its operator
        self.find = find
        self.what = what

    def moved_to(self, argument) -> "Witness":
        """The same witness reading ``argument`` instead (a replay's copy of the flow)."""
        return Witness(argument, self.find, self.what)

    def demands(self, tracer, step, record):
        """The tracer's demands for ``record`` (present, outside loops), or ``None``."""
        hist, arg = tracer.hist, self.argument
        held = hist.rows_held(arg)
        if held is not None and held <= WHOLE_ROWS:
            def build():
                content = hist.content(arg, None, ())
                return _out_edges(content), len(content)

            whole = hist.per_epoch(("witness", arg.id), build)

            def out_edges(nodes) -> dict:
                return whole
        else:
            def out_edges(nodes) -> dict:
                pattern = hist.key_pattern([(k,) for k in nodes], 1)
                return _out_edges(hist.content(arg, pattern, ()))

        found = self.find(record, out_edges)
        if not found:
            return None
        n = len(found)
        named = arg.name if arg.name and arg.name != arg.kind else arg.label
        step.note = f"{self.what}: {n} record{'s' if n != 1 else ''} of {named}"
        return [("P", arg, r, (), 1) for r in found]


def _out_edges(content) -> dict:
    """``{first field: [(second field, record)]}`` of the records of ``content`` (``{record:
    multiplicity}``) with a positive multiplicity and at least two fields, each list in
    a fixed order."""
    index: dict = {}
    for rec, m in content.items():
        if m > 0 and len(rec) >= 2:
            index.setdefault(rec[0], []).append((rec[1], rec))
    for edges in index.values():
        if len(edges) > 1:
            edges.sort(key=repr)
    return index


def attach(result, argument, find, what: str):
    """``result`` (a collection), with a :class:`Witness` for its records attached to the
    operator that produces it; returns ``result``."""
    result.op.witness = Witness(argument, find, what)
    return result


def shortest_path(start, goal, out_edges) -> list | None:
    """The records of a shortest directed path from ``start`` to ``goal`` (``[]`` when they
    are the same node), one breadth-first level at a time (``out_edges`` as
    :class:`Witness` gives it: read by key, a search reads what the path needs, not the
    graph); ``None`` when there is none."""
    if start == goal:
        return []
    came = {start: None}            # node -> the record that reached it
    frontier = [start]
    while frontier:
        succ = out_edges(frontier)
        nxt = []
        for node in frontier:
            for dst, rec in succ.get(node, ()):
                if dst in came:
                    continue
                came[dst] = rec
                if dst == goal:
                    path = deque()
                    while rec is not None:
                        path.appendleft(rec)
                        rec = came[rec[0]]
                    return list(path)
                nxt.append(dst)
        frontier = nxt
    return None


__all__ = ["Witness", "attach", "shortest_path"]
