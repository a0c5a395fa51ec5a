"""Each worker's share of one epoch's work, for the explorer's plots when its flow runs on
several workers (``Dataflow(workers=N)``): the updates each worker emitted per iteration of a
loop (the lattice grid's hover) and the seconds each was busy running operators (the latency
plot), so a user sees how evenly the keys split the work and how much of a move was waiting.

Data: the engine's run records by worker (``flow.lattice(..., by_worker=True)``'s cells and
``flow.busy_seconds``), read only with several workers (with one, the explorer reads nothing
more than before).
"""
from __future__ import annotations

__all__ = ["WorkerSplit", "worker_split", "worker_text"]


class WorkerSplit:
    """One epoch's operator runs by worker: ``busy_seconds[w]`` (the seconds of worker
    ``w``'s runs) and :meth:`loop_updates`."""

    def __init__(self, flow, epoch: int):
        self.flow, self.workers, self.epoch = flow, flow.workers, epoch
        self.busy_seconds = flow.busy_seconds(epoch)

    def loop_updates(self, loop: str) -> dict[int, list[int]]:
        """``{iteration: [updates emitted by worker 0, 1, ...]}`` inside ``loop`` (a scope
        path) and the loops nested in it, by the loop's own coordinate: the lattice grid's
        cells of this epoch, split by worker (a prioritized loop's iteration is the second
        part of its ``(priority, iteration)`` coordinate)."""
        cells: dict[int, list[int]] = {}
        for (_, it, w), n in self.flow.statistics.lattice_cells(loop, [self.epoch],
                                                                by_worker=True).items():
            per = cells.get(it)
            if per is None:
                per = cells[it] = [0] * self.workers
            per[w] += int(n)
        return cells


def worker_split(flow, epoch: int) -> WorkerSplit | None:
    """``epoch``'s :class:`WorkerSplit`, or ``None`` when the flow runs on one worker."""
    return WorkerSplit(flow, epoch) if flow.workers > 1 else None


def worker_text(counts) -> str:
    """``"worker 0: 1,234 · worker 1: 1,190"``: one number per worker, as the hover shows
    them."""
    return " · ".join(f"worker {w}: {n:,}" for w, n in enumerate(counts))
