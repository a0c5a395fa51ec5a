"""Each worker's share of one epoch's work, for the explorer's plots when its flow runs on
several workers (``Dataflow(workers=N)``): the updates each worker emitted per iteration of a
loop (the lattice grid's hover) and the seconds each was busy running operators (the latency
plot), so a user sees how evenly the keys split the work and how much of a move was waiting.

Data: ``flow.stats(epoch)``, whose ``worker`` column names the worker of each operator run;
read once per move and shared by both plots, and only with several workers (with one, the
explorer reads nothing more than before).
"""
from __future__ import annotations

__all__ = ["WorkerSplit", "worker_split", "worker_text"]


class WorkerSplit:
    """One epoch's operator runs by worker: ``busy_seconds[w]`` (the seconds of worker
    ``w``'s runs) and :meth:`loop_updates`."""

    def __init__(self, flow, epoch: int):
        self.workers = flow.workers
        self.epoch = epoch
        st = flow.stats(epoch)
        # plain lists: a move's few hundred runs are summed faster in Python than grouped
        # by pandas
        self._runs = list(zip(st["scope"].tolist(), st["time"].tolist(), st["out"].tolist(),
                              st["worker"].tolist()))
        busy = [0.0] * self.workers
        for w, secs in zip(st["worker"].tolist(), st["seconds"].tolist()):
            busy[w] += secs
        self.busy_seconds = busy

    def loop_updates(self, loop: str) -> dict[int, list[int]]:
        """``{iteration: [updates emitted by worker 0, 1, ...]}`` inside ``loop`` (a scope
        path) and the loops nested in it, by the loop's own coordinate: the lattice grid's
        cells of this epoch, split by worker (a prioritized loop's iteration is the second
        part of its ``(priority, iteration)`` coordinate)."""
        depth = loop.count("/")   # "root/scc" -> the loop's coordinate is time[1]
        prefix = loop + "/"
        inside: dict[str, bool] = {}
        cells: dict[int, list[int]] = {}
        for scope, t, out, w in self._runs:
            hit = inside.get(scope)
            if hit is None:
                hit = inside[scope] = scope == loop or scope.startswith(prefix)
            if not hit:
                continue
            c = t[depth]
            it = int(c[1] if isinstance(c, tuple) else c)
            per = cells.get(it)
            if per is None:
                per = cells[it] = [0] * self.workers
            per[w] += int(out)
        return cells


def worker_split(flow, epoch: int) -> WorkerSplit | None:
    """``epoch``'s :class:`WorkerSplit`, or ``None`` when the flow runs on one worker."""
    return WorkerSplit(flow, epoch) if flow.workers > 1 else None


def worker_text(counts) -> str:
    """``"worker 0: 1,234 · worker 1: 1,190"``: one number per worker, as the hover shows
    them."""
    return " · ".join(f"worker {w}: {n:,}" for w, n in enumerate(counts))
