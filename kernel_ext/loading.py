"""``%dd input``: turn ``--from SOURCE`` and the column options into an :class:`InputDecl`.

A source is, in this order: ``--sql QUERY`` (Spark SQL); a variable of the user's namespace
(a pandas DataFrame, a Spark DataFrame, or a ``LoadResult``); a named dataset
(``collegemsg``, ``twitter24h``, ``travian-messages``, ...); a path to a CSV/JSON/Parquet
file or folder.  A pandas DataFrame without a window is read directly (no Spark); everything
else goes through ``ddlab.sources`` (``load_dataset`` / ``load_events``, then
``window_batches`` for ``--window``).  Every user mistake is a :class:`SessionError` naming
what was wrong with the closest valid name.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from .declarations import InputDecl
from .messages import SessionError, first_line, hint, suggest
from .progress import NullProgress

__all__ = ["LoadRequest", "load_input"]


@dataclass
class LoadRequest:
    name: str
    source: str | None = None
    sql: str | None = None
    src: str | None = None
    dst: str | None = None
    time: str | None = None
    label: str | None = None
    columns: list[str] | None = None
    names: list[str] | None = None
    header: bool = True
    format: str | None = None
    time_format: str | None = None
    window: str | None = None
    step: str | None = None
    multigraph: bool = False


def _is_spark_df(obj) -> bool:
    return hasattr(obj, "sparkSession") and hasattr(obj, "schema") and hasattr(obj, "select")


def _is_load_result(obj) -> bool:
    return hasattr(obj, "df") and hasattr(obj, "report") and _is_spark_df(obj.df)


def _durations(req: LoadRequest):
    if req.window is None and req.step is None:
        return None
    if req.window is None:
        raise SessionError(f"{req.name}: --step needs --window.",
                           "Give both, e.g. --window 7d --step 1d.")
    if req.step is None:
        raise SessionError(f"{req.name}: --window needs --step.",
                           "Give both, e.g. --window 7d --step 1d.")
    from ddlab.sources import to_seconds

    out = []
    for opt, value in (("--window", req.window), ("--step", req.step)):
        try:
            out.append(to_seconds(int(value) if str(value).isdigit() else value))
        except (ValueError, TypeError):
            raise SessionError(f"{req.name}: {opt} {value!r} is not a duration.",
                               "Use seconds or a unit: 3600, 90s, 12h, 7d, 1w.") from None
    return tuple(out)


def _check_columns(req: LoadRequest, wanted: list[str], present: list[str], what: str):
    for col in wanted:
        if col not in present:
            raise SessionError(
                f"{req.name}: no column {col!r} in {what}.",
                hint(suggest(col, present), f"Its columns: {', '.join(map(str, present))}."))


def _resolve(req: LoadRequest, namespace: dict):
    """``(kind, value, description)`` with kind in empty/pandas/spark-df/load-result/sql/
    dataset/path."""
    if req.sql and req.source:
        raise SessionError(f"{req.name}: give --from or --sql, not both.",
                           "--sql takes a Spark SQL query; --from a variable, dataset or path.")
    if req.sql:
        return "sql", req.sql, "Spark SQL query"
    if not req.source:
        return "empty", None, "empty"
    token = req.source
    if token in namespace:
        obj = namespace[token]
        if isinstance(obj, pd.DataFrame):
            return "pandas", obj, f"DataFrame {token} ({len(obj):,} rows)"
        if _is_spark_df(obj):
            return "spark-df", obj, f"Spark DataFrame {token}"
        if _is_load_result(obj):
            return "load-result", obj, f"LoadResult {token} ({obj.report.source})"
        raise SessionError(f"{req.name}: --from {token} is a {type(obj).__name__}, not a "
                           f"DataFrame.", "--from takes a pandas or Spark DataFrame variable, a "
                           "dataset name or a file path; rows go in with %dd insert.")
    from ddlab.sources import dataset_names

    names = dataset_names()
    key = token.lower().replace("_", "").replace(" ", "")
    if key in names or key in {n.replace("-", "") for n in names}:
        return "dataset", token, f"{token} (Spark)"
    path = Path(os.path.expanduser(token))
    if path.exists() or "://" in token:
        return "path", str(path) if "://" not in token else token, f"{path.name} (Spark)"
    looks_like_path = os.sep in token or "/" in token or bool(path.suffix)
    if looks_like_path:
        folder = path.parent if str(path.parent) else Path(".")
        siblings = [str(folder / p.name) if str(path.parent) not in ("", ".") else p.name
                    for p in folder.iterdir()] if folder.is_dir() else []
        close = suggest(token, siblings)
        where = f"folder {folder}" if folder.is_dir() else f"missing folder {folder}"
        raise SessionError(f"{req.name}: no file {token!r} ({where}).",
                           hint(close, "Give an existing CSV/JSON/Parquet path, a dataset name "
                                       f"({', '.join(names[:5])}, ...) or a DataFrame variable."))
    frames = [k for k, v in namespace.items() if not k.startswith("_") and
              (isinstance(v, pd.DataFrame) or _is_spark_df(v))]
    close = suggest(token, names + frames)
    raise SessionError(
        f"{req.name}: unknown source {token!r}: not a variable, a dataset name or a file.",
        hint(close, f"Datasets: {', '.join(names[:5])}, ...; DataFrame variables: "
                    f"{', '.join(frames) or 'none'}."))


def load_input(req: LoadRequest, namespace: dict, progress=None) -> InputDecl:
    """Resolve, validate and load; returns the declaration (nothing is registered yet)."""
    progress = progress or NullProgress()
    window = _durations(req)
    kind, value, described = _resolve(req, namespace)
    start = time.perf_counter()
    if kind == "empty":
        if window:
            raise SessionError(f"{req.name}: --window needs a source to window.",
                               "Add --from SOURCE (a dataset, a path or a DataFrame variable).")
        cols = req.columns or ["src", "dst"]
        return InputDecl(req.name, list(cols), "empty", "empty", request=asdict(req))
    if kind == "pandas" and not window:
        decl = _from_pandas(req, value, described)
        decl.seconds = time.perf_counter() - start
        return decl
    decl = _from_spark(req, kind, value, described, window, progress)
    decl.seconds = time.perf_counter() - start
    if kind in ("dataset", "path", "sql"):   # re-readable from plain options (not a variable)
        decl.request = asdict(req)
    return decl


# -- pandas ---------------------------------------------------------------------------------

def _record_columns(req: LoadRequest, present: list, what: str) -> tuple[list, list]:
    """``(source columns, record column names)`` for a DataFrame source without a window."""
    if req.columns:
        _check_columns(req, req.columns, present, what)
        if req.src or req.dst or req.label:
            raise SessionError(f"{req.name}: --columns and --src/--dst/--label both pick the "
                               "record's fields.", "Use one of them.")
        return list(req.columns), list(req.columns)
    explicit = req.src or req.dst
    src, dst = req.src or "src", req.dst or "dst"
    if explicit or (src in present and dst in present):
        wanted = [src, dst] + ([req.label] if req.label else [])
        _check_columns(req, wanted, present, what)
        return wanted, ["src", "dst"] + (["label"] if req.label else [])
    if req.label:
        _check_columns(req, [req.label], present, what)
    return list(present), [str(c) for c in present]


def _from_pandas(req: LoadRequest, frame: pd.DataFrame, described: str) -> InputDecl:
    if req.sql or req.names or req.format or req.time_format:
        raise SessionError(f"{req.name}: --sql/--names/--format/--time-format apply to files "
                           "and Spark, not to a pandas DataFrame.",
                           "Pick the fields with --columns a,b (or --src/--dst).")
    present = list(frame.columns)
    source_cols, names = _record_columns(req, present, f"DataFrame {req.source}")
    from ddlab.sources import records_with_diff

    records = frame[source_cols].copy()
    records.columns = names
    records = records_with_diff(records, names, multigraph=req.multigraph)
    return InputDecl(req.name, names, described, "pandas", initial=records)


# -- Spark ----------------------------------------------------------------------------------

_OPTION = {"src": "--src", "dst": "--dst", "time": "--time", "label": "--label",
           "columns": "--columns"}


def _spark(req: LoadRequest, progress):
    from ddlab.sources import SparkUnavailable, get_spark, spark_running, spark_status

    ok, why = spark_status()
    if not ok:
        raise SessionError(f"{req.name}: this source needs Spark, and {why[0].lower()}{why[1:]}",
                           "Or load a pandas DataFrame without --window: "
                           f"%dd input {req.name} --from df.")
    if not spark_running():
        progress.phase("starting Spark")
    try:
        return get_spark()
    except SparkUnavailable as err:
        raise SessionError(f"{req.name}: Spark did not start: {err}",
                           "Load a pandas DataFrame instead, or fix Spark and retry.") from err


def _load_error(req: LoadRequest, err: Exception, described: str) -> SessionError:
    """A missing column (the sources' LoadError names it) or a one-line summary."""
    column = getattr(err, "column", None)
    if isinstance(column, str):
        present = list(err.columns or [])
        if err.role == "columns":          # --columns picked it (same words as _check_columns)
            return SessionError(f"{req.name}: no column {column!r} in {described}.",
                                hint(suggest(column, present),
                                     f"Its columns: {', '.join(map(str, present))}."))
        opt = _OPTION.get(err.role, err.role)
        return SessionError(
            f"{req.name}: no column {column!r} in {described} (for {opt}).",
            hint(suggest(column, present),
                 f"Its columns: {', '.join(map(str, present))}; map them with --src/--dst/--time."))
    return SessionError(f"{req.name}: loading {described} failed: {first_line(err)}",
                        "Check the source, the column options and --time-format.")


def _from_spark(req, kind, value, described, window, progress) -> InputDecl:
    from ddlab.sources import DatasetNotFound, LoadError

    mapping = {k: getattr(req, k) for k in ("src", "dst", "time", "label") if getattr(req, k)}
    if kind == "dataset" and (mapping.keys() - {"label"} or req.columns or req.names
                              or req.format or req.time_format):
        raise SessionError(f"{req.name}: dataset {value!r} has a fixed column mapping.",
                           "--src/--dst/--time/--columns/--format apply to files, SQL and "
                           "DataFrames; drop them.")
    if kind != "dataset" and req.columns and window:
        raise SessionError(f"{req.name}: --columns picks the fields of a DataFrame without a "
                           "window; windowed records are src, dst (+ --label).",
                           "Map the columns with --src/--dst/--time instead.")
    spark = _spark(req, progress)
    progress.phase(f"loading {described.replace(' (Spark)', '')} on Spark")
    if kind in ("spark-df", "sql") and req.columns:
        return _records(req, value, list(req.columns), described, None, progress, spark)
    try:
        if kind == "dataset":
            from ddlab.sources import load_dataset

            result = load_dataset(value, spark=spark)
        elif kind == "load-result":
            result = value
        else:
            from ddlab.sources import load_events

            kw = dict(mapping)
            if req.format:
                kw["format"] = req.format
            if kind == "sql":
                kw["format"] = "sql"
            if req.time_format:
                kw["time_format"] = req.time_format
            if req.names:
                kw["columns"] = list(req.names)
            if not req.header:
                kw["header"] = False
            result = load_events(value, spark=spark, name=req.source or "sql", **kw)
    except (DatasetNotFound, FileNotFoundError) as err:
        raise SessionError(f"{req.name}: {first_line(err)}",
                           "Pass a path to the file with --from PATH.") from err
    except (LoadError, ValueError) as err:
        raise _load_error(req, err, described) from err
    except Exception as err:  # Spark AnalysisException, Py4J errors: summarise
        raise _load_error(req, err, described) from err
    report = result.report
    if report is not None and req.label and "label" not in result.df.columns:
        raise SessionError(f"{req.name}: {described} has no label column.",
                           "Drop --label, or map one with --label COLUMN on a file or frame.")
    columns = ["src", "dst"] + (["label"] if req.label else [])
    if window:
        from ddlab.sources import window_batches

        width, step = window
        progress.phase("computing the window batches on Spark")
        try:
            batches = window_batches(result, width, step, multigraph=req.multigraph,
                                     label=bool(req.label), spark=spark)
        except ValueError as err:
            raise SessionError(f"{req.name}: windowing failed: {err}",
                               "Check --window/--step against the data's time span.") from err
        return InputDecl(req.name, list(batches.columns), described, "spark", batches=batches,
                         report=report)
    return _records(req, result, columns, described, report, progress, spark)


def _records(req, source, columns, described, report, progress, spark) -> InputDecl:
    """The records of ``columns`` counted on Spark (``ddlab.sources.collect_records``)."""
    from ddlab.sources import collect_records

    progress.phase("fetching the records from Spark")
    try:
        frame = collect_records(source, columns, multigraph=req.multigraph, spark=spark)
    except Exception as err:
        raise _load_error(req, err, described) from err
    return InputDecl(req.name, list(columns), described, "spark", initial=frame, report=report)
