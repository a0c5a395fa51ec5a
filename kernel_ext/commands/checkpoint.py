"""``%dd save PATH`` and ``%dd load PATH``: a whole magics session on disk and back.

Why this shape: the engine's checkpoint (``Dataflow.save``, documented in
``ddlab.engine.checkpoint``: Arrow IPC files and a checksummed JSON manifest, never pickle)
holds the inputs' contents; the session adds, as plain JSON in the manifest's metadata, each
input's re-readable load options (a dataset name, a path or SQL) and window position, and the
source text of the ``%%dd`` declarations.  ``%dd load`` reads the sources again for the
windows, restores the contents, positions and epoch, and rebuilds this session's own
declarations on them.  The saved declaration bodies are code, and nothing from a file is ever
run: they are listed, to be declared again by running their cells.
"""
from __future__ import annotations

from html import escape

from IPython.core.magic_arguments import argument, magic_arguments

from ..declarations import InputDecl
from ..messages import SessionError, first_line

__all__ = ["save", "load"]


class CheckpointNote:
    """What ``%dd save``/``%dd load`` did, in one or a few lines (text and HTML)."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        return "<br>".join(escape(line) for line in self.lines)


@magic_arguments(name="dd save")
@argument("path", help="a folder to write (replaced if it holds an earlier checkpoint)")
def save(magics, line, ns):
    """Save the session: every input's contents (Arrow IPC, checksummed JSON manifest, never
    pickle), windows and positions, and the %%dd declarations' text.
    Example: %dd save checkpoints/monday
    """
    from ddlab.engine import DataflowError

    args = magics.parse(save, line)
    if args is None:
        return None
    s = magics.session
    if s.pending():
        raise SessionError(f"%dd save: {s.pending():,} updates are queued but not stepped; a "
                           f"checkpoint holds what the epochs committed.",
                           "Run %dd step first (or %dd rebuild to drop nothing and continue).")
    try:
        s.flow.save(args.path, metadata={"ddlab_session": s.checkpoint_metadata()})
    except (DataflowError, OSError) as err:
        raise SessionError(f"%dd save {args.path}: {first_line(err)}") from err
    return CheckpointNote([f"saved {len(s.inputs)} input(s) after epoch {s.flow.epoch - 1} and "
                           f"{len(s.derived)} declaration(s) to {args.path}",
                           "restore with %dd load " + args.path])


@magic_arguments(name="dd load")
@argument("path", help="a folder written by %%dd save")
def load(magics, line, ns):
    """Restore a session saved with %dd save: inputs, windows, positions and epoch.  The
    %%dd declarations of this session are rebuilt on them; the saved ones are listed (their
    bodies are code and are never run from a file: run their cells).
    Example: %dd load checkpoints/monday
    """
    from ddlab.engine.checkpoint import CheckpointError, read

    from ..loading import LoadRequest, load_input

    args = magics.parse(load, line)
    if args is None:
        return None
    try:
        ckpt = read(args.path)
    except CheckpointError as err:
        raise SessionError(f"%dd load {args.path}: {first_line(err)}",
                           "Nothing was loaded; the session is as it was.") from err
    meta = ckpt.metadata.get("ddlab_session")
    if not isinstance(meta, dict) or meta.get("format") != "ddlab-session":
        raise SessionError(f"%dd load {args.path}: this checkpoint holds no %dd session (it "
                           f"was written by Dataflow.save?).",
                           "Restore it in Python with ddlab.Dataflow.load(path, build).")
    if meta.get("version") != 1:
        raise SessionError(f"%dd load {args.path}: session format version "
                           f"{meta.get('version')!r}; this ddlab reads version 1.")
    s = magics.session
    inputs, frames, positions = {}, {}, {}
    with magics.progress_row(f"%dd load {args.path}") as progress:
        for entry in meta["inputs"]:
            name, columns = entry["name"], list(entry["columns"])
            if entry.get("request"):
                progress.phase(f"reading the source of {name} again")
                decl = load_input(LoadRequest(**entry["request"]), ns, progress)
                if list(decl.columns) != columns:
                    raise SessionError(f"%dd load: {name}'s source now gives fields "
                                       f"{decl.columns}, the checkpoint {columns}.",
                                       "Nothing was loaded; the source changed since saving.")
            else:
                decl = InputDecl(name, columns, f"restored from {args.path}", "empty")
            decl.initial = None
            if entry.get("position") is not None:
                if decl.batches is None or entry["position"] >= len(decl.batches):
                    raise SessionError(f"%dd load: {name}'s window position "
                                       f"{entry['position']} does not exist in its source now.",
                                       "Nothing was loaded; the source changed since saving.")
                positions[name] = (entry["position"], entry["moves"])
            inputs[name] = decl
            frame = ckpt.frames.get(name)
            if frame is not None:
                frames[name] = frame.set_axis(columns + ["diff"], axis=1)
        s.restore(inputs, frames, positions, ckpt.epoch, ns, progress)
    magics.sync()
    lines = [f"restored {len(inputs)} input(s) at epoch {ckpt.epoch - 1} from {args.path}"
             + "".join(f"; {n} at window position {p}" for n, (p, _) in positions.items())]
    if s.derived:
        lines.append(f"rebuilt this session's declarations on them: {', '.join(s.derived)}")
    missing = [d for d in meta["derived"] if d["name"] not in s.derived]
    for d in missing:
        lines.append(f"saved declaration {d['name']} (not run from the file; run its cell): "
                     f"%%dd {d['name']}  {d['body'].strip().splitlines()[-1]}")
    return CheckpointNote(lines)
