"""Data-parallel workers: the timely half of Naiad on one machine.

``Dataflow(workers=N)`` runs a replica of the program in each of N processes (worker 0 is the
notebook's own); records move to the worker owning their key wherever an operator's input
declares an exchange pact (:mod:`~ddlab.engine.runtime.contract`; :mod:`.exchange`,
:mod:`.partition`) and the workers agree on progress by announcing the
changes of their occurrence counts (:mod:`.team`)."""
from .team import WorkerTeam, hold_interrupts, release_interrupts, resolve_workers, view_rows

__all__ = ["WorkerTeam", "hold_interrupts", "release_interrupts", "resolve_workers", "view_rows"]
