"""Why views: explanations of a result record, of a loop's iterations and of a move's cost,
computed on demand from what the engine keeps (traces, statistics, the last two epochs'
input changes).

- :func:`explain` (``flow.why``): input records sufficient to produce a record, with its
  derivation, checked by replaying the program on them (:mod:`.explain` says what is exact
  and what is a bound);
- :func:`loop_activity` (``flow.why_loop``): iterations, records in difference per iteration
  and the keys that kept changing longest;
- :func:`move_cost` (``flow.why_cost``): the last move's cost per operator and declaration,
  beside the move before, adding up to the step's totals.
"""
from .cost import MoveCost, move_cost
from .explain import DEFAULT_BUDGET, Explanation, explain
from .loop_activity import LoopActivity, loop_activity

__all__ = ["explain", "Explanation", "DEFAULT_BUDGET", "loop_activity", "LoopActivity",
           "move_cost", "MoveCost"]
