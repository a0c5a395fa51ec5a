"""The ``%dd`` commands, one module per family; the magics dispatcher looks them up here.

- :mod:`.declare`: ``%dd input`` and ``%%dd NAME`` (declaring collections);
- :mod:`.stepping`: ``%dd step``, ``insert``, ``remove`` (closing epochs);
- :mod:`.inspect`: ``%dd show``, ``changes``, ``trace``, ``stats``, ``graph`` (looking);
- :mod:`.explore`: ``%dd explore`` (the window explorer of ``ddlab.widgets``);
- :mod:`.why`: ``%dd why``, ``why-loop``, ``why-cost`` (explanations, ``ddlab.engine.why``);
- :mod:`.checkpoint`: ``%dd save`` and ``%dd load`` (a whole session on disk and back);
- :mod:`.manage`: ``%dd status``, ``drop``, ``rebuild``, ``reset`` (the session itself);
- :mod:`.rules`: the cell ``%%dd rules`` (Datalog rules, compiled by ``ddlab.rules``);
- :mod:`.sql`: the cell ``%%dd sql NAME`` (a maintained SQL query) and ``%dd explain``.

A command is a function ``(magics, line, ns)`` with an argparse parser attached by IPython's
``@magic_arguments(name="dd WORD")`` (``--help`` prints it); it returns a result object from
``display.results`` (or ``None``) and reports user mistakes as ``SessionError``.  A *cell*
command, ``%%dd WORD ...``, is a function ``(magics, line, cell, ns)`` with
``@magic_arguments(name="%dd WORD")``.

**Adding a command is a one-place change**: write that function, with its ``@argument``s and a
docstring whose first sentence says what it does, in a module of this package (a new family:
a new module).  It is found here (:data:`COMMANDS`, or :data:`CELL_COMMANDS`), listed by ``%dd --help`` (the first
sentence), reserved as a collection name and dispatched; nothing else is edited.
:data:`FAMILIES` only orders the overview (modules it does not name come last).
"""
from __future__ import annotations

import importlib
import pkgutil
import textwrap

__all__ = ["COMMANDS", "CELL_COMMANDS", "DEFINE", "FAMILIES", "overview"]

#: the overview's order of the families (modules); others follow in name order
FAMILIES = ("declare", "rules", "sql", "stepping", "inspect", "explore", "why", "checkpoint", "manage")


def _discover(prefix: str = "dd ") -> dict:
    """``{word: command}`` for every ``@magic_arguments(name=prefix + WORD)`` function of this
    package's modules (``"dd "``: line commands; ``"%dd "``: cell commands), families in
    :data:`FAMILIES` order, commands in source order.  Two commands claiming one word are
    refused (a ``RuntimeError`` naming both), not left to shadow one another."""
    names = [m.name for m in pkgutil.iter_modules(__path__)]
    names.sort(key=lambda n: (FAMILIES.index(n) if n in FAMILIES else len(FAMILIES), n))
    found = {}
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        commands = [f for f in vars(module).values()
                    if callable(f) and getattr(f, "__module__", None) == module.__name__
                    and getattr(getattr(f, "parser", None), "prog", "").startswith(prefix)]
        for command in sorted(commands, key=lambda f: f.__code__.co_firstlineno):
            word = command.parser.prog[len(prefix):]
            if word in found:   # the later one would silently shadow the earlier
                first = found[word]
                raise RuntimeError(
                    f"two commands claim %{prefix}{word}: "
                    f"{first.__module__}.{first.__qualname__} and "
                    f"{command.__module__}.{command.__qualname__}; give one of them another "
                    f"@magic_arguments(name=...)")
            found[word] = command
    return found


#: command word -> function, in the order the help and error messages list them
COMMANDS = _discover()
#: cell commands: ``%%dd WORD ...`` runs ``CELL_COMMANDS[WORD](magics, rest, cell, ns)``
CELL_COMMANDS = _discover("%dd ")

#: the cell magic ``%%dd NAME``
DEFINE = importlib.import_module(f"{__name__}.declare").define


def synopsis(command) -> str:
    """``%dd WORD ARGS [options]`` from a command's parser."""
    prog = command.parser.prog
    parts = [prog if prog.startswith("%") else "%" + prog]
    options = False
    for action in command.parser._actions:  # argparse keeps no public list of its actions
        if action.option_strings:
            options = options or action.dest != "help"
            continue
        arg = (action.metavar or action.dest).upper()
        parts.append({"?": f"[{arg}]", "*": f"[{arg} ...]", "+": f"{arg} ..."}.get(
            action.nargs, arg))
    return " ".join(parts + (["[options]"] if options else []))


def summary(command) -> str:
    """The first sentence of a command's description (its docstring); a long one up to its
    first colon."""
    text = " ".join((command.parser.description or "").split())
    end = text.find(". ")
    text = text if end < 0 else text[:end + 1]
    if len(text) > 80 and ":" in text:
        text = text[:text.index(":")]
    return text


def overview() -> str:
    """``%dd --help`` (and ``%dd?``): one line per command, generated from the parsers."""
    rows = [("%" + synopsis(c), summary(c)) for c in [DEFINE, *CELL_COMMANDS.values()]]
    rows += [(synopsis(c), summary(c)) for c in COMMANDS.values()]
    width = max(len(s) for s, _ in rows) + 4
    lines = [textwrap.fill(text, 96, initial_indent=f"  {s}".ljust(width),
                           subsequent_indent=" " * width) for s, text in rows]
    return ("ddlab magics: declare, step and inspect a differential dataflow in this kernel.\n\n"
            + "\n".join(lines) + "\n\n"
            "Declared names are Python variables (collections): use them in Python, too.\n"
            "Every command has --help, e.g. %dd input --help, %%dd --help.\n")
