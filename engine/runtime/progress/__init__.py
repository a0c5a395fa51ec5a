"""Progress tracking: the runtime's core (the timely dataflow paper, CACM 2016, sections 2.3-2.4).

A *pointstamp* is a (location, time) pair: here a location is an operator of one scope, and a
pointstamp at it is either a batch of updates queued at its input (a message in flight) or a
*capability* it holds (the right to emit at that time later: a reduce's scheduled interesting
times, an input's open epoch).  Each scope keeps *occurrence counts* of its pointstamps
(:class:`~.tracker.ScopeTracker`); a nested loop shows in its parent as one pointstamp at the
loop's node per outer time at which anything inside holds one.  *Could-result-in* comes from
the graph's structure (:mod:`.reachability`): within a scope an operator reaches another either
along forward edges (the time unchanged) or only around the loop's feedback (the iteration
coordinate incremented).  The *frontier* at an operator's input is the set of minimal times
that could still arrive there, derived from the counts; a time that no frontier element is
``<=`` is complete, and an operator that must see all of its input at a time (a reduce) may then
finish it.  The counts change by :class:`~.change_batch.ChangeBatch` deltas, which sum across
workers.

- :mod:`.antichain`: antichains (frontiers) and counted antichains of times;
- :mod:`.change_batch`: consolidating count deltas, mergeable across workers;
- :mod:`.reachability`: could-result-in between the operators of one scope;
- :mod:`.tracker`: a scope's occurrence counts and the frontiers derived from them.
"""
from .antichain import Antichain, MutableAntichain
from .change_batch import ChangeBatch
from .reachability import FEEDBACK, FORWARD, Reachability
from .tracker import ScopeTracker

__all__ = ["Antichain", "MutableAntichain", "ChangeBatch", "Reachability", "ScopeTracker",
           "FORWARD", "FEEDBACK"]
