"""Cached window batches: what the cache gives back is exactly what Spark computed (batch by
batch), a second call reads the file without Spark, and anything the batches depend on
(step, start, variant) is part of the key; a cached file that cannot be read is recomputed,
and that is said (the tests using the ``spark`` fixture are marked ``spark`` by conftest)."""
from __future__ import annotations

import pandas as pd
import pytest

from ddlab.sources import StoredWindows, cached_windows, load_dataset, window_batches

START = int(pd.Timestamp("2004-04-15", tz="UTC").timestamp())


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DDLAB_CACHE_DIR", str(tmp_path))
    return tmp_path


def _same(a, b, ks):
    assert (a.steps, a.origin, a.width, a.step, tuple(a.columns)) == \
        (b.steps, b.origin, b.width, b.step, tuple(b.columns))
    for k in ks:
        x = a.batch(k).sort_values(["src", "dst"]).reset_index(drop=True)
        y = b.batch(k).sort_values(["src", "dst"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(x, y, check_dtype=False)
        assert a.window(k) == b.window(k)


def test_cached_windows_are_sparks_batches_and_are_read_back(spark, cache):
    phases = []

    class Say:
        def phase(self, text):
            phases.append(text)

    first = cached_windows("collegemsg", "7d", "1d", start=START, progress=Say(), spark=spark)
    assert isinstance(first, StoredWindows) and "Spark" in first.stored
    assert any("Spark" in p for p in phases)
    truth = window_batches(load_dataset("collegemsg", spark=spark), "7d", "1d", start=START)
    try:
        ks = (0, 1, 2, 50, truth.steps - 1)
        _same(first, truth, ks)
        files = list((cache / "windows").glob("collegemsg-1w-1d-*.parquet"))
        assert len(files) == 1
        phases.clear()
        again = cached_windows("collegemsg", "7d", "1d", start=START, progress=Say())
        assert again.stored.startswith("cached") and phases == [
            "reading the 1w windows of collegemsg from the cache"]
        _same(again, truth, ks)
        assert list(again.sizes) == list(truth.sizes)
        # a different step, start or variant is another entry
        other = cached_windows("collegemsg", "7d", "2d", start=START, spark=spark)
        assert other.steps != again.steps
        cached_windows("collegemsg", "7d", "1d", spark=spark)
        cached_windows("collegemsg", "7d", "1d", start=START, spark=spark, variant="x",
                       prepare=lambda df: df)
        assert len(list((cache / "windows").glob("*.parquet"))) == 4
        # a damaged file is computed again
        files[0].write_bytes(b"not parquet")
        with pytest.warns(RuntimeWarning, match="could not be read"):
            repaired = cached_windows("collegemsg", "7d", "1d", start=START, spark=spark)
        assert "Spark" in repaired.stored
        _same(repaired, truth, ks)
    finally:
        truth.unpersist()


def test_no_cache_leaves_no_file(spark, cache):
    got = cached_windows("collegemsg", "30d", "10d", cache=False, spark=spark)
    assert got.steps > 0 and not (cache / "windows").exists()


def test_windows_cached_says_whether_the_cache_answers(spark, cache):
    from ddlab.sources import windows_cached

    assert not windows_cached("collegemsg", "30d", "15d", start=START)
    cached_windows("collegemsg", "30d", "15d", start=START, spark=spark)
    assert windows_cached("collegemsg", "30d", "15d", start=START)
    assert not windows_cached("collegemsg", "30d", "15d")          # another start
    assert not windows_cached("collegemsg", "30d", "15d", start=START, variant="x")


def test_a_cached_file_that_cannot_be_read_is_said_in_one_line_with_the_reason(tmp_path):
    """Recomputing on Spark takes minutes: the one line says which file, why it failed and
    what happens next, as a warning and on the progress display."""
    from ddlab.sources.window_cache import _read_or_say_why

    target = tmp_path / "collegemsg-1w-1d-0123456789abcdef.parquet"
    target.write_bytes(b"not parquet")
    phases = []
    with pytest.warns(RuntimeWarning) as caught:
        assert _read_or_say_why(target, phases.append) is None
    (line,) = [str(w.message) for w in caught]
    assert "\n" not in line and str(target) in line
    assert "ArrowInvalid" in line and "computing them again on Spark" in line
    assert phases == [line]
