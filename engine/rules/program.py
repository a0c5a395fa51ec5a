"""The entry point: ``rules(text, inputs)`` compiles a program onto a flow and returns a
:class:`RulesProgram`, whose outputs are ordinary collections.
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ddlab.engine import Collection, Dataflow, DataflowError

from .analyze import Analysis, analyze
from .compile import Compiler
from .errors import RulesError
from .files import base_type, check_options, fact_path, read_facts, write_relation
from .parse import closest, parse
from .proof import prove

__all__ = ["rules", "check", "RulesProgram", "ON_LIMIT"]

#: what a recursive stratum does when it has not converged after ``limit`` iterations:
#: ``"error"`` raises NonConvergenceError (the epoch is rolled back), ``"partial"`` gives what
#: it holds after ``limit`` rounds of its rules (the stratum is unrolled, no loop)
ON_LIMIT = ("error", "partial")


def check(text: str, available: dict) -> Analysis:
    """Parse and analyse ``text`` against collections ``available`` (name -> field names or
    None), building nothing; raises the first :class:`~.errors.RulesError`.

    >>> check("r(y) :- r(x), e(x, y).\\nr(x) :- e(x, _).\\n.input e from edges",
    ...       {"edges": ["src", "dst"]}).strata[-1].recursive
    True
    """
    return analyze(parse(text), available)


def rules(text: str, inputs: dict | None = None, *, flow=None, limit: int | None = None,
          on_limit: str = "error", name: str = "rules", facts_dir=None,
          output_dir=None) -> "RulesProgram":
    """Compile the rules in ``text`` onto the flow of ``inputs`` (name -> collection; an
    ``.input rel from NAME`` reads ``inputs[NAME]``, a plain ``.input rel`` reads
    ``inputs[rel]``).  ``limit`` bounds each recursive stratum's iterations; past it,
    ``on_limit="error"`` raises :class:`~ddlab.engine.NonConvergenceError` at the step,
    ``"partial"`` gives what ``limit`` rounds of the rules derive.  ``flow`` is needed only
    when there are no inputs (facts alone).  Errors in the text raise a
    :class:`~.errors.RulesError` before anything is built.  An input read whole that holds
    a set already (``flow.input(..., distinct=True)``, checked by the engine) is read
    without the ``distinct`` that makes any other input a set.

    Files, as Soufflé reads them (:mod:`.files`): an ``.input`` whose relation is not among
    ``inputs`` reads ``<facts_dir>/<name>.facts`` (or its ``filename`` option; ``facts_dir``
    defaults to the working folder, as Soufflé's ``-F``) into a new input collection
    (``program.file_inputs``); :meth:`RulesProgram.write_outputs` writes the ``.output``
    relations to ``output_dir`` (Soufflé's ``-D``).  With no inputs and no ``flow`` a new
    Dataflow is made (``program.flow``).

    >>> from ddlab import Dataflow
    >>> flow = Dataflow(); edges = flow.input("edges", columns=["src", "dst"])
    >>> p = rules('''
    ...     .input edge(src, dst) from edges
    ...     path(x, y) :- edge(x, y).
    ...     path(x, z) :- path(x, y), edge(y, z).
    ...     .output path''', {"edges": edges})
    >>> view = p["path"].view(); edges.insert([(1, 2), (2, 3)]); _ = flow.step()
    >>> sorted(view.to_dict())
    [(1, 2), (1, 3), (2, 3)]
    """
    inputs = dict(inputs or {})
    if on_limit not in ON_LIMIT:
        raise ValueError(f"on_limit must be one of {', '.join(ON_LIMIT)}, not {on_limit!r}")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive number of iterations, not {limit!r}")
    if on_limit == "partial" and limit is None:
        raise ValueError("on_limit='partial' needs a limit (the number of rounds)")
    for key, coll in inputs.items():
        if not isinstance(coll, Collection):
            raise TypeError(f"input {key!r} is a {type(coll).__name__}, not a Collection")
        if coll.scope.parent is not None:
            raise DataflowError(f"input {key!r} is inside a loop; give a collection outside "
                                "loops (leave() it first)")
    flows = {id(c.flow): c.flow for c in inputs.values()}
    if flow is not None:
        flows.setdefault(id(flow), flow)
    if len(flows) > 1:
        raise DataflowError("the inputs belong to different Dataflows; rules run on one")
    parsed = parse(text)
    check_options(parsed, text)
    reads = _file_reads(parsed, inputs, facts_dir)
    if not flows and (reads or facts_dir is not None):
        flows[0] = Dataflow()
    if not flows:
        raise DataflowError("rules need a flow: give inputs, or flow= for a program of facts")
    flow = next(iter(flows.values()))
    file_inputs = {}
    for inp in reads:
        decl = next((d for d in parsed.decls if d.name == inp.name), None)
        attributes = (decl.attributes or (("holds", "bool"),)) if decl else None
        types = [base_type(t, parsed.types, text) for _, t in attributes] if decl else None
        rows, header = read_facts(inp, types, facts_dir, text)
        columns = ([a for a, _ in attributes] if decl else header
                   or [f"c{j}" for j in range(len(rows[0]) if rows and isinstance(rows[0], tuple)
                                              else 1)])
        coll = flow.input(_unique(flow, f"{name}: {inp.name}" if name else inp.name),
                          columns=columns)
        coll.insert(rows)
        inputs[inp.source or inp.name] = file_inputs[inp.name] = coll
    analysis = analyze(parsed, {k: list(c.columns) if c.columns else None
                                for k, c in inputs.items()})
    compiler = Compiler(analysis, inputs, flow, prefix=f"{name}: " if name else "",
                        limit=limit, partial=on_limit == "partial")
    relations = compiler.build()
    program = RulesProgram(text, analysis, compiler, relations, flow)
    program.file_inputs, program.output_dir = file_inputs, output_dir
    if output_dir is not None or any(o.options for o in parsed.outputs):
        program._written = {n: program.outputs[n].view() for n in program.outputs}
    return program


def _file_reads(parsed, inputs: dict, facts_dir) -> list:
    """The ``.input`` directives that read a file: not given as a collection, and either with
    IO options, or a facts folder given, or their default file present."""
    out = []
    for inp in parsed.inputs:
        if (inp.source or inp.name) in inputs:
            continue
        if inp.options or facts_dir is not None or \
                fact_path(inp.name, inp.options, facts_dir).exists():
            out.append(inp)
    return out


def _unique(flow, base: str) -> str:
    name, k = base, 2
    while name in flow.inputs:
        name, k = f"{base} {k}", k + 1
    return name


class RulesProgram(Mapping):
    """A compiled program: a mapping from each ``.output`` relation to its collection
    (``program["reach"]`` or ``program.reach``); every relation through :meth:`relation`.

    ``loops``: the engine loops (scope paths), one per recursive stratum;
    :meth:`explain` the strata and each rule's plan; :meth:`differences` the per-rule and
    per-relation updates per iteration (from ``flow.stats()``).
    """

    def __init__(self, text, analysis: Analysis, compiler: Compiler, relations: dict, flow):
        self.text, self.analysis, self.flow = text, analysis, flow
        self.file_inputs: dict = {}       # relation -> the input collection its file filled
        self.output_dir = None
        self._written: dict = {}          # output -> its view, kept for write_outputs
        self._compiler = compiler
        self._relations = relations
        self.outputs = {n: relations[n] for n in analysis.outputs}

    # -- the mapping -----------------------------------------------------------------------
    def __getitem__(self, name: str) -> Collection:
        if name in self.outputs:
            return self.outputs[name]
        if name in self._relations:
            raise KeyError(f"{name!r} is a relation of the program but not an .output; "
                           f"use program.relation({name!r}) or add .output {name}")
        near = closest(name, list(self.outputs))
        raise KeyError(f"no output {name!r}" + (f"; did you mean {near!r}?" if near else "")
                       + f" (outputs: {', '.join(self.outputs)})")

    def __iter__(self):
        return iter(self.outputs)

    def __len__(self) -> int:
        return len(self.outputs)

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("outputs", "analysis", "text", "flow"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(str(err)) from None

    def __repr__(self) -> str:
        return (f"<RulesProgram: {len(self.analysis.program.rules)} rules, outputs "
                f"{', '.join(self.outputs)}; loops {', '.join(self.loops) or 'none'}>")

    def write_outputs(self, directory=None) -> list:
        """Write every ``.output`` relation as its IO options say (Soufflé's: by default
        ``<directory>/<name>.csv``, tab-separated; ``directory`` defaults to the program's
        ``output_dir``, else the working folder); the paths written.  Call it after a step:
        the files hold the relations as they are then.

        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "edge.facts").write_text("1\\t2\\n2\\t3\\n")
        >>> p = rules(".decl edge(a: number, b: number)\\n.input edge\\n"
        ...           ".decl path(a: number, b: number)\\n.output path\\n"
        ...           "path(x, y) :- edge(x, y).\\npath(x, z) :- path(x, y), edge(y, z).",
        ...           facts_dir=folder, output_dir=folder)
        >>> _ = p.flow.step(); [path.name for path in p.write_outputs()]
        ['path.csv']
        >>> (folder / "path.csv").read_text().splitlines()
        ['1\\t2', '1\\t3', '2\\t3']
        """
        folder = directory if directory is not None else self.output_dir
        options = {}
        for out in self.analysis.program.outputs:
            for n in out.names:
                options[n] = out.options
        if not self._written:
            raise RulesError("this program keeps no copy of its outputs to write: give "
                             "rules(..., output_dir=PATH) (or IO options on an .output) when "
                             "compiling it")
        written = []
        for n, view in self._written.items():
            rows = [r if isinstance(r, tuple) else (r,) for r, m in view.to_dict().items()
                    if m > 0]
            path = write_relation(n, rows, list(self.outputs[n].columns or []),
                                  options.get(n, {}), folder, self.text)
            if path is not None:
                written.append(path)
        return written

    def relation(self, name: str) -> Collection:
        """Any relation's collection (outside loops), outputs or not."""
        if name not in self._relations:
            near = closest(name, list(self._relations))
            raise KeyError(f"no relation {name!r}" + (f"; did you mean {near!r}?" if near else ""))
        return self._relations[name]

    # -- what was built --------------------------------------------------------------------
    @property
    def loops(self) -> list[str]:
        """Scope paths of the engine loops, one per recursive stratum (``flow.lattice``,
        ``flow.loop_differences`` and the explorer read them)."""
        return list(self._compiler.loops)

    @property
    def rules(self) -> list:
        """The program's rules (disjunctions and multiple heads expanded), numbered from 1."""
        return list(self.analysis.program.rules)

    def explain(self) -> str:
        """The strata in evaluation order and each rule's plan (join order and keys)."""
        lines = []
        loops = iter(self._compiler.loops)
        for i, stratum in enumerate(self.analysis.strata, 1):
            kind = ("recursive: one loop, one variable per relation"
                    if stratum.recursive and not self._compiler.partial else
                    f"recursive: unrolled {self._compiler.limit} rounds" if stratum.recursive
                    else "not recursive")
            where = f" (loop {next(loops)})" if stratum.recursive and not \
                self._compiler.partial else ""
            lines.append(f"stratum {i}: {', '.join(stratum.relations)} - {kind}{where}")
            for name in stratum.relations:
                rel = self.analysis.relations[name]
                if rel.is_input:
                    lines.append(f"  {name}: the collection {rel.source}")
                if rel.facts:
                    lines.append(f"  {name}: {len(rel.facts)} fact(s)")
                for rule in rel.rules:
                    lines.append(f"  r{rule.index}  {rule}")
                    for step in self._compiler.plans.get(rule.index, []):
                        lines.append(f"        {step}")
        return "\n".join(lines)

    def why(self, relation: str, fact, *, verify: bool = True):
        """Why ``fact`` is in ``relation`` (after the last step): a proof tree of minimal
        height, each derived fact with the rule (and its source line) that derived it, down
        to input facts; see :mod:`ddlab.engine.rules.proof`.

        >>> flow = Dataflow(); edge = flow.input("edge", columns=["src", "dst"])
        >>> p = rules(".input edge\\npath(x, y) :- edge(x, y).\\n"
        ...           "path(x, z) :- path(x, y), edge(y, z).\\n.output path",
        ...           {"edge": edge}, flow=flow)
        >>> edge.insert([(1, 2), (2, 3)]); _ = flow.step()
        >>> print(p.why("path", (1, 3)))
        path(1, 3): a proof of height 2 from 2 input fact(s); replayed from scratch on them alone: derived again
          path(1, 3)   [r2, line 3: path(x, z) :- path(x, y), edge(y, z).]
            path(1, 2)   [r1, line 2: path(x, y) :- edge(x, y).]
              edge(1, 2)   [input]
            edge(2, 3)   [input]
        """
        return prove(self, relation, fact, verify=verify)

    def differences(self, epoch: int | None = None, by: str = "rule") -> pd.DataFrame:
        """Updates each rule (``by="rule"``) or relation (``by="relation"``) emitted per
        epoch and iteration: columns ``epoch, iteration, rule|relation, updates``.  For a rule
        that is its head's new tuples (and retractions); for a relation, the changes of the
        relation itself (inside a loop: what its variable feeds back, the records in
        difference).  ``iteration`` is the loop's (None outside loops)."""
        stats = self.flow.stats(epoch)
        if by == "rule":
            owners = {}
            for index, ids in self._compiler.rule_outputs.items():
                for op_id in ids:
                    owners[op_id] = f"r{index}"
            column = "rule"
        elif by == "relation":
            owners = {op_id: name for name, ids in self._compiler.relation_results.items()
                      for op_id in ids}
            column = "relation"
        else:
            raise ValueError(f"by must be 'rule' or 'relation', not {by!r}")
        ids = stats["operator"].str.rsplit("#", n=1).str[-1].astype(int) if len(stats) else []
        frame = stats.assign(_id=ids)
        frame = frame[frame["_id"].isin(set(owners))]
        frame = frame.assign(**{column: frame["_id"].map(owners)})
        out = (frame.groupby(["epoch", "iteration", column], dropna=False)["out"].sum()
               .reset_index().rename(columns={"out": "updates"}))
        return out[["epoch", "iteration", column, "updates"]]

