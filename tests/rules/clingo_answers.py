"""clingo as the oracle of a rules program over small integer facts: its one answer set, by
relation (the shared helper of the port-failure and dialect tests)."""
from __future__ import annotations

import pytest

clingo = pytest.importorskip("clingo", reason="clingo is in the test extra")


def clingo_answer(program: str, facts: dict) -> dict:
    """``{relation: {tuple}}`` of ``program`` (clingo's syntax) over ``facts``
    (``{relation: [row]}``); the program must have exactly one answer set."""
    text = "".join(f"{name}({','.join(map(str, row))})." for name, rows in facts.items()
                   for row in rows)
    ctl = clingo.Control(["--models=0"])
    ctl.add("base", [], text + "\n" + program)
    ctl.ground([("base", [])])
    models = []
    ctl.solve(on_model=lambda m: models.append(list(m.symbols(atoms=True))))
    assert len(models) == 1
    out: dict = {}
    for sym in models[0]:
        out.setdefault(sym.name, set()).add(tuple(a.number for a in sym.arguments))
    return out


def as_set(view) -> set:
    """A view's records as a set of tuples (a one-field record as a 1-tuple)."""
    return {k if isinstance(k, tuple) else (k,) for k in view.to_dict()}
