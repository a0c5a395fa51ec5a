"""Soufflé's file IO: ``.input``/``.output`` reading and writing ``.facts`` and ``.csv`` files,
and ``.type`` subtypes and unions resolved to the base types the files are read as.

Why: a Soufflé program runs beside its facts folder (``souffle -F facts -D out prog.dl``); the
same text runs here with ``rules(text, facts_dir="facts")``.  An ``.input`` whose relation is
not one of the collections given reads ``<facts_dir>/<name>.facts`` (tab-separated, Soufflé's
default) or the file its options name, once, into a new input collection of the flow
(``program.file_inputs``), which later updates can change like any other.  ``.output`` files
are written by :meth:`RulesProgram.write_outputs` after a step, ``<output_dir>/<name>.csv``
(tab-separated) by default.

Options, as Soufflé's: ``IO=file`` (the default; ``IO=stdout`` for an output prints it),
``filename`` (relative to the facts or output folder), ``delimiter`` (default a tab),
``headers=true`` (a first line of field names, skipped on input, written on output),
``rfc4180=true`` (fields quoted with ``"`` where needed), ``compress=true`` (gzip; also any
file name ending in ``.gz``).  Values are read by the field's declared type: ``number`` and
``unsigned`` as integers, ``float`` as floats, ``symbol`` as text; a relation with no ``.decl``
takes each column as integers if every value is one, else floats, else text.
"""
from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

from .errors import RulesError, RulesTypeError, UnsupportedError

__all__ = ["base_type", "check_options", "read_facts", "write_relation", "OPTIONS"]

#: the IO options understood (any other is refused by name)
OPTIONS = ("IO", "filename", "delimiter", "headers", "rfc4180", "compress", "attributeNames",
           "fact-dir", "output-dir")
PRIMITIVES = {"number": "number", "unsigned": "number", "float": "float", "symbol": "symbol",
              "bool": "bool"}


def base_type(name: str, types: dict, text: str | None = None, pos=None, seen=()) -> str:
    """``number``, ``float`` or ``symbol`` for a declared type name: a primitive, a subtype
    (``.type Id <: number``) or a union (``.type U = A | B``) of types of one base."""
    if name in PRIMITIVES:
        return PRIMITIVES[name]
    if name not in types:
        return name                   # unknown names are left as written (not checked)
    if name in seen:
        raise RulesTypeError(f"type {name} is defined through itself", text, types[name][1])
    members, where = types[name]
    bases = {base_type(m, types, text, where, seen + (name,)) for m in members}
    if len(bases) != 1:
        raise RulesTypeError(f"the union {name} mixes types of different bases "
                             f"({', '.join(sorted(bases))})", text, where,
                             "a union's members must all be numbers, or all symbols")
    return bases.pop()


def _flag(options: dict, key: str) -> bool:
    value = options.get(key, ("false", None))[0]
    return str(value).lower() in ("true", "1", "yes")


def _check(options: dict, text: str, what: str) -> None:
    io_kind = options.get("IO", ("file", None))
    allowed = ("file", "stdout") if what == "output" else ("file",)
    if io_kind[0] not in allowed:
        raise UnsupportedError(
            f"IO={io_kind[0]} is not supported for an {what}", text, io_kind[1],
            "read files with IO=file (the default), or give the relation as a collection: "
            "rules(text, {name: collection})")
    for key, (_, pos) in options.items():
        if key not in OPTIONS:
            raise UnsupportedError(f"IO option {key} is not supported", text, pos,
                                   f"options: {', '.join(OPTIONS)}")


def check_options(program, text: str) -> None:
    """Every IO option of the program's directives is one Soufflé has and ddlab runs (checked
    before anything is built, also for an input given as a collection)."""
    for inp in program.inputs:
        _check(inp.options, text, "input")
    for out in program.outputs:
        _check(out.options, text, "output")


def _open(path: Path, mode: str, options: dict):
    if _flag(options, "compress") or path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, mode + "b"), encoding="utf-8", newline="")
    return open(path, mode, encoding="utf-8", newline="")


def _reader(fh, options):
    delimiter = options.get("delimiter", ("\t", None))[0]
    if _flag(options, "rfc4180"):
        return csv.reader(fh, delimiter=delimiter, quotechar='"')
    return csv.reader(fh, delimiter=delimiter, quoting=csv.QUOTE_NONE)


def fact_path(name: str, options: dict, folder) -> Path:
    filename = options.get("filename", (f"{name}.facts", None))[0]
    path = Path(filename)
    return path if path.is_absolute() else Path(folder or ".") / path


def read_facts(directive, types: list | None, folder, text: str) -> tuple[list, list | None]:
    """``(rows, columns)`` of the file an ``.input`` names; ``types`` are the relation's
    declared base types (None: inferred per column)."""
    options = directive.options
    _check(options, text, "input")
    path = fact_path(directive.name, options, folder)
    if not path.exists():
        raise RulesError(f".input {directive.name}: no file {path} (and no collection named "
                         f"{directive.source or directive.name} was given)", text,
                         directive.pos, "give the facts folder with rules(..., facts_dir=PATH)"
                         ", or give the relation as a collection")
    header = None
    with _open(path, "r", options) as fh:
        lines = [row for row in _reader(fh, options) if row and row != [""]]
    if _flag(options, "headers") and lines:
        header, lines = lines[0], lines[1:]
    if types is not None:
        for i, row in enumerate(lines, 2 if header else 1):
            if len(row) != len(types):
                raise RulesError(f"{path}, line {i}: {len(row)} field(s) but "
                                 f"{directive.name} has {len(types)}", text, directive.pos,
                                 "check the delimiter (a tab by default; delimiter=\",\" for "
                                 "comma-separated files)")
        kinds = types
    else:
        width = {len(r) for r in lines}
        if len(width) > 1:
            raise RulesError(f"{path}: lines have {sorted(width)} fields", text, directive.pos,
                             "declare the relation with .decl, and check the delimiter")
        n = width.pop() if width else 1
        kinds = [_infer([r[j] for r in lines]) for j in range(n)]
    rows = []
    for i, row in enumerate(lines, 2 if header else 1):
        try:
            values = tuple(_value(v, k) for v, k in zip(row, kinds))
        except ValueError:
            bad = next(v for v, k in zip(row, kinds) if not _parses(v, k))
            raise RulesTypeError(f"{path}, line {i}: {bad!r} is not a "
                                 f"{kinds[row.index(bad)]}", text, directive.pos) from None
        rows.append(values if len(values) > 1 else values[0])
    return rows, header


def _infer(values) -> str:
    for kind in ("number", "float"):
        if all(_parses(v, kind) for v in values):
            return kind
    return "symbol"


def _parses(value: str, kind: str) -> bool:
    try:
        _value(value, kind)
        return True
    except ValueError:
        return False


def _value(value: str, kind: str):
    if kind == "number":
        return int(value, 0) if value.strip()[:2].lower() in ("0x", "0b") else int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return True
    return value


def write_relation(name: str, rows: list, columns: list, options: dict, folder,
                   text: str) -> Path | None:
    """Write ``rows`` (tuples) of output ``name`` as its options say; the path written (None
    for ``IO=stdout``, which prints)."""
    _check(options, text, "output")
    delimiter = options.get("delimiter", ("\t", None))[0]
    quoting = csv.QUOTE_MINIMAL if _flag(options, "rfc4180") else csv.QUOTE_NONE
    lines = sorted(rows, key=lambda r: tuple((str(type(v)), v) for v in r))
    if options.get("IO", ("file", None))[0] == "stdout":
        print(f"---------------\n{name}\n===============")
        for r in lines:
            print(delimiter.join("()" if v is True else str(v) for v in r))
        print("===============")
        return None
    filename = options.get("filename", (f"{name}.csv", None))[0]
    path = Path(filename)
    path = path if path.is_absolute() else Path(folder or ".") / path
    path.parent.mkdir(parents=True, exist_ok=True)
    with _open(path, "w", options) as fh:
        writer = csv.writer(fh, delimiter=delimiter, quoting=quoting, escapechar="\\",
                            lineterminator="\n")
        if _flag(options, "headers"):
            writer.writerow(columns)
        for r in lines:
            writer.writerow(["()" if v is True else v for v in r])
    return path
