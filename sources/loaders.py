"""Load an event table on Spark: any source, a column mapping, time parsing, a malformed-row report.

Why: every later stage (windows, the stateless baseline, the engine) wants one canonical table
``src, dst, time`` (+ ``label``, ``text``) with ``time`` as int64 unix seconds.  Real files have
bad rows; we count them, keep a few examples with their file, and load the rest, so a user
sees what was skipped instead of a crash or a silent drop.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Sequence

from .session import get_spark, require_pyspark
from .timeparse import detect_time_format, spark_pattern, time_expr

__all__ = ["LoadError", "LoadReport", "LoadResult", "load_events", "CANONICAL"]

CANONICAL = ("src", "dst", "time")
_CORRUPT = "_corrupt_record"
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")


class LoadError(ValueError):
    """The source cannot be loaded as asked (missing column, unknown format...).

    When a named column is missing or out of range, ``role`` says which option named it
    (``src``, ``dst``, ``time``, ``label``, ``columns``), ``column`` what it named and
    ``columns`` what the source has, so callers can suggest the closest one without reading
    the message; otherwise they are ``None``.

    >>> err = LoadError("src column 'from' not found", role="src", column="from", columns=["a"])
    >>> err.role, err.column, err.columns
    ('src', 'from', ['a'])
    """

    def __init__(self, message: str, *, role: str | None = None, column=None,
                 columns: list | None = None):
        super().__init__(message)
        self.role, self.column, self.columns = role, column, columns


@dataclass
class LoadReport:
    """What a load did: rows read and kept, malformed rows by reason, a few examples, formats used."""

    source: str
    rows_read: int
    rows_loaded: int
    malformed: dict[str, int] = field(default_factory=dict)
    examples: list[dict[str, str]] = field(default_factory=list)
    time_format: str = ""
    time_format_detected: bool = False
    id_type: str = ""
    columns: dict[str, str] = field(default_factory=dict)
    #: The loaded rows' earliest and latest ``time`` (unix seconds); ``None`` when none loaded.
    #: Counted in the same job as the rows, so windowing needs no job of its own to find it.
    time_range: tuple[int, int] | None = None

    @property
    def malformed_total(self) -> int:
        return sum(self.malformed.values())

    @property
    def ok(self) -> bool:
        """True when no row was skipped."""
        return self.malformed_total == 0

    def __repr__(self) -> str:
        how = "detected" if self.time_format_detected else "given"
        lines = [
            f"LoadReport({self.source}): {self.rows_read:,} rows read, {self.rows_loaded:,} loaded, "
            f"{self.malformed_total:,} malformed",
            f"  time format {self.time_format!r} ({how}); ids {self.id_type}; columns "
            + ", ".join(f"{k}<-{v}" for k, v in self.columns.items()),
        ]
        if self.time_range is not None:
            lines[0] += f"; times {self.time_range[0]:,}..{self.time_range[1]:,}"
        if self.malformed:
            lines.append("  skipped: " + ", ".join(f"{r} {n:,}" for r, n in sorted(self.malformed.items())))
            for ex in self.examples:
                lines.append(f"    {ex['file']}: {ex['row']!r} ({ex['reason']})")
        return "\n".join(lines)

    __str__ = __repr__

    def merge(self, other: "LoadReport", source: str | None = None) -> "LoadReport":
        """Combine two reports (e.g. several files loaded as one table)."""
        malformed = dict(self.malformed)
        for reason, n in other.malformed.items():
            malformed[reason] = malformed.get(reason, 0) + n
        return LoadReport(
            source=source or f"{self.source} + {other.source}",
            rows_read=self.rows_read + other.rows_read,
            rows_loaded=self.rows_loaded + other.rows_loaded,
            malformed=malformed,
            examples=(self.examples + other.examples)[: max(len(self.examples), len(other.examples), 5)],
            time_format=self.time_format,
            time_format_detected=self.time_format_detected,
            id_type=self.id_type,
            columns=self.columns,
            time_range=_union_range(self.time_range, other.time_range),
        )


def _union_range(a, b):
    if a is None or b is None:
        return a if b is None else b
    return min(a[0], b[0]), max(a[1], b[1])


class LoadResult(NamedTuple):
    """``df, report = load_events(...)``: the canonical Spark DataFrame and its :class:`LoadReport`."""

    df: Any
    report: LoadReport

    def to_pandas(self):
        """The loaded events as pandas (Arrow transfer); only for tables that fit in memory."""
        return self.df.toPandas()


_EXT_FORMATS = {
    "csv": "csv", "tsv": "csv", "txt": "csv", "json": "json", "jsonl": "json",
    "ndjson": "json", "parquet": "parquet", "pq": "parquet",
}
_COMPRESSION = {"gz", "bz2", "zst", "xz", "lz4", "snappy", "deflate"}


def _guess_format(path: str) -> tuple[str, str | None]:
    """(format, separator hint) from a file name or, for a local folder, from the files inside."""
    p = Path(path)
    if p.is_dir():
        for child in sorted(p.iterdir()):
            if child.is_file() and not child.name.startswith((".", "_")):
                return _guess_format(str(child))
        raise LoadError(f"no data files in folder {path}")
    suffixes = [s.lstrip(".").lower() for s in p.suffixes]
    while suffixes and suffixes[-1] in _COMPRESSION:
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext not in _EXT_FORMATS:
        return "csv", None
    return _EXT_FORMATS[ext], ("\t" if ext == "tsv" else None)


def _is_spark_df(obj) -> bool:
    if isinstance(obj, (str, os.PathLike, list, tuple)) or _is_pandas_df(obj):
        return False
    from pyspark.sql import DataFrame  # the parent of both classic and Connect DataFrames

    return isinstance(obj, DataFrame)


def _is_pandas_df(obj) -> bool:
    return type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pandas")


def _read(spark, source, fmt, columns, header, sep, options):
    """Raw DataFrame, its corrupt-record column (or None), whether it comes from files, a name, the format."""
    from pyspark.sql import types as T

    if _is_pandas_df(source):
        df = spark.createDataFrame(source)
        return _rename(df, columns), None, False, f"pandas DataFrame ({len(source):,} rows)", "pandas"
    if _is_spark_df(source):
        return _rename(source, columns), None, False, "Spark DataFrame", "spark"
    if fmt == "sql":
        return _rename(spark.sql(source), columns), None, False, "SQL query", "sql"
    paths = [str(p) for p in source] if isinstance(source, (list, tuple)) else [str(source)]
    for p in paths:
        if "://" not in p and not any(ch in p for ch in "*?[") and not os.path.exists(p):
            raise LoadError(f"file not found: {p}")
    name = ", ".join(Path(p).name for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
    hint = None
    if fmt is None:
        local = paths[0] if "://" not in paths[0] else paths[0].split("://", 1)[1]
        fmt, hint = _guess_format(local) if os.path.exists(local) else ("csv", None)
    opts = dict(options or {})
    if fmt == "csv":
        sep = sep or hint or ","
        reader = spark.read.option("sep", sep).options(**opts)
        if columns:
            names = list(columns)
        else:  # the header read here when it is plain, else (or the first line's width) on Spark
            names = (_local_header(paths, sep) if header and not opts else None) \
                or reader.option("header", bool(header)).csv(paths).columns
        schema = T.StructType([T.StructField(n, T.StringType()) for n in names]
                              + [T.StructField(_CORRUPT, T.StringType())])
        df = (
            reader.option("header", bool(header)).option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", _CORRUPT).schema(schema).csv(paths)
        )
        return df, _CORRUPT, True, name, "csv"
    if fmt == "json":
        df = (spark.read.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", _CORRUPT)
              .options(**opts).json(paths))
        corrupt = _CORRUPT if _CORRUPT in df.columns else None
        return _rename(df, columns), corrupt, True, name, "json"
    if fmt == "parquet":
        return _rename(spark.read.options(**opts).parquet(*paths), columns), None, True, name, "parquet"
    raise LoadError(f"unknown format {fmt!r}: use 'csv', 'json', 'parquet' or 'sql'")


def _local_header(paths: list[str], sep: str) -> list[str] | None:
    """The header of a local CSV file (plain, gzip or bz2), read without a Spark job (a cold
    JVM's first job costs seconds), or ``None`` when Spark must decide: a remote path, a glob,
    a folder, a byte-order mark, an empty, duplicate or quoted-over-lines name."""
    import bz2
    import csv
    import gzip

    first = paths[0]
    if len(paths) != 1 or "://" in first or any(ch in first for ch in "*?[") \
            or not os.path.isfile(first):
        return None
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(Path(first).suffix.lower(), open)
    if opener is open and Path(first).suffix.lower().lstrip(".") in _COMPRESSION:
        return None
    try:
        with opener(first, "rt", encoding="utf-8", newline="") as fh:
            line = fh.readline()
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    names = next(csv.reader([line.rstrip("\r\n")], delimiter=sep), [])
    if not names or any(not n for n in names) or len(set(names)) != len(names) \
            or line.count('"') % 2 or line.startswith("\ufeff"):
        return None
    return names


def _rename(df, columns):
    if not columns:
        return df
    present = [c for c in df.columns if c != _CORRUPT]
    if len(columns) > len(present):
        raise LoadError(f"columns={list(columns)} names {len(columns)} columns but the source has {len(present)}")
    return df.withColumnsRenamed(dict(zip(present, columns)))


def _resolve(df, ref, role: str) -> str | None:
    if ref is None:
        return None
    names = [c for c in df.columns if c != _CORRUPT]
    if isinstance(ref, int):
        if not 0 <= ref < len(names):
            raise LoadError(f"{role}={ref}: the source has only {len(names)} columns {names}",
                            role=role, column=ref, columns=names)
        return names[ref]
    if ref not in names:
        raise LoadError(f"{role} column {ref!r} not found; the columns are {names}",
                        role=role, column=ref, columns=names)
    return ref


def load_events(
    source,
    *,
    src: str | int = "src",
    dst: str | int = "dst",
    time: str | int = "time",
    label: str | int | None = None,
    text: str | int | None = None,
    format: str | None = None,
    time_format: str | None = None,
    columns: Sequence[str] | None = None,
    header: bool = True,
    sep: str | None = None,
    ids: str = "auto",
    label_type: str | None = None,
    time_range: tuple[int | None, int | None] | None = None,
    name: str | None = None,
    spark=None,
    max_examples: int = 5,
    options: dict | None = None,
) -> LoadResult:
    """Load events into a Spark DataFrame ``src, dst, time`` (+ ``label``, ``text``), with a report.

    ``source``: a path or list of paths (CSV, JSON lines, Parquet; format from the extension or
    ``format=``), a SQL query (``format="sql"``), a Spark or a pandas DataFrame.  ``src``, ``dst``,
    ``time``, ``label``, ``text`` name (or index) the source columns; ``columns`` names the columns
    of a header-less file.  ``time_format``: ``"unix"``, ``"unix_ms"``, ``"iso"``, a Spark pattern
    (``"M/d/yy h:mm a"``) or a strftime format; detected from a sample when omitted.  ``ids``:
    ``"long"``, ``"string"`` or ``"auto"`` (long when every id is an integer).  Rows with a wrong
    field count, an empty id, an unparseable time or a time outside ``time_range`` (unix seconds,
    inclusive; None = open) are skipped and counted in the report.
    """
    require_pyspark()
    if ids not in ("auto", "long", "string"):
        raise LoadError(f"ids={ids!r}: use 'auto', 'long' or 'string'")
    if spark is None:
        spark = source.sparkSession if _is_spark_df(source) else get_spark()
    raw, corrupt, from_files, described, read_as = _read(spark, source, format, columns, header, sep, options)
    roles = {"src": src, "dst": dst, "time": time, "label": label, "text": text}
    mapping = {role: _resolve(raw, ref, role) for role, ref in roles.items()}
    mapping = {role: col for role, col in mapping.items() if col is not None}
    cols = _Columns(dict(raw.dtypes))
    detected = time_format is None
    time_format = _time_format(raw, mapping["time"], cols.dtypes, time_format, described)
    flagged, int_ids = _flag_rows(raw, corrupt, from_files, described, read_as, mapping, cols,
                                  time_format, time_range, ids, sep)
    counts, id_type, loaded_range = _count_reasons(flagged, mapping, cols, ids, int_ids)
    malformed = {k: v for k, v in counts.items() if k is not None}
    examples = _examples(flagged, max_examples) if malformed else []
    df = flagged.where(cols.F.col("_reason").isNull()).select(
        *_output_columns(mapping, cols, id_type, label_type))
    report = LoadReport(
        source=name or described,
        rows_read=sum(counts.values()),
        rows_loaded=counts.get(None, 0),
        malformed=malformed,
        examples=examples,
        time_format=time_format,
        time_format_detected=detected,
        id_type=id_type,
        columns={role: col for role, col in mapping.items()},
        time_range=loaded_range,
    )
    return LoadResult(df, report)


class _Columns:
    """Spark column expressions over the raw table (whose column types are ``dtypes``)."""

    def __init__(self, dtypes: dict):
        from pyspark.sql import functions as F

        self.F, self.dtypes = F, dtypes

    def text(self, name):
        return self.F.trim(self.F.col(name).cast("string"))

    def empty(self, name):
        return self.F.col(name).isNull() | (self.text(name) == "")

    def long(self, name):
        """The column as a long, null where it is not an integer."""
        F, t = self.F, self.dtypes[name]
        if t in _INTEGRAL:
            return F.col(name).cast("long")
        if t in ("float", "double") or t.startswith("decimal"):
            c = F.col(name).cast("double")
            return F.when(~F.isnan(c) & (F.floor(c) == c), c.try_cast("long"))
        return self.text(name).try_cast("long")


def _time_format(raw, tcol: str, dtypes: dict, time_format, described: str) -> str:
    """The Spark pattern of the time column: given, or detected from the first non-empty
    values (one small job)."""
    from pyspark.sql import functions as F

    if dtypes[tcol] in ("timestamp", "timestamp_ntz", "date"):
        time_format = "timestamp"
    elif time_format is None:
        sample = raw.select(F.col(tcol).cast("string").alias("t")).where(F.col("t").isNotNull()).limit(300).collect()
        try:
            time_format = detect_time_format([r["t"] for r in sample])
        except ValueError as exc:
            raise LoadError(f"{described}, column {tcol!r}: {exc}") from None
    return spark_pattern(time_format)


def _flag_rows(raw, corrupt, from_files, described, read_as, mapping, cols: _Columns, time_format,
               time_range, ids, sep):
    """``(flagged, int_ids)``: the raw rows with ``_t`` (parsed time), ``_reason`` (why a row
    is malformed: the first matching check, or null), ``_file`` and ``_row`` (its text)."""
    F, dtypes = cols.F, cols.dtypes
    s, d, tcol = mapping["src"], mapping["dst"], mapping["time"]
    int_ids = dtypes[s] in _INTEGRAL and dtypes[d] in _INTEGRAL
    t_expr = time_expr(F.col(tcol), time_format, dtypes[tcol])
    reason = F.lit(None).cast("string")
    checks = []
    raw_cols = [c for c in raw.columns if c != corrupt]
    if corrupt:
        # CSV column pruning only fills the corrupt column when every column is parsed: the
        # always-false, non-foldable second term makes the scan need them all.
        all_cols = F.length(F.concat_ws(",", *[F.col(c).cast("string") for c in raw_cols])) < 0
        checks.append((F.col(corrupt).isNotNull() | all_cols,
                       "wrong field count" if read_as == "csv" else "unparseable line"))
    checks += [(cols.empty(s) | cols.empty(d), "empty id"), (cols.empty(tcol), "empty time"),
               (F.col("_t").isNull(), "unparseable time")]
    if time_range is not None:
        lo, hi = time_range
        out = F.lit(False)
        if lo is not None:
            out = out | (F.col("_t") < F.lit(int(lo)))
        if hi is not None:
            out = out | (F.col("_t") > F.lit(int(hi)))
        checks.append((out, "time out of range"))
    if ids == "long" and not int_ids:
        checks.append((cols.long(s).isNull() | cols.long(d).isNull(), "non-integer id"))
    for cond, why in reversed(checks):  # the first matching check names the reason
        reason = F.when(cond, F.lit(why)).otherwise(reason)
    row_text = F.concat_ws(sep or ",", *[F.coalesce(F.col(c).cast("string"), F.lit("")) for c in raw_cols])
    if corrupt:
        row_text = F.coalesce(F.col(corrupt), row_text)
    flagged = raw.withColumn("_t", t_expr).withColumn("_reason", reason)
    if from_files:
        flagged = flagged.withColumn("_file", F.input_file_name())
    else:
        flagged = flagged.withColumn("_file", F.lit(described))
    return flagged.withColumn("_row", row_text), int_ids


def _count_reasons(flagged, mapping, cols: _Columns, ids, int_ids):
    """``(rows per reason, id type, time range of the good rows)`` in one job: with
    ``ids="auto"`` on text ids it also counts the good rows whose ids are not integers."""
    F = cols.F
    s, d = mapping["src"], mapping["dst"]
    check_ints = ids == "auto" and not int_ids
    nonint = (cols.long(s).isNull() | cols.long(d).isNull()).cast("long") if check_ints else F.lit(0).cast("long")
    stats = flagged.groupBy("_reason").agg(
        F.count(F.lit(1)).alias("n"), F.sum(nonint).alias("nonint"),
        F.min(F.col("_t").cast("long")).alias("lo"), F.max(F.col("_t").cast("long")).alias("hi"),
    ).collect()
    counts = {r["_reason"]: int(r["n"]) for r in stats}
    good = [r for r in stats if r["_reason"] is None and r["lo"] is not None]
    loaded_range = (int(good[0]["lo"]), int(good[0]["hi"])) if good else None
    if ids == "auto":
        good_nonint = sum(int(r["nonint"] or 0) for r in stats if r["_reason"] is None)
        id_type = "long" if int_ids or good_nonint == 0 else "string"
    else:
        id_type = ids
    return counts, id_type, loaded_range


def _examples(flagged, max_examples: int) -> list[dict[str, str]]:
    """Up to ``max_examples`` malformed rows, round-robin over the reasons."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    examples: list[dict[str, str]] = []
    if max_examples <= 0:
        return examples
    w = Window.partitionBy("_reason").orderBy("_file")
    rows = (
        flagged.where(F.col("_reason").isNotNull())
        .withColumn("_k", F.row_number().over(w)).where(F.col("_k") <= max_examples)
        .select("_reason", "_file", "_row", "_k").collect()
    )
    rows.sort(key=lambda r: (r["_k"], r["_reason"]))  # round-robin over reasons
    for r in rows[:max_examples]:
        examples.append({"file": _short_file(r["_file"]), "reason": r["_reason"], "row": r["_row"]})
    return examples


def _output_columns(mapping, cols: _Columns, id_type: str, label_type):
    """The canonical columns ``src, dst, time`` (+ ``label``, ``text``)."""
    F, dtypes = cols.F, cols.dtypes

    def final_id(name):
        return cols.long(name) if id_type == "long" else cols.text(name)

    out = [final_id(mapping["src"]).alias("src"), final_id(mapping["dst"]).alias("dst"),
           F.col("_t").cast("long").alias("time")]
    if "label" in mapping:
        lab = F.when(~cols.empty(mapping["label"]), F.col(mapping["label"]))
        if label_type:
            lab = (lab.cast("string").try_cast(label_type) if dtypes[mapping["label"]] == "string"
                   else lab.cast(label_type))
        out.append(lab.alias("label"))
    if "text" in mapping:
        out.append(F.col(mapping["text"]).cast("string").alias("text"))
    return out


def _short_file(path: str | None) -> str:
    if not path:
        return "?"
    return path.rsplit("/", 1)[-1] if "/" in path else path
