"""Could-result-in between the operators of one scope.

Within a scope the graph is acyclic apart from the loop's feedback edges, each of which adds
one to the scope's own (last) time coordinate; a nested loop is one node of its parent (its
``enter`` pads the time with a zero coordinate, its ``leave`` drops it: both leave the
parent's coordinates as they are).  So a pointstamp at operator ``i`` and time ``u`` could
result in input at operator ``j``:

- along forward edges only (``FORWARD``): at times ``>= u``;
- only around a feedback edge (``FEEDBACK``): at times ``>= u`` with the last coordinate one
  more (a path around the loop twice gives two more, which is in advance of one more: the
  frontier keeps the smallest);
- not at all.

A pointstamp at ``j`` itself is its own input already delivered: it results in more input at
``j`` only around the loop (``FEEDBACK``), if ``j`` is on a cycle.
"""
from __future__ import annotations

FORWARD, FEEDBACK = 0, 1


class Reachability:
    """For each operator index of a scope, the indices whose pointstamps could result in
    input there, and how (:data:`FORWARD` or :data:`FEEDBACK`).

    ``forward``: edges ``(i, j)`` that keep the time (``i`` before ``j`` in topological
    order); ``feedback``: edges ``(i, j)`` that add one to the last coordinate.

    >>> r = Reachability(4, forward=[(0, 1), (1, 2), (2, 3)], feedback=[(3, 1)])
    >>> r.sources[2] == {0: FORWARD, 1: FORWARD, 2: FEEDBACK, 3: FEEDBACK}
    True
    >>> r.sources[0]
    {}
    """

    def __init__(self, n: int, forward, feedback):
        succ = [[] for _ in range(n)]
        for i, j in forward:
            succ[i].append((j, 0))
        for i, j in feedback:
            succ[i].append((j, 1))
        #: ``sources[j]``: ``{i: FORWARD or FEEDBACK}`` for every ``i`` that could result in
        #: input at ``j``
        self.sources: list[dict[int, int]] = [{} for _ in range(n)]
        for i in range(n):
            # breadth-first over (operator, whether a feedback edge was taken): the first
            # visit of an operator without feedback makes it FORWARD
            seen = set()
            todo = [(j, fb) for j, fb in succ[i]]
            while todo:
                j, fb = todo.pop()
                if (j, fb) in seen:
                    continue
                seen.add((j, fb))
                for k, step in succ[j]:
                    todo.append((k, fb | step))
            for j, fb in seen:
                kind = FEEDBACK if fb else FORWARD
                have = self.sources[j].get(i)
                if have is None or kind < have:
                    self.sources[j][i] = kind
