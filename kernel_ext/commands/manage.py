"""``%dd status``, ``drop``, ``rebuild``, ``reset``: the session itself.

Why together: they show or change the set of declarations as a whole (not one epoch, not
one collection's contents) and answer with the session's status.
"""
from __future__ import annotations

from IPython.core.magic_arguments import argument, magic_arguments

from ..display.results import StatusResult

__all__ = ["status", "drop", "rebuild", "reset"]


@magic_arguments(name="dd status")
def status(magics, line, ns):
    """The session: epoch, operators, declared collections (%dd alone does the same).
    The value's .flow is the live Dataflow.
    """
    if line and magics.parse(status, line) is None:
        return None
    return StatusResult(magics.session)


@magic_arguments(name="dd drop")
@argument("name", help="a declared collection")
def drop(magics, line, ns):
    """Forget a declaration (and its variable); the flow is rebuilt without it.
    Example: %dd drop scc
    """
    args = magics.parse(drop, line)
    if args is None:
        return None
    with magics.progress_row(f"%dd drop {args.name}") as progress:
        magics.session.drop(args.name, ns, progress)
    magics.sync()
    return StatusResult(magics.session)


@magic_arguments(name="dd rebuild")
@argument("--restart", action="store_true",
          help="start over at epoch 0: windows empty, loaded rows queued again (rows "
               "added by insert/remove are forgotten)")
def rebuild(magics, line, ns):
    """Rebuild the dataflow from the declarations without restarting the kernel: at the
    same epoch with the same contents (bodies re-evaluated, inputs replayed), or from
    scratch with --restart.  Example: %dd rebuild --restart
    """
    args = magics.parse(rebuild, line)
    if args is None:
        return None
    with magics.progress_row("%dd rebuild") as progress:
        magics.session.rebuild(ns, progress, restart=args.restart)
    magics.sync()
    return StatusResult(magics.session)


@magic_arguments(name="dd reset")
@argument("--workers", type=int, default=None,
          help="run the dataflows on this many data-parallel worker processes from now on "
               "(default: as before; DDLAB_WORKERS sets the first)")
def reset(magics, line, ns):
    """Forget every declaration and start a new empty dataflow (the Spark session stays).
    Example: %dd reset --workers 2
    """
    args = magics.parse(reset, line) if line else None
    if line and args is None:
        return None
    magics.session.reset(workers=args.workers if args is not None else None)
    magics.sync()
    n = magics.session.flow.workers
    print(f"ddlab: session reset (new empty dataflow, no declarations; {n} worker"
          f"{'s' if n != 1 else ''})")
    return None
