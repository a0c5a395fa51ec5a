"""Checkpoint and restore: outputs equal the saved ones, later steps match a flow that never
stopped, and a damaged checkpoint gives a clear error and builds nothing."""
from __future__ import annotations

import json

import pytest

import ddlab
from ddlab import CheckpointError

from .reliability_helpers import apply, build_program, epochs, reading


def _program(flow):
    flow.max_iterations = 200
    return build_program(flow)


def _results(r):
    return {k: r[k] for k in ("views", "epoch")}


def test_restore_equals_saved_and_continues_like_a_flow_that_never_stopped(tmp_path):
    batches = epochs(6, seed=11)
    flow, inputs, views, seen = build_program()
    for batch in batches[:3]:
        apply(inputs, batch)
        flow.step()
    inputs["labels"].remove([(99, "never there")])  # a negative multiplicity survives too
    flow.step()
    flow.save(tmp_path / "ck", metadata={"feed": {"position": 3, "epochs": 4}})
    restored = ddlab.Dataflow.load(tmp_path / "ck", _program)
    r_flow, r_inputs, r_views, r_seen = restored.built
    assert restored is r_flow and restored.metadata == {"feed": {"position": 3, "epochs": 4}}
    assert _results(reading(r_flow, r_inputs, r_views)) == _results(reading(flow, inputs, views))
    assert {n: i.columns for n, i in r_inputs.items()} == {n: i.columns for n, i in inputs.items()}
    for batch in batches[3:]:
        apply(inputs, batch)
        apply(r_inputs, batch)
        flow.step()
        r_flow.step()
        assert _results(reading(r_flow, r_inputs, r_views)) == \
            _results(reading(flow, inputs, views))
        assert r_views["scc"].changes().equals(views["scc"].changes())


def test_value_types_round_trip(tmp_path):
    flow = ddlab.Dataflow()
    x = flow.input("x", columns=["i", "f", "b", "s", "big"])
    flow.input("y")  # unnamed, never given rows
    view = x.view()
    rows = [(1, 0.5, True, "a", 2 ** 70), (-3, float("nan"), False, None, -(2 ** 80)),
            (2 ** 62, 1e300, True, "é ✓", 2 ** 64 + 5)]
    x.insert(rows)
    x.update([((7, 7.0, False, "gone", 2 ** 66), -2)])
    flow.step()
    flow.save(tmp_path / "ck")

    def build(f):
        return f.input("x", columns=["i", "f", "b", "s", "big"]).view(), f.input("y")

    restored = ddlab.Dataflow.load(tmp_path / "ck", build)
    got = restored.built[0].to_dict()
    want = view.to_dict()
    assert repr(sorted(got.items(), key=repr)) == repr(sorted(want.items(), key=repr))
    assert restored.epoch == 1 and restored.built[1].columns is None


def _saved(tmp_path):
    flow, inputs, views, seen = build_program()
    apply(inputs, epochs(1, seed=2)[0])
    flow.step()
    path = tmp_path / "ck"
    flow.save(path)
    return path


def _must_fail(path, match):
    built = []
    with pytest.raises(CheckpointError, match=match):
        ddlab.Dataflow.load(path, lambda f: built.append(f))
    assert built == []  # nothing was built


def test_truncated_file_is_refused(tmp_path):
    path = _saved(tmp_path)
    data_file = sorted(path.glob("input-*.arrow"))[0]
    data_file.write_bytes(data_file.read_bytes()[:-40])
    _must_fail(path, r"input-000\.arrow: \d+ bytes whose sha256 does not match the manifest "
                     r".* input 'edges'; the file is truncated or was changed")


def test_tampered_data_is_refused(tmp_path):
    path = _saved(tmp_path)
    data_file = sorted(path.glob("input-*.arrow"))[0]
    raw = bytearray(data_file.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    data_file.write_bytes(bytes(raw))
    _must_fail(path, r"sha256 does not match")


def test_tampered_manifest_is_refused(tmp_path):
    path = _saved(tmp_path)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["epoch"] = 40
    (path / "manifest.json").write_text(json.dumps(manifest))
    _must_fail(path, r"manifest's checksum does not match its contents")
    (path / "manifest.json").write_text('{"format": "ddlab-checkpoint", "vers')
    _must_fail(path, r"manifest.json: not valid JSON")


def test_future_version_and_missing_pieces(tmp_path):
    path = _saved(tmp_path)
    text = (path / "manifest.json").read_text()
    (path / "manifest.json").write_text(text.replace('"version": 1', '"version": 99'))
    _must_fail(path, r"format version 99; this ddlab reads version 1")
    _must_fail(tmp_path / "nowhere", r"no checkpoint here \(manifest.json is missing\)")
    path = _saved(tmp_path)
    (path / "input-000.arrow").unlink()
    _must_fail(path, r"input-000\.arrow: missing \(input 'edges'\)")


def test_build_must_declare_every_saved_input(tmp_path):
    path = _saved(tmp_path)
    with pytest.raises(CheckpointError, match=r"holds input\(s\) \['labels'\] that build\(\) "
                                              r"did not declare"):
        ddlab.Dataflow.load(path, lambda f: f.input("edges", columns=["src", "dst"]))


def test_save_refuses_pending_updates_and_pickling_objects(tmp_path):
    flow = ddlab.Dataflow()
    x = flow.input("x")
    x.insert([(1, "a")])
    with pytest.raises(CheckpointError, match=r"updates wait for the next step in \{'x': 1\}"):
        flow.save(tmp_path / "ck")
    flow.step()
    flow.save(tmp_path / "ck")
    y = ddlab.Dataflow()
    t = y.input("t")
    t.insert([(1, ("a", "tuple"))])
    y.step()
    with pytest.raises(CheckpointError, match=r"input 't' field 1: holds \('a', 'tuple'\) "
                                              r"\(tuple\); a checkpoint stores numbers"):
        y.save(tmp_path / "ck")
    # the earlier checkpoint at that path is intact
    restored = ddlab.Dataflow.load(tmp_path / "ck", lambda f: f.input("x").view())
    assert restored.built.to_dict() == {(1, "a"): 1}
    with pytest.raises(CheckpointError, match=r"metadata must be plain JSON"):
        flow.save(tmp_path / "ck2", metadata={"f": object()})
    assert not (tmp_path / "ck2").exists()


def test_save_never_overwrites_what_is_not_a_checkpoint(tmp_path):
    from ddlab.engine.checkpoint import CheckpointError

    flow = ddlab.Dataflow()
    flow.input("xs").insert([1])
    flow.step()
    precious = tmp_path / "notes.txt"
    precious.write_text("mine")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "data.csv").write_text("a,b")
    for target in (precious, folder):
        with pytest.raises(CheckpointError, match="is not a ddlab checkpoint"):
            flow.save(target)
    assert precious.read_text() == "mine" and (folder / "data.csv").read_text() == "a,b"
    flow.save(tmp_path / "ck")
    flow.save(tmp_path / "ck")          # an earlier checkpoint is replaced
    assert ddlab.Dataflow.load(tmp_path / "ck", lambda f: f.input("xs")).epoch == 1
