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
#: indexes by source and by destination (a long cycle's search reaches much of its
#: component: one read of 20,000 edges instead of a read per level of the search); a larger
#: one is read by key, level by level, so a short cycle in a large graph reads only what
#: the search reaches.
WHOLE_ROWS = 250_000


class Witness:
    """A short reason for the records of an algorithm's result (see the module docstring).

    ``find(record, edges)`` returns records of ``argument`` sufficient for ``record`` (or
    ``None`` when it has none: the operators' rules explain it then).  ``edges``
    (:class:`Edges`) reads the argument's current records as a graph's edges.  ``what`` says
    what the records are, for the derivation's note."""

    def __init__(self, argument, find, what: str):
        self.argument = getattr(argument, "op", argument)   # a collection, or its operator
        self.find = find
        self.what = what

    def moved_to(self, argument) -> "Witness":
        """The same witness reading ``argument`` instead (a replay's copy of the flow)."""
        return Witness(argument, self.find, self.what)

    def demands(self, tracer, step, record):
        """The tracer's demands for ``record`` (present, outside loops), or ``None``."""
        arg = self.argument
        found = self.find(record, Edges(tracer.hist, arg))
        if not found:
            return None
        n = len(found)
        named = arg.name if arg.name and arg.name != arg.kind else arg.label
        step.note = f"{self.what}: {n} record{'s' if n != 1 else ''} of {named}"
        return [("P", arg, r, (), 1) for r in found]


class Edges:
    """A collection's current records with a positive multiplicity, read as a directed
    graph's edges by their first two fields, through an explanation's histories (so reads
    are charged to its budget and shared by the epoch's explanations).  Each list is in a
    fixed order, so an explanation is the same every time."""

    def __init__(self, hist, op):
        self.hist, self.op = hist, op
        held, up = hist.rows_held(op), op
        while held is None and len(up.inputs) == 1:   # derived (a projection): its input's
            up = up.inputs[0]
            held = hist.rows_held(up)
        self._whole = None
        if held is not None and held <= WHOLE_ROWS:
            def build():
                content = hist.content(op, None, ())
                return (_index(content, 0, 1), _index(content, 1, 0)), len(content)

            self._whole = hist.per_epoch(("witness", op.id), build)

    def out_edges(self, nodes) -> dict:
        """``{node: [(destination, record)]}`` for the edges leaving ``nodes``."""
        if self._whole is not None:
            return self._whole[0]
        pattern = self.hist.key_pattern([(k,) for k in nodes], 1)
        return _index(self.hist.content(self.op, pattern, ()), 0, 1)

    def in_edges(self, nodes) -> dict:
        """``{node: [(source, record)]}`` for the edges entering ``nodes``."""
        if self._whole is not None:
            return self._whole[1]
        pattern = frozenset(((1, k),) for k in nodes)
        return _index(self.hist.content(self.op, pattern, ()), 1, 0)


def _index(content, by: int, other: int) -> dict:
    """``{field by: [(field other, record)]}`` of the records of ``content`` (``{record:
    multiplicity}``) with a positive multiplicity and at least two fields, each list in a
    fixed order."""
    index: dict = {}
    for rec, m in content.items():
        if m > 0 and len(rec) >= 2:
            index.setdefault(rec[by], []).append((rec[other], rec))
    for edges in index.values():
        if len(edges) > 1:
            edges.sort(key=repr)
    return index


def attach(result, argument, find, what: str):
    """``result`` (a collection), with a :class:`Witness` for its records attached to the
    operator that produces it; returns ``result``."""
    result.op.witness = Witness(argument, find, what)
    return result


def shortest_path(start, goal, edges) -> list | None:
    """The records of a shortest directed path from ``start`` to ``goal`` (``[]`` when they
    are the same node), or ``None`` when there is none: a breadth-first search from both
    ends, a whole level at a time on the side with the smaller frontier.  Where a graph
    branches, each side reaches a few nodes around its end instead of one side reaching
    everything within the path's length (on a 500,000-edge random graph, seconds of reads).
    ``edges`` as :class:`Edges` (``out_edges``, ``in_edges``)."""
    if start == goal:
        return []
    ahead = {start: None}           # node -> the record that reached it from start
    behind = {goal: None}           # node -> the record leaving it towards goal
    front, back = [start], [goal]
    while front and back:
        forward = len(front) <= len(back)
        seen, other = (ahead, behind) if forward else (behind, ahead)
        level = front if forward else back
        near = edges.out_edges(level) if forward else edges.in_edges(level)
        nxt = []
        for node in level:
            for far, rec in near.get(node, ()):
                if far in seen:
                    continue
                seen[far] = rec
                if far in other:
                    # a shortest path: no node was on both sides before this level, so a
                    # node met now lies on the other side's deepest level (one nearer its
                    # end would have brought this side's node before it onto that side)
                    return _path(far, ahead, behind)
                nxt.append(far)
        if forward:
            front = nxt
        else:
            back = nxt
    return None


def _path(middle, ahead: dict, behind: dict) -> list:
    """The records from the search's start to ``middle`` and from ``middle`` to its goal."""
    path = deque()
    node = middle
    while ahead[node] is not None:
        rec = ahead[node]
        path.appendleft(rec)
        node = rec[0]
    node = middle
    while behind[node] is not None:
        rec = behind[node]
        path.append(rec)
        node = rec[1]
    return list(path)


__all__ = ["Witness", "Edges", "attach", "shortest_path"]
