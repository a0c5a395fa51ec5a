"""The operator base class: what an operator computes, what it declares to the runtime, and
the hooks the analyses call.  How it is scheduled and run is the runtime's
(:mod:`~ddlab.engine.runtime.protocol`)."""
from __future__ import annotations

from ..errors import DataflowError
from ..runtime.contract import PIPELINE
from ..runtime.protocol import RunProtocol


class Operator(RunProtocol):
    """A node of the dataflow graph living in one scope.

    :meth:`process` turns the inputs at one complete time into output batches sent with
    :meth:`emit` (consolidated, so loops can quiesce); how batches reach it and when it runs
    is the run protocol's (:class:`~ddlab.engine.runtime.protocol.RunProtocol`), from what it
    declares (:mod:`~ddlab.engine.runtime.contract`: :meth:`pact`, ``spreads``, ``eager``,
    ``takes_times``, ``fusable``, ``hosts_fused``).
    """

    kind = "operator"
    #: (explanations) whether each output update is an input update unchanged but for its
    #: time (:meth:`upstream_time` maps it back): a record is explained by itself upstream
    passes_records = False
    #: (explanations) whether the output is the input's whole collection unchanged (its times
    #: padded at most): explanations look through it to what it presents
    presents_input = False
    #: (explanations) whether its steps are shown in a derivation (``Explanation.nodes()``):
    #: operators that compute something; the rest (arrangements, loop edges) is plumbing
    shown_in_derivations = False
    #: (explanations) an algorithm's own short reason for the records of its result, set on
    #: the operator producing it (:class:`~ddlab.engine.why.witness.Witness`), else ``None``
    witness = None
    # -- the contract (runtime/contract.py): read by the wiring, fusion and the exchange ---
    #: whether it may be fused into its only reader: it processes a time's input into output
    #: at that same time, keeping no state a reader could see out of step (linear operators,
    #: arrangements)
    fusable = False
    #: whether its output at a time is a sum over its input batches at that time, so that it
    #: may take a time's input in several runs, as it arrives, rather than waiting until the
    #: time is complete (linear operators, a loop's edges); :attr:`runs_eagerly` turns that
    #: on, with several workers, where waiting would hold every worker at every operator
    #: until the slowest has passed it
    eager = False
    #: whether it takes several complete times in one run (:meth:`run_times`, a
    #: :meth:`process_times` of its own) rather than one run per time: a reduce, which then
    #: reads each key's history once for all of them; a join, which matches all their deltas
    #: at once (its fused arrangements have put every time's delta in the traces by then)
    takes_times = False
    #: whether its output enters the dataflow at worker 0 (an input), to be spread over the
    #: workers on its way to a reader whose input is :data:`~..runtime.contract.PIPELINE`
    spreads = False
    #: whether operators may be fused into it
    hosts_fused = True
    #: the step attempt whose rows ``budget_rows`` counts, and that count (kept by budget.py)
    budget_serial = -1
    budget_rows = 0

    def __init__(self, scope, inputs=(), name: str | None = None):
        for up in inputs:
            up.check_can_feed_new_operator()
        self.scope = scope
        self.flow = scope.flow
        self.inputs = list(inputs)
        self.carried = False  # has this operator sent any update yet?
        self.outputs: list[tuple[Operator, int]] = []
        self._init_runtime()
        self.name = name or self.kind
        self.id = self.flow.register_operator(self)
        self.index = scope.add(self)
        for port, up in enumerate(self.inputs):
            up.outputs.append((self, port))
        #: arrangements of this operator's output, by key width (built once, shared)
        self.arrangements: dict[int, Operator] = {}
        #: this operator's output entered into nested scopes, by scope (built once, shared)
        self.entered: dict[int, Operator] = {}

    @property
    def label(self) -> str:
        return f"{self.name}#{self.id}"

    def check_can_feed_new_operator(self) -> None:
        """An operator added downstream of one that already sent updates would never see
        them (operators hold no replayable history): refuse, before anything is registered."""
        if self.carried:
            raise DataflowError(
                f"{self.label} has already sent updates ({self.flow.epoch} epochs ran); an "
                f"operator added after it now would miss them and read wrong results. Build "
                f"every operator before the first step, or build a new Dataflow and insert the "
                f"inputs' current contents (view().to_pandas()) into it.")

    def add_input(self, up: "Operator") -> int:
        up.check_can_feed_new_operator()
        self.inputs.append(up)
        self.queues.append({})
        up.outputs.append((self, len(self.inputs) - 1))
        self.flow.mark_graph_changed()
        return len(self.inputs) - 1

    # -- declarations that depend on the instance (runtime/contract.py) ------------------
    def pact(self, port: int):
        """How records reach input ``port`` when several workers run the flow
        (:mod:`~ddlab.engine.runtime.contract`): an operator keeping state per key declares
        ``Exchange(key fields)``; by default records stay on the worker that made them."""
        return PIPELINE


    def process_times(self, items: list) -> list:
        """:meth:`process` for ``[(t, inputs)]``, complete times in a linear extension of
        their order; ``[(time, rows emitted)]`` for every time processed.  By default one
        :meth:`process` per time; an operator that ``takes_times`` does better."""
        done = []
        for t, inputs in items:
            self._emitted = 0
            self.process(t, inputs)
            done.append((t, self._emitted))
        return done

    def idle_without_input(self, t: tuple) -> bool:
        """Whether a run at ``t`` with no input has nothing to do (a reduce with interesting
        times scheduled there does)."""
        return True

    def process(self, t: tuple, inputs: list) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- state for rollback and introspection --------------------------------------------
    def snapshot(self):
        return None

    def restore(self, state) -> None:
        pass

    def traces(self) -> list:
        """Traces this operator owns (for retained-state accounting and compaction)."""
        return []

    # -- hooks of the analyses (engine/why): how this operator is explained, read, copied --
    # An operator that overrides none is still run, stepped, checkpointed and costed; it is
    # explained when it ``passes_records`` (or defines the two ``explain_*`` hooks), read
    # from its nearest trace upstream when it has one input (else :meth:`derive_history`),
    # and replayed once it defines :meth:`copy_into`.
    def kept_trace(self):
        """The trace holding this operator's whole output collection, if it keeps one."""
        return None

    def history_trace(self):
        """The trace explanations read this operator's history from (``None``: derived
        from its inputs by :meth:`derive_history`)."""
        return self.kept_trace()

    def known_kinds(self, kinds_of):
        """The kinds of the output fields when the graph tells them without running anything
        (``kinds_of(op)`` asks an upstream operator), else ``None``.  By default those of the
        input of an operator passing or presenting its records unchanged."""
        if self.inputs and (self.passes_records or self.presents_input):
            return kinds_of(self.inputs[0])
        return None

    def upstream_time(self, t: tuple) -> tuple:
        """The time at the input an output update at ``t`` comes from (an explanation walks
        back through it)."""
        return t

    def explain_present(self, tracer, step, rec, t, sign) -> list:
        """Why ``rec`` has a multiplicity of sign ``sign`` at inner time ``t`` here: the
        demands on the inputs that derive it once, ``[("P", input, record, time, sign)]``
        (:mod:`~ddlab.engine.why.lineage`; ``step.note`` says how, for the reader)."""
        if self.passes_records:
            return [("P", self.inputs[0], rec, self.upstream_time(t), sign)]
        raise LookupError(f"explanations do not know operator kind {self.kind!r}")

    def explain_exact(self, tracer, step, pattern, t, content) -> list:
        """The demands ``[("E", input, pattern, time)]`` that give this operator's
        collection restricted to ``pattern`` at ``t`` (which is ``content``) exactly."""
        if self.passes_records:
            return [("E", up, pattern, self.upstream_time(t)) for up in self.inputs]
        raise LookupError(f"explanations do not know operator kind {self.kind!r}")

    def derive_history(self, hist, pattern) -> dict:
        """``{(record, inner time): diff}`` of this operator's output for the records
        matching ``pattern``, from its inputs' (``hist.updates(input, pattern)``), when it
        keeps no trace.  By default its only input's: right for operators that pass records
        through unchanged."""
        if len(self.inputs) == 1:
            return hist.updates(self.inputs[0], pattern)
        raise NotImplementedError(f"explanations do not know operator kind {self.kind!r}")

    def copy_into(self, scope, inputs: list) -> "Operator":
        """A copy of this operator in ``scope`` (of another flow), reading ``inputs`` (the
        copies of its inputs built so far; later ones, a loop's feedback, are added with
        :meth:`add_input`): how a replay rebuilds the program (:mod:`~ddlab.engine.why.replay`)."""
        raise DataflowError(f"cannot replay operator {self.label} (kind {self.kind!r})")

    def __repr__(self) -> str:
        return f"<{self.label} in {self.scope.path}>"
