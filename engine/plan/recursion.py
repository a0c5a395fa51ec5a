"""Which relations are defined in terms of each other: the strongly connected components of a
dependency graph, dependencies first.  Both front ends need it (a rules program's strata, a
SQL query's groups of mutually recursive CTEs), so it lives in the plan layer they share."""
from __future__ import annotations


def components(nodes, succ) -> list[list]:
    """Tarjan's strongly connected components of the graph ``succ`` (``node -> nodes it
    depends on``) over ``nodes``; each component comes after every component it reaches, so
    dependencies come first."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return comps
