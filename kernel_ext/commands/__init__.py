"""The ``%dd`` commands, one module per family; the magics dispatcher looks them up here.

- :mod:`.declare`: ``%dd input`` and ``%%dd NAME`` (declaring collections);
- :mod:`.stepping`: ``%dd step``, ``insert``, ``remove`` (closing epochs);
- :mod:`.inspect`: ``%dd show``, ``changes``, ``trace``, ``stats``, ``graph`` (looking);
- :mod:`.manage`: ``%dd status``, ``drop``, ``rebuild``, ``reset`` (the session itself);
- :mod:`.explore`: ``%dd explore`` (the window explorer of ``ddlab.widgets``);
- :mod:`.checkpoint`: ``%dd save`` and ``%dd load`` (a whole session on disk and back);
- :mod:`.why`: ``%dd why``, ``why-loop``, ``why-cost`` (explanations, ``ddlab.engine.why``);
- :mod:`.rules`: the cell ``%%dd rules`` (Datalog rules, compiled by ``ddlab.rules``).

A command is a function ``(magics, line, ns)`` with an argparse parser attached by
IPython's ``@magic_arguments`` (``--help`` prints it); it returns a result object from
``display.results`` (or ``None``) and reports user mistakes as ``SessionError``.  A new
family (``explore``, ``save``/``load``) is a new module whose commands are added to
:data:`COMMANDS`.
"""
from __future__ import annotations

from . import checkpoint, declare, explore, inspect, manage, rules, stepping, why

__all__ = ["COMMANDS", "CELL_COMMANDS", "DEFINE"]

#: command word -> function, in the order the help and error messages list them
COMMANDS = {
    "input": declare.input_, "step": stepping.step, "insert": stepping.insert,
    "remove": stepping.remove, "show": inspect.show, "changes": inspect.changes,
    "trace": inspect.trace, "stats": inspect.stats, "graph": inspect.graph,
    "explore": explore.explore, "why": why.why, "why-loop": why.why_loop,
    "why-cost": why.why_cost, "save": checkpoint.save, "load": checkpoint.load,
    "drop": manage.drop, "reset": manage.reset, "rebuild": manage.rebuild,
    "status": manage.status,
}

#: the cell magic ``%%dd NAME``
DEFINE = declare.define

#: cell commands: ``%%dd WORD ...`` runs ``CELL_COMMANDS[WORD](magics, rest, cell, ns)``
CELL_COMMANDS = {"rules": rules.rules_cell}
