"""``%dd save`` / ``%dd load``: a session restored from disk reads as the saved one, further
steps match a session that never stopped, nothing from the file is run, and a damaged
checkpoint loads nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from ddlab.kernel_ext import get_magics

from ..conftest import as_dict, cell, dd

pytestmark = pytest.mark.spark


def _declare(ip):
    dd(ip, "input edges --from collegemsg --window 7d --step 1d")
    cell(ip, "cc", "connected_components(edges)")


def test_save_load_restores_and_later_steps_match_a_session_that_never_stopped(ip, spark,
                                                                                tmp_path):
    _declare(ip)
    dd(ip, "step 4")
    dd(ip, "insert edges [(900001, 900002)]")       # a hand-made row, saved with the window
    saved = {n: as_dict(dd(ip, f"show {n}").frame) for n in ("edges", "cc")}
    epoch = get_magics(ip).session.flow.epoch
    note = dd(ip, f"save {tmp_path / 'ck'}")
    assert "saved 1 input(s)" in repr(note)
    dd(ip, "step 3")                                 # the session that never stopped
    later = {n: as_dict(dd(ip, f"show {n}").frame) for n in ("edges", "cc")}

    dd(ip, "reset")
    restored = dd(ip, f"load {tmp_path / 'ck'}")
    text = repr(restored)
    assert "window position 4" in text and "saved declaration cc" in text   # listed, not run
    session = get_magics(ip).session
    assert "cc" not in session.derived and session.flow.epoch == epoch
    assert as_dict(dd(ip, "show edges").frame) == saved["edges"]
    cell(ip, "cc", "connected_components(edges)")    # the user runs the cell again
    assert as_dict(dd(ip, "show cc").frame) == saved["cc"]
    dd(ip, "step 3")
    assert {n: as_dict(dd(ip, f"show {n}").frame) for n in ("edges", "cc")} == later


def test_load_rebuilds_this_sessions_declarations(ip, spark, tmp_path):
    _declare(ip)
    dd(ip, "step 2")
    saved = as_dict(dd(ip, "show cc").frame)
    dd(ip, f"save {tmp_path / 'ck'}")
    dd(ip, "step 5")
    note = dd(ip, f"load {tmp_path / 'ck'}")          # cc is declared here: rebuilt on the inputs
    assert "rebuilt this session's declarations on them: cc" in repr(note)
    assert as_dict(dd(ip, "show cc").frame) == saved


def test_a_damaged_checkpoint_loads_nothing(ip, spark, tmp_path):
    _declare(ip)
    dd(ip, "step 1")
    dd(ip, f"save {tmp_path / 'ck'}")
    before = as_dict(dd(ip, "show cc").frame), get_magics(ip).session.flow.epoch
    arrow = next(Path(tmp_path / "ck").glob("*.arrow"))
    arrow.write_bytes(arrow.read_bytes()[:-40])      # truncated
    with pytest.raises(UsageError, match="Nothing was loaded"):
        dd(ip, f"load {tmp_path / 'ck'}")
    assert (as_dict(dd(ip, "show cc").frame), get_magics(ip).session.flow.epoch) == before
    manifest = tmp_path / "ck" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["metadata"]["ddlab_session"]["derived"][0]["body"] = "__import__('os').system('x')"
    manifest.write_text(json.dumps(data))            # tampered: the checksum no longer matches
    with pytest.raises(UsageError, match="Nothing was loaded"):
        dd(ip, f"load {tmp_path / 'ck'}")


def test_save_refuses_queued_updates(ip, tmp_path):
    dd(ip, "input edges --columns src,dst")
    dd(ip, "insert edges [(1, 2)] --no-step")
    with pytest.raises(UsageError, match="queued but not stepped"):
        dd(ip, f"save {tmp_path / 'ck'}")
    assert not (tmp_path / "ck").exists()
