"""``python -m benchmarks scaling`` at 1 and 2 workers on CollegeMsg: every measurement runs
in its own process and reports its figures, and every output equals the one-worker run's,
which equals scipy's (the children run ``python -m benchmarks...`` in the checkout)."""
from __future__ import annotations

import pytest
from benchmark_modules import load_benchmark


@pytest.fixture(scope="module")
def scaling():
    return load_benchmark("scaling_workload")


@pytest.fixture(scope="module")
def figures(scaling):
    """Eight fresh processes (about 35 s here), two of them with a forked worker."""
    return scaling.measure_all((1, 2), [("cc", "collegemsg"), ("scc", "collegemsg")],
                               batch=("collegemsg", 1_000), updates=("collegemsg", 6))


@pytest.mark.slow
def test_every_measurement_ran(scaling, figures):
    assert not [k for k in figures if "_error_" in k or k.endswith("_skipped")], figures
    for prefix in ("cc_collegemsg", "scc_collegemsg"):
        for w in (1, 2):
            for figure in ("scratch_s", "cpu_s", "worker0_peak_mb", "peak_sum_mb", "pss_sum_mb"):
                assert figures[f"{prefix}_{figure}_w{w}"] > 0, (prefix, figure, w)
            assert figures[f"{prefix}_others_cores_w{w}"] >= 0
        assert len(figures[f"{prefix}_cpu_per_worker_s_w2"]) == 2
        assert len(figures[f"{prefix}_queued_per_worker_s_w2"]) == 2
        assert figures[f"{prefix}_worker0_asleep_s_w2"] >= 0
        assert figures[f"{prefix}_messages_w2"] > 0
        assert figures[f"{prefix}_peak_sum_mb_w2"] > figures[f"{prefix}_worker0_peak_mb_w2"]
    assert [w for w, _ in figures["figure20"]["cc collegemsg"]] == [1, 2]
    assert figures["batch_collegemsg_s_w2"] > 0 and "batch_collegemsg_speedup_w2" in figures
    assert [row["workers"] for row in figures["figure21"]] == [1, 2]
    assert {w: len(lat) for w, lat in figures["figure21_latencies_ms"].items()} == {1: 6, 2: 6}
    assert figures["machine_note"].startswith(f"{figures['cores']} cores")
    assert set(figures["issue31_targets"]) == {what for *_, what in scaling.TARGETS}


@pytest.mark.slow
def test_outputs_match_one_worker_and_scipy(figures):
    for prefix in ("cc_collegemsg", "scc_collegemsg", "batch_collegemsg", "update_collegemsg"):
        assert figures[f"{prefix}_matches_scipy_w1"] is True, prefix
        assert figures[f"{prefix}_matches_w1_w2"] is True, prefix
        assert figures[f"{prefix}_output_rows"] > 0
        assert figures[f"{prefix}_choice"].startswith("plain label propagation")


def test_worker_counts(scaling):
    assert scaling.worker_counts(None) == (1, 2, 4, 8)
    assert scaling.worker_counts("4, 2") == (1, 2, 4)
    with pytest.raises(SystemExit, match="worker counts separated by commas"):
        scaling.worker_counts("two")
    with pytest.raises(SystemExit, match=">= 1"):
        scaling.worker_counts("0,2")


def test_drawn_changes_are_deletions_of_edges_and_new_edges(scaling):
    import numpy as np

    rows = np.array([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)], dtype=np.int64)
    deletions, insertions = scaling.draw_changes(rows, 4, seed=3)
    present = set(map(tuple, rows.tolist()))
    assert len(deletions) == len(set(deletions)) == 2 and set(deletions) <= present
    assert len(insertions) == len(set(insertions)) == 2 and not set(insertions) & present
    assert (deletions, insertions) == scaling.draw_changes(rows, 4, seed=3)

