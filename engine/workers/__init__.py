"""Data-parallel workers: the timely half of Naiad on one machine.

``Dataflow(workers=N)`` runs a replica of the program in each of N processes (worker 0 is the
notebook's own); records move to the worker owning their key wherever an operator's input
declares an exchange pact (:mod:`~ddlab.engine.runtime.contract`; :mod:`.exchange`,
:mod:`.partition`) and the workers agree on progress by announcing the changes of their
occurrence counts (:mod:`.team`: worker 0's side; :mod:`.child`: a child's; :mod:`.replica`:
what both do to their copy of the flow).  Messages, shared memory and the children's
processes are :mod:`.transport`'s."""
from .team import (WorkerTeam, hold_interrupts, release_interrupts, resolve_workers, stop_all,
                   view_rows)

__all__ = ["WorkerTeam", "hold_interrupts", "release_interrupts", "resolve_workers", "stop_all",
           "view_rows"]
