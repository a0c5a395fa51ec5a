"""Freed temporaries' pages go back to the system after large runs (engine/memory.py)."""
from __future__ import annotations

import numpy as np
import pytest

from ddlab import Dataflow
from ddlab.engine import memory
from ddlab.engine.runtime import protocol
from ddlab.engine.testing import tuned


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(memory._TRIM is None, reason="the C library has no malloc_trim "
                    "(not glibc): release_free_memory does nothing there")
def test_release_returns_the_pages_of_freed_heap_blocks():
    # freeing a block above the mmap threshold raises the threshold (to 32 MB at most), so
    # the 1 MB blocks after it come from the heap; the small blocks kept between them stop
    # free() from trimming the heap's top, as a large run's surviving state does
    np.ones(40 * 2**20 // 8)
    blocks, pins = [], []
    for _ in range(160):
        blocks.append(np.ones(2**20 // 8))
        pins.append(np.ones(300_000 // 8))
    del blocks
    before = _rss_mb()
    assert memory.release_free_memory()
    released = before - _rss_mb()
    assert released >= 80, f"only {released:.0f} MB of 160 MB freed went back"
    assert len(pins) == 160


def test_only_large_runs_and_steps_release(monkeypatch):
    calls = []
    monkeypatch.setattr(protocol, "release_free_memory", lambda: calls.append("run"))
    monkeypatch.setattr("ddlab.engine.dataflow.release_free_memory",
                        lambda: calls.append("step"))
    flow = Dataflow()
    xs = flow.input("xs")
    counts = xs.map(lambda x: x % 3).count().view()
    with tuned(RELEASE_AFTER_ROWS=100):
        xs.insert(list(range(30)))
        flow.step()
        assert calls == []
        xs.insert(list(range(30, 150)))
        flow.step()
    # the 120 rows' run (the map fused into its reader) and the step that processed them
    assert "run" in calls and calls[-1] == "step", calls
    assert counts.to_dict() == {(r, sum(1 for x in range(150) if x % 3 == r)): 1
                                for r in range(3)}


def test_compact_gives_its_merges_temporaries_back(monkeypatch):
    calls = []
    monkeypatch.setattr("ddlab.engine.dataflow.release_free_memory",
                        lambda: calls.append("compact"))
    flow = Dataflow()
    xs = flow.input("xs")
    distinct = xs.distinct().view()
    xs.insert([1, 2, 3])
    flow.step()
    xs.remove([2])
    flow.step()
    calls.clear()
    flow.compact()
    assert calls == ["compact"]
    assert distinct.to_dict() == {1: 1, 3: 1}
