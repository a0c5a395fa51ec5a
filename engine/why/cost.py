"""``flow.why_cost()``: what the last move cost, by operator and by declaration, beside the
move before it, adding up to the step's measured totals.

Everything here is read from the always-on statistics (one record per operator run: updates
in and out, seconds), the updates each operator's traces hold after each epoch
(:meth:`Dataflow.retained_by_operator`) and the input changes of the last two epochs
(:meth:`Dataflow.input_changes`).  Exact, not estimated: the per-operator rows add up to the
:class:`~ddlab.engine.dataflow.StepReport` of the epoch (runs, updates processed, retained
updates, input updates), and the seconds do too once the engine's own time between operator
runs (scheduling, flushing inputs, committing views) is its own row.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..errors import DataflowError
from ..statistics import INPUT_EPOCHS

OVERHEAD = "(engine: scheduling, inputs, views)"
COLUMNS = ["runs", "in", "out", "ms", "growth"]


@dataclass
class MoveCost:
    """The cost of epoch ``epoch`` beside epoch ``previous`` (``None`` if not kept)."""

    epoch: int
    previous: int | None
    by_operator: pd.DataFrame          # one row per operator (+ the engine's own row)
    by_declaration: pd.DataFrame       # the same summed per declaration
    inputs: dict                       # epoch -> {input name: frame of changes (+ diff)}
    totals: dict                       # epoch -> what the StepReport measured
    sums: dict = field(default_factory=dict)   # epoch -> the rows added up

    def adds_up(self) -> bool:
        """Whether the rows add up to the measured totals, for both epochs."""
        return all(_close(self.sums[e], self.totals[e]) for e in self.totals)

    def summary(self) -> str:
        t = self.totals[self.epoch]
        text = (f"epoch {self.epoch}: {t['ms']:.1f} ms, {t['input_updates']:,} input updates, "
                f"{t['in']:,} updates through {t['runs']:,} operator runs, retained "
                f"{t['growth']:+,} updates")
        if self.previous is not None:
            p = self.totals[self.previous]
            ratio = f" ({t['ms'] / p['ms']:.1f}x)" if p["ms"] > 0 else ""
            text += (f"; epoch {self.previous}: {p['ms']:.1f} ms{ratio}, "
                     f"{p['input_updates']:,} input updates, {p['in']:,} updates through "
                     f"{p['runs']:,} runs")
        return text

    def __repr__(self) -> str:
        lines = [self.summary(), "by declaration:",
                 self.by_declaration.to_string(index=False), "by operator (costliest first):",
                 self.by_operator.head(15).to_string(index=False)]
        for e, frames in self.inputs.items():
            for name, frame in frames.items():
                lines.append(f"input changes of {name} in epoch {e}:")
                lines.append(frame.head(10).to_string(index=False))
        return "\n".join(lines)


def _close(a: dict, b: dict) -> bool:
    return all(abs(a[k] - b[k]) <= (1e-6 if k == "ms" else 0) for k in b)


def _per_operator(flow, epoch: int, groups: dict) -> tuple[pd.DataFrame, dict]:
    stats = flow.statistics
    report = stats.report(epoch)
    if report is None:
        raise DataflowError(f"epoch {epoch} is not in the kept statistics (kept: "
                            f"{stats.epochs[:1] + stats.epochs[-1:]})")
    rows: dict = {}
    for op, _, n_in, n_out, secs in stats.runs([epoch]):
        r = rows.setdefault(op.id, [op, 0, 0, 0, 0.0])
        r[1] += 1
        r[2] += n_in
        r[3] += n_out
        r[4] += secs
    after = stats.retained(epoch)
    before = stats.retained(epoch - 1) if stats.report(epoch - 1) is not None else {}
    by_id = {op.id: op for op in flow.operators}
    for op_id in set(after) | set(before):
        rows.setdefault(op_id, [by_id[op_id], 0, 0, 0, 0.0])
    records = []
    for op_id, (op, runs, n_in, n_out, secs) in rows.items():
        growth = after.get(op_id, 0) - before.get(op_id, 0)
        records.append((op_id, op.label, op.kind, op.scope.path,
                        groups.get(op_id, "(not declared)"), runs, n_in, n_out, secs * 1000,
                        growth))
    frame = pd.DataFrame(records, columns=["operator", "label", "kind", "scope", "declaration"]
                         + COLUMNS)
    overhead = report.seconds * 1000 - frame["ms"].sum()
    frame = pd.concat([frame, pd.DataFrame([(-1, OVERHEAD, "engine", "root", OVERHEAD, 0, 0, 0,
                                             overhead, 0)], columns=frame.columns)],
                      ignore_index=True)
    base = stats.report(epoch - 1).retained_updates if stats.report(epoch - 1) else 0
    kept = epoch >= flow.epoch - INPUT_EPOCHS      # input batches are kept two epochs
    given = sum(len(b) for batches in stats.inputs(epoch).values() for b in batches) \
        if kept else report.input_updates
    totals = {"runs": report.operator_runs, "in": report.updates_processed,
              "ms": report.seconds * 1000, "growth": report.retained_updates - base,
              "input_updates": report.input_updates}
    sums = {"runs": int(frame["runs"].sum()), "in": int(frame["in"].sum()),
            "ms": float(frame["ms"].sum()), "growth": int(frame["growth"].sum()),
            "input_updates": given}
    totals["out"] = sums["out"] = int(frame["out"].sum())
    return frame, {"totals": totals, "sums": sums}


def move_cost(flow, epoch: int | None = None, groups: dict | None = None) -> MoveCost:
    """The cost of ``epoch`` (default: the last completed) and of the epoch before it.

    ``groups`` maps operator ids to a declaration name (the magics pass the ``%%dd`` cell
    each operator came from); operators without one are grouped as ``(not declared)``."""
    if flow.epoch == 0:
        raise DataflowError("no epoch has completed yet: step() first")
    epoch = flow.epoch - 1 if epoch is None else epoch
    groups = dict(groups or {})
    now, measured = _per_operator(flow, epoch, groups)
    previous = epoch - 1 if flow.statistics.report(epoch - 1) is not None else None
    totals, sums = {epoch: measured["totals"]}, {epoch: measured["sums"]}
    frame = now
    if previous is not None:
        before, pm = _per_operator(flow, previous, groups)
        totals[previous], sums[previous] = pm["totals"], pm["sums"]
        keyed = before.set_index("operator")[COLUMNS].add_prefix("previous ")
        frame = now.join(keyed, on="operator")
        for c in COLUMNS:
            frame[f"previous {c}"] = frame[f"previous {c}"].fillna(0)
        missing = before[~before["operator"].isin(now["operator"])]
        if len(missing):
            extra = missing.copy()
            for c in COLUMNS:
                extra[f"previous {c}"] = extra[c]
                extra[c] = 0
            frame = pd.concat([frame, extra], ignore_index=True)
    frame = frame.sort_values("ms", ascending=False, kind="stable").reset_index(drop=True)
    value_cols = [c for c in frame.columns if c in COLUMNS or c.startswith("previous ")]
    by_decl = (frame.groupby("declaration", sort=False)[value_cols].sum()
               .sort_values("ms", ascending=False).reset_index())
    inputs = {e: flow.input_changes(e) for e in ([epoch] + ([previous] if previous is not None
                                                            else []))}
    return MoveCost(epoch, previous, frame, by_decl, inputs, totals, sums)


__all__ = ["MoveCost", "move_cost", "OVERHEAD"]
