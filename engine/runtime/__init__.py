"""The runtime core: what schedules, counts and runs the operators, in one place.

Read it in this order (timely dataflow keeps the same concerns in ``progress/subgraph.rs`` and
``dataflow/operators/generic/``):

- :mod:`.contract`: what an operator declares (each input's pact, eager or at complete times, a
  batch of times, fusable); nothing else in the runtime looks at an operator's kind.
- :mod:`.wiring`: from the declarations, where each output goes (exchange channels with several
  workers), which operators run inside their only reader, how work is counted for one worker or
  several: the one place that sets the runtime's fields.
- :mod:`.progress`: pointstamps' occurrence counts per scope, could-result-in, frontiers.
- :mod:`.scope`: a scope's sweeps, the scheduler.
- :mod:`.protocol`: an operator's run: queue and count a batch, run the complete times, emit,
  release.
"""
