"""Records with multiplicities: the ``diff`` column an engine input takes, from pandas or Spark.

Why: an input declared from a whole source (not a window) holds each record once while any
of its events is loaded (a simple graph), or once per event (``multigraph``).  The same rule
applies to a pandas frame and to a Spark DataFrame; for Spark the counting runs on Spark and
only the distinct records travel to the kernel.  Importing this module imports no pyspark.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .loaders import LoadError
from .session import get_spark, require_pyspark

__all__ = ["records_with_diff", "collect_records"]


def records_with_diff(frame: pd.DataFrame, columns=None, *, multigraph: bool = False) -> pd.DataFrame:
    """One row per distinct record of ``columns`` (default: all) with its multiplicity as ``diff``:
    1, or with ``multigraph`` the number of rows holding it.  Rows with a missing field are
    dropped; integer fields become int64.

    >>> frame = pd.DataFrame({"src": [1, 1, 2, None], "dst": [2, 2, 3, 1]})
    >>> records_with_diff(frame).to_dict("list")
    {'src': [1.0, 2.0], 'dst': [2, 3], 'diff': [1, 1]}
    >>> records_with_diff(frame, multigraph=True)["diff"].tolist()
    [2, 1]
    """
    columns = list(frame.columns if columns is None else columns)
    records = frame[columns]
    if not len(records):
        return records.assign(diff=pd.Series(dtype="int64"))
    if records.isna().any().any():
        records = records.dropna(subset=columns)
    if multigraph:
        out = records.groupby(columns, sort=False, dropna=False).size().rename("diff").reset_index()
    else:
        out = records.drop_duplicates().assign(diff=1)
    return _normalised(out, columns)


def _normalised(out: pd.DataFrame, columns: list) -> pd.DataFrame:
    out = out[columns + ["diff"]].reset_index(drop=True)
    for c in columns:
        if out[c].dtype.kind in "iu":
            out[c] = out[c].astype(np.int64)
    out["diff"] = out["diff"].astype(np.int64)
    return out


def collect_records(source, columns, *, multigraph: bool = False, spark=None) -> pd.DataFrame:
    """The records of ``columns`` of a Spark source, counted on Spark, as a pandas frame with
    ``diff`` (see :func:`records_with_diff`).  ``source``: a Spark DataFrame, a
    :class:`~ddlab.sources.loaders.LoadResult`, or a SQL query (run on ``spark``, default the
    shared session).  A missing column raises :class:`LoadError` with ``role="columns"``.

    >>> collect_records("SELECT 1 AS a, 2 AS b", ["a", "b"]).to_dict("list")  # doctest: +SKIP
    {'a': [1], 'b': [2], 'diff': [1]}
    """
    require_pyspark()
    from pyspark.sql import functions as F

    if isinstance(source, str):
        if spark is None:
            spark = get_spark()
        source = spark.sql(source)
    df = getattr(source, "df", source)          # a LoadResult holds its DataFrame
    columns = list(columns)
    present = list(df.columns)
    for c in columns:
        if c not in present:
            raise LoadError(f"columns column {c!r} not found; the columns are {present}",
                            role="columns", column=c, columns=present)
    df = df.select(*columns)
    if multigraph:
        df = df.groupBy(*columns).agg(F.count(F.lit(1)).alias("diff"))
        frame = df.toPandas()
        return _normalised(frame.dropna(subset=columns), columns)
    frame = df.distinct().toPandas()
    return records_with_diff(frame, columns)
