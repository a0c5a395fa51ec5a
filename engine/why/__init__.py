"""Why views: explanations of a result record, of a loop's iterations and of a move's cost,
computed on demand from what the engine keeps (traces, statistics, the last two epochs'
input changes).

The three are also methods of every Dataflow (:mod:`.methods` installs them).

- :func:`explain` (``flow.why``): input records sufficient to produce a record, with its
  derivation, checked by replaying the program on them (:mod:`.explain` says what is exact
  and what is a bound);
- :func:`loop_activity` (``flow.why_loop``): iterations, records in difference per iteration
  and the keys that kept changing longest;
- :func:`move_cost` (``flow.why_cost``): the last move's cost per operator and declaration,
  beside the move before, adding up to the step's totals.

For what renders them (the explorer, a rules compiler's proof trees): ``Explanation.nodes()``
gives the derivation as plain dicts (ids, children, operator ids, records, times, notes) and
``nodes(keep=...)`` with ``why(..., names={operator id: name})`` restricts and names it (a
rule per operator that produces its head); ``LoopActivity.keys_at`` and ``per_operator`` say
which keys and operators worked at each iteration of the last epoch (a lattice cell);
``MoveCost`` holds frames.  ``ddlab.kernel_ext.display.why`` draws all three as HTML.
"""
from .cost import MoveCost, move_cost
from .explain import DEFAULT_BUDGET, Explanation, explain
from .loop_activity import LoopActivity, loop_activity
from . import methods  # noqa: F401  (installs flow.why, flow.why_loop, flow.why_cost)

__all__ = ["explain", "Explanation", "DEFAULT_BUDGET", "loop_activity", "LoopActivity",
           "move_cost", "MoveCost"]
