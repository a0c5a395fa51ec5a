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

import ast
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .progress import NullProgress
from .session import InputDecl, SessionError, suggest

__all__ = ["LoadRequest", "load_input", "dataset_names"]


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


def dataset_names() -> list[str]:
    """Named datasets (importing the catalogue starts no JVM)."""
    from ddlab.sources.datasets import DATASETS, TRAVIAN_KINDS

    return sorted(DATASETS) + [f"travian-{k}" for k in TRAVIAN_KINDS + ("all",)]


def _is_spark_df(obj) -> bool:
    return hasattr(obj, "sparkSession") and hasattr(obj, "schema") and hasattr(obj, "select")


def _is_load_result(obj) -> bool:
    return hasattr(obj, "df") and hasattr(obj, "report") and _is_spark_df(getattr(obj, "df"))


def _hint(text: str | None, rest: str = "") -> str:
    if not text:
        return rest
    return text[0].upper() + text[1:] + (" " + rest if rest else "")


def _durations(req: LoadRequest):
    if req.window is None and req.step is None:
        return None
    if req.window is None:
        raise SessionError(f"{req.name}: --step needs --window.",
                           "Give both, e.g. --window 7d --step 1d.")
    if req.step is None:
        raise SessionError(f"{req.name}: --window needs --step.",
                           "Give both, e.g. --window 7d --step 1d.")
    from ddlab.sources.windows import to_seconds

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
                _hint(suggest(col, present), f"Its columns: {', '.join(map(str, present))}."))


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
        hint = suggest(token, siblings)
        where = f"folder {folder}" if folder.is_dir() else f"missing folder {folder}"
        raise SessionError(f"{req.name}: no file {token!r} ({where}).",
                           _hint(hint, "Give an existing CSV/JSON/Parquet path, a dataset name "
                                       f"({', '.join(names[:5])}, ...) or a DataFrame variable."))
    frames = [k for k, v in namespace.items() if not k.startswith("_") and
              (isinstance(v, pd.DataFrame) or _is_spark_df(v))]
    hint = suggest(token, names + frames)
    raise SessionError(
        f"{req.name}: unknown source {token!r}: not a variable, a dataset name or a file.",
        _hint(hint, f"Datasets: {', '.join(names[:5])}, ...; DataFrame variables: "
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
        return InputDecl(req.name, list(cols), "empty", "empty")
    if kind == "pandas" and not window:
        decl = _from_pandas(req, value, described)
        decl.seconds = time.perf_counter() - start
        return decl
    decl = _from_spark(req, kind, value, described, window, progress)
    decl.seconds = time.perf_counter() - start
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
    records = frame[source_cols].copy()
    records.columns = names
    records = _with_diff(records, names, req.multigraph)
    return InputDecl(req.name, names, described, "pandas", initial=records)


def _with_diff(records: pd.DataFrame, names: list, multigraph: bool) -> pd.DataFrame:
    """One row per record with its multiplicity (1 unless --multigraph) as ``diff``."""
    if not len(records):
        return records.assign(diff=pd.Series(dtype="int64"))
    if records[names].isna().any().any():
        records = records.dropna(subset=names)
    if multigraph:
        out = records.groupby(names, sort=False, dropna=False).size().rename("diff").reset_index()
    else:
        out = records.drop_duplicates().assign(diff=1)
    for c in names:
        if out[c].dtype.kind in "iu":
            out[c] = out[c].astype(np.int64)
    out["diff"] = out["diff"].astype(np.int64)
    return out.reset_index(drop=True)


# -- Spark ----------------------------------------------------------------------------------

_MISSING = re.compile(r"(\w+)(?: column)? '?([^' ]+)'? not found; the columns are (\[.*\])")
_RANGE = re.compile(r"(\w+)=(\d+): the source has only")


def _spark(req: LoadRequest, progress):
    from ddlab.sources import session as spark_session

    ok, why = spark_session.spark_status()
    if not ok:
        raise SessionError(f"{req.name}: this source needs Spark, and {why[0].lower()}{why[1:]}",
                           "Or load a pandas DataFrame without --window: "
                           f"%dd input {req.name} --from df.")
    if "session running" not in why:
        progress.phase("starting Spark")
    try:
        return spark_session.get_spark()
    except spark_session.SparkUnavailable as err:
        raise SessionError(f"{req.name}: Spark did not start: {err}",
                           "Load a pandas DataFrame instead, or fix Spark and retry.") from err


def _load_error(req: LoadRequest, err: Exception, described: str) -> SessionError:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    m = _MISSING.search(text)
    if m:
        role, col = m.group(1), m.group(2)
        try:
            present = ast.literal_eval(m.group(3))
        except (ValueError, SyntaxError):
            present = []
        opt = {"src": "--src", "dst": "--dst", "time": "--time", "label": "--label"}.get(role, role)
        return SessionError(
            f"{req.name}: no column {col!r} in {described} (for {opt}).",
            _hint(suggest(col, present),
                  f"Its columns: {', '.join(map(str, present))}; map them with --src/--dst/--time."))
    return SessionError(f"{req.name}: loading {described} failed: {text}",
                        "Check the source, the column options and --time-format.")


def _from_spark(req, kind, value, described, window, progress) -> InputDecl:
    from ddlab.sources.datasets import DatasetNotFound
    from ddlab.sources.loaders import LoadError

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
    report = None
    try:
        if kind in ("spark-df", "sql") and req.columns:
            df = spark.sql(value) if kind == "sql" else value
            _check_columns(req, req.columns, list(df.columns), described)
            return _spark_records(req, df.select(*req.columns), list(req.columns), described,
                                  None, progress)
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
        report = result.report
    except SessionError:
        raise
    except (DatasetNotFound, FileNotFoundError) as err:
        raise SessionError(f"{req.name}: {str(err).splitlines()[0]}",
                           "Pass a path to the file with --from PATH.") from err
    except (LoadError, ValueError) as err:
        raise _load_error(req, err, described) from err
    except Exception as err:  # Spark AnalysisException, Py4J errors: summarise
        raise _load_error(req, err, described) from err
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
    return _spark_records(req, result.df.select(*columns), columns, described, report, progress)


def _spark_records(req, df, columns, described, report, progress) -> InputDecl:
    from pyspark.sql import functions as F

    progress.phase("fetching the records from Spark")
    if req.multigraph:
        df = df.groupBy(*columns).agg(F.count(F.lit(1)).alias("diff"))
    else:
        df = df.distinct().withColumn("diff", F.lit(1).cast("long"))
    try:
        frame = df.toPandas()
    except Exception as err:
        raise _load_error(req, err, described) from err
    if req.multigraph:
        frame = frame[columns + ["diff"]].dropna(subset=columns).reset_index(drop=True)
        for c in columns:
            if frame[c].dtype.kind in "iu":
                frame[c] = frame[c].astype(np.int64)
        frame["diff"] = frame["diff"].astype(np.int64)
    else:
        frame = _with_diff(frame[columns], columns, multigraph=False)
    return InputDecl(req.name, list(columns), described, "spark", initial=frame, report=report)
