"""Checkpoint and restore: a flow's inputs on disk, in a documented, versioned format.

Why this shape: the state of a differential dataflow is a pure function of its inputs' contents
(every operator's output is a function of its input collections), so a checkpoint holds the
inputs and nothing else.  Operators are Python code; a file must never carry code, so
:func:`load` takes the program (``build``) from the caller, rebuilds the operators, then
inserts the saved contents and runs one epoch: every output then equals the saved flow's, and
later steps agree with a flow that never stopped.  Nothing is pickled and nothing from the file
is executed or imported: the manifest is JSON, the data are Arrow IPC files with plain
column types, and both are verified before anything is built.

Format (version 1): a directory holding

``manifest.json``::

    {"format": "ddlab-checkpoint", "version": 1, "ddlab_version": "0.1.0",
     "flow": "dataflow", "epoch": 12,
     "settings": {"max_iterations": 10000, "max_rows_per_epoch": 20000000},
     "inputs": [{"name": "edges", "columns": ["src", "dst"] | null,
                 "fields": [{"kind": "i"|"f"|"b"|"o", "encoding": "int64"|"float64"|"bool"
                             |"utf8"|"int-as-text"}, ...] | null,
                 "rows": 1234, "file": "input-000.arrow" | null, "bytes": 5678,
                 "sha256": "<hex of the file>"}, ...],
     "metadata": {...},                       # the caller's JSON (e.g. window positions)
     "checksum": "<sha256 of this JSON without the checksum field, keys sorted>"}

``input-NNN.arrow``: an Arrow IPC *file* per non-empty input: one column ``fN`` per field
(int64, float64, bool, utf8 with nulls for ``None``; integers beyond int64 as decimal text)
and ``diff`` (int64): the input's accumulated contents, consolidated (a record with
multiplicity ``m`` is one row with ``diff = m``, negative multiplicities included).

The checksums detect truncation and accidental corruption (the loader refuses, naming the
file); they are not a signature.  Writing goes to a temporary directory renamed into place, so
a crash while saving leaves the previous checkpoint intact.

>>> import tempfile, ddlab
>>> def program(flow):
...     edges = flow.input("edges", columns=["src", "dst"])
...     return {"degree": edges.project(0).count().view()}
>>> flow = ddlab.Dataflow(); views = program(flow)
>>> flow.inputs["edges"].insert([(1, 2), (1, 3)]); _ = flow.step()
>>> path = tempfile.mkdtemp() + "/ckpt"
>>> flow.save(path, metadata={"note": "two edges"})
>>> restored = ddlab.Dataflow.load(path, program)
>>> restored.built["degree"].to_dict(), restored.epoch, restored.metadata
({(1, 2): 1}, 1, {'note': 'two edges'})
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._version import __version__
from .columns import BOOL, FLOAT, INT, decode_column
from .dataflow import Dataflow
from .errors import DataflowError

FORMAT = "ddlab-checkpoint"
VERSION = 1
MANIFEST = "manifest.json"
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


class CheckpointError(DataflowError):
    """A checkpoint cannot be written or read: names the file and what is wrong with it.
    Nothing was built or changed."""


@dataclass
class Checkpoint:
    """A verified checkpoint: the manifest and each input's contents as a DataFrame of its
    fields plus ``diff`` (field columns named as the input's columns, or ``c0, c1, ...``)."""

    manifest: dict
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def epoch(self) -> int:
        return self.manifest["epoch"]

    @property
    def metadata(self) -> dict:
        return self.manifest.get("metadata") or {}


# -- writing ---------------------------------------------------------------------------------
def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _arrow_column(values: np.ndarray, kind: str, where: str):
    """``(pyarrow array, encoding)`` of one decoded engine column."""
    import pyarrow as pa

    if kind == INT:
        return pa.array(values, type=pa.int64()), "int64"
    if kind == FLOAT:
        return pa.array(values, type=pa.float64()), "float64"
    if kind == BOOL:
        return pa.array(values.astype(bool), type=pa.bool_()), "bool"
    # the engine reads a missing value (None) in an object column as NaN: both are null here
    items = [None if isinstance(v, float) and v != v else v for v in values.tolist()]
    if all(v is None or isinstance(v, str) for v in items):
        return pa.array(items, type=pa.string()), "utf8"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return pa.array([str(v) for v in items], type=pa.string()), "int-as-text"
    bad = next(v for v in items if not (v is None or isinstance(v, (str, int))))
    raise CheckpointError(f"{where}: holds {bad!r} ({type(bad).__name__}); a checkpoint stores "
                          f"numbers, booleans, strings and None only (never pickled objects). "
                          f"Map such values to strings before they enter the input.")


def save(flow, path, metadata: dict | None = None) -> Path:
    """Write ``flow``'s inputs (their committed contents) and ``metadata`` to directory
    ``path`` (an earlier checkpoint there is replaced; anything else there is refused, never
    overwritten); see the module docstring for the format."""
    import pyarrow as pa

    path = Path(path)
    if path.exists() and not _is_checkpoint(path):
        raise CheckpointError(f"cannot save to {path}: it exists and is not a ddlab checkpoint "
                              f"(a {'folder' if path.is_dir() else 'file'} of something else); "
                              f"nothing was written. Choose a new path.")
    pending = {n: i.pending_count for n, i in flow.inputs.items() if i.pending_count}
    if pending:
        raise CheckpointError(f"cannot save {flow.name!r}: updates wait for the next step in "
                              f"{pending}; step() (or drop them) first, so the checkpoint is one "
                              f"committed epoch")
    if not flow.retain_inputs:
        raise CheckpointError(f"cannot save {flow.name!r}: it was built with "
                              f"retain_inputs=False, so its inputs' contents are not kept")
    try:
        meta_json = json.loads(_canonical(metadata or {}))
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"metadata must be plain JSON (dicts, lists, strings, numbers): "
                              f"{err}") from None
    manifest = {"format": FORMAT, "version": VERSION, "ddlab_version": _version(),
                "flow": flow.name, "epoch": flow.epoch,
                "settings": {"max_iterations": flow.max_iterations,
                             "max_rows_per_epoch": flow.max_rows_per_epoch},
                "inputs": [], "metadata": meta_json}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        for index, (name, inp) in enumerate(flow.inputs.items()):
            entry = {"name": name, "columns": inp.columns, "fields": None, "rows": 0,
                     "file": None, "bytes": 0, "sha256": None}
            contents = inp.op.contents()
            if contents is not None:
                cols, kinds, diffs = contents
                arrays, fields = [], []
                for j, (c, k) in enumerate(zip(cols, kinds)):
                    arr, enc = _arrow_column(decode_column(c, k, flow.interner), k,
                                             f"input {name!r} field {j}")
                    arrays.append(arr)
                    fields.append({"kind": k, "encoding": enc})
                arrays.append(pa.array(diffs, type=pa.int64()))
                table = pa.Table.from_arrays(arrays, names=[f"f{j}" for j in range(len(cols))]
                                             + ["diff"])
                sink = pa.BufferOutputStream()
                with pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)
                data = sink.getvalue().to_pybytes()
                file = f"input-{index:03d}.arrow"
                (tmp / file).write_bytes(data)
                entry.update(fields=fields, rows=len(diffs), file=file, bytes=len(data),
                             sha256=_sha256(data))
            manifest["inputs"].append(entry)
        manifest["checksum"] = _sha256(_canonical(manifest))
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _is_checkpoint(path: Path) -> bool:
    """True for an (empty or) ddlab checkpoint folder: safe to replace."""
    if not path.is_dir():
        return False
    if not any(path.iterdir()):
        return True
    try:
        return json.loads((path / MANIFEST).read_text()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _version() -> str:
    return __version__


# -- reading ---------------------------------------------------------------------------------
def read(path) -> Checkpoint:
    """Read and verify a checkpoint (manifest, checksums, schemas) without building anything."""
    path = Path(path)
    mpath = path / MANIFEST
    if not mpath.is_file():
        raise CheckpointError(f"{path}: no checkpoint here ({MANIFEST} is missing)")
    try:
        manifest = json.loads(mpath.read_bytes())
    except (ValueError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{mpath}: not valid JSON ({err}); the file is truncated or "
                              f"damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"{mpath}: not a ddlab checkpoint manifest")
    if manifest.get("version") != VERSION:
        raise CheckpointError(f"{mpath}: format version {manifest.get('version')!r}; this ddlab "
                              f"reads version {VERSION}")
    claimed = manifest.get("checksum")
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    if claimed != _sha256(_canonical(body)):
        raise CheckpointError(f"{mpath}: the manifest's checksum does not match its contents; "
                              f"it was edited or damaged")
    ckpt = Checkpoint(manifest)
    for entry in manifest["inputs"]:
        ckpt.frames[entry["name"]] = _read_input(path, entry)
    return ckpt


def _read_input(path: Path, entry: dict) -> pd.DataFrame | None:
    import pyarrow as pa

    name = entry["name"]
    if entry["file"] is None:
        return None
    fpath = path / entry["file"]
    if Path(entry["file"]).name != entry["file"]:
        raise CheckpointError(f"{path / MANIFEST}: input {name!r} names file "
                              f"{entry['file']!r} outside the checkpoint")
    if not fpath.is_file():
        raise CheckpointError(f"{fpath}: missing (input {name!r})")
    data = fpath.read_bytes()
    if len(data) != entry["bytes"] or _sha256(data) != entry["sha256"]:
        raise CheckpointError(f"{fpath}: {len(data)} bytes whose sha256 does not match the "
                              f"manifest ({entry['bytes']} bytes expected) for input {name!r}; "
                              f"the file is truncated or was changed")
    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    except pa.ArrowException as err:
        raise CheckpointError(f"{fpath}: not a readable Arrow IPC file ({err})") from None
    fields = entry["fields"]
    expected = [f"f{j}" for j in range(len(fields))] + ["diff"]
    if table.column_names != expected or table.num_rows != entry["rows"]:
        raise CheckpointError(f"{fpath}: columns {table.column_names} and {table.num_rows} "
                              f"rows; the manifest says {expected} and {entry['rows']}")
    names = entry["columns"] if entry["columns"] and len(entry["columns"]) == len(fields) \
        else [f"c{j}" for j in range(len(fields))]
    data_cols = {}
    types = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "utf8": pa.string(), "int-as-text": pa.string()}
    for j, (spec, colname) in enumerate(zip(fields, names)):
        column = table.column(j)
        enc = spec.get("encoding")
        if enc not in types or column.type != types[enc]:
            raise CheckpointError(f"{fpath}: field {j} is {column.type}, the manifest says "
                                  f"{enc!r}")
        if enc in ("utf8", "int-as-text"):
            values = np.array(column.to_pylist(), dtype=object)
            if enc == "int-as-text":
                values = np.array([int(v) for v in values], dtype=object)
        else:
            if column.null_count:
                raise CheckpointError(f"{fpath}: field {j} ({enc}) holds nulls")
            values = column.to_numpy(zero_copy_only=False)
        data_cols[colname] = values
    diff = table.column(len(fields))
    if diff.type != pa.int64() or diff.null_count:
        raise CheckpointError(f"{fpath}: the diff column must be int64 without nulls")
    frame = pd.DataFrame(data_cols)
    frame["diff"] = diff.to_numpy()
    return frame


def load(path, build, **settings):
    """A new Dataflow restored from the checkpoint at ``path``.

    ``build(flow)`` declares the inputs (same names) and operators, exactly as for the saved
    flow; what it returns is kept as ``flow.built``.  Then the saved contents are inserted and
    stepped as one epoch, numbered so that ``flow.epoch`` equals the saved flow's (views'
    ``changes()`` and subscribers see the whole contents arriving at that epoch).  The
    checkpoint's ``metadata`` is ``flow.metadata``.  ``settings`` override the saved
    Dataflow settings.  Any problem with the files raises :class:`CheckpointError` before
    ``build`` runs."""
    ckpt = read(path)
    manifest = ckpt.manifest
    kwargs = dict(manifest.get("settings") or {})
    kwargs.update(settings)
    flow = Dataflow(manifest.get("flow", "dataflow"), **kwargs)
    flow.built = build(flow)
    flow.metadata = ckpt.metadata
    missing = [n for n in ckpt.frames if n not in flow.inputs]
    if missing:
        raise CheckpointError(f"{path}: the checkpoint holds input(s) {missing} that build() "
                              f"did not declare (it declared {list(flow.inputs)})")
    restore_into(flow, ckpt)
    return flow


def restore_into(flow, ckpt: Checkpoint) -> None:
    """Insert a checkpoint's contents into ``flow`` (fresh, built, never stepped) and step."""
    if flow.epoch:
        raise CheckpointError(f"restore into a fresh flow: {flow.name!r} already ran "
                              f"{flow.epoch} epochs")
    epoch = ckpt.epoch
    any_rows = False
    for entry in ckpt.manifest["inputs"]:
        frame = ckpt.frames.get(entry["name"])
        if frame is None or not len(frame):
            continue
        inp = flow.inputs[entry["name"]]
        declared = inp.columns
        if declared is not None and len(declared) != len(entry["fields"]):
            raise CheckpointError(f"input {entry['name']!r} is declared with columns "
                                  f"{declared}; the checkpoint holds {len(entry['fields'])} "
                                  f"fields")
        fields = frame.drop(columns=["diff"])
        if declared is not None:
            fields.columns = declared
        has_null = any(fields[c].dtype == object and fields[c].isna().any() for c in fields)
        if has_null:  # the row path takes None in a string column, as the saved flow did
            values = [fields[c].tolist() for c in fields]
            recs = list(zip(*values)) if len(values) > 1 else values[0]
            inp.update(list(zip(recs, frame["diff"].tolist())))
        else:
            inp.update(fields.assign(diff=frame["diff"].to_numpy()))
        inp.columns = declared if declared is not None else entry["columns"]
        any_rows = True
    if epoch and any_rows:
        flow.epoch = epoch - 1
        flow.step()
    flow.epoch = epoch


# -- the Dataflow's checkpoint methods (installed here: the Dataflow knows nothing of files) --
def _save_method(self, path, metadata: dict | None = None) -> None:
    """Write the inputs' committed contents and ``metadata`` (plain JSON, e.g. window
    positions) to directory ``path``: Arrow IPC files and a checksummed JSON manifest,
    never pickle.  Restore with :meth:`load`."""
    save(self, path, metadata)


def _load_method(cls, path, build, **settings) -> "Dataflow":
    """A new flow from the checkpoint at ``path``: ``build(flow)`` rebuilds the program
    (operators are code, never read from the file), then the saved inputs are inserted
    and stepped; outputs equal the saved flow's.  A damaged file raises
    :class:`~ddlab.engine.checkpoint.CheckpointError` and builds nothing."""
    return load(path, build, **settings)


for _name, _method in (("save", _save_method), ("load", _load_method)):
    _method.__name__, _method.__qualname__ = _name, f"Dataflow.{_name}"
Dataflow.save = _save_method
Dataflow.load = classmethod(_load_method)
