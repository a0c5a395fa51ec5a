"""Turn a time column (unix seconds, ISO strings, ``4/15/04 2:56 PM``...) into int64 unix seconds.

Why: windows are cut on integer seconds, so every source must agree on one time axis.  The
format is given (``"unix"``, ``"unix_ms"``, ``"iso"``, a Spark datetime pattern such as
``"M/d/yy h:mm a"``, or a Python ``strftime`` format such as ``"%m/%d/%y %I:%M %p"``) or
detected from a sample.  Detection runs on a few hundred values in Python; the parsing itself
is a Spark expression, evaluated where the data is.  Unparseable values become null so the
loader can count and report them instead of failing.
"""
from __future__ import annotations

import re
from datetime import datetime

__all__ = ["detect_time_format", "strftime_to_spark", "time_expr", "TIME_PATTERNS"]

# (Spark pattern, equivalent strptime format), tried in this order; the best parse rate wins.
TIME_PATTERNS: list[tuple[str, str]] = [
    ("M/d/yy h:mm a", "%m/%d/%y %I:%M %p"),  # CollegeMsg
    ("M/d/yyyy h:mm a", "%m/%d/%Y %I:%M %p"),
    ("M/d/yy h:mm:ss a", "%m/%d/%y %I:%M:%S %p"),
    ("M/d/yyyy h:mm:ss a", "%m/%d/%Y %I:%M:%S %p"),
    ("M/d/yyyy H:mm:ss", "%m/%d/%Y %H:%M:%S"),
    ("M/d/yyyy H:mm", "%m/%d/%Y %H:%M"),
    ("M/d/yy H:mm", "%m/%d/%y %H:%M"),
    ("M/d/yyyy", "%m/%d/%Y"),
    ("d/M/yyyy H:mm:ss", "%d/%m/%Y %H:%M:%S"),
    ("d/M/yyyy H:mm", "%d/%m/%Y %H:%M"),
    ("d/M/yyyy", "%d/%m/%Y"),
    ("d.M.yyyy H:mm:ss", "%d.%m.%Y %H:%M:%S"),
    ("d.M.yyyy H:mm", "%d.%m.%Y %H:%M"),
    ("d.M.yyyy", "%d.%m.%Y"),
    ("yyyy/M/d H:mm:ss", "%Y/%m/%d %H:%M:%S"),
    ("yyyy/M/d", "%Y/%m/%d"),
    ("d MMM yyyy H:mm:ss", "%d %b %Y %H:%M:%S"),
]

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_STRFTIME = {
    "Y": "yyyy", "y": "yy", "m": "M", "d": "d", "H": "H", "I": "h", "M": "mm", "S": "ss",
    "p": "a", "b": "MMM", "B": "MMMM", "a": "EEE", "A": "EEEE", "f": "SSSSSS", "z": "Z",
    "Z": "z", "j": "D", "e": "d",
}


def strftime_to_spark(fmt: str) -> str:
    """Translate a Python ``strftime`` format into a Spark datetime pattern (literals quoted)."""
    out: list[str] = []
    literal: list[str] = []

    def flush() -> None:
        if literal:
            text = "".join(literal)
            out.append(f"'{text}'" if re.search(r"[A-Za-z']", text) else text)
            literal.clear()

    i, after_field = 0, False
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            code = fmt[i + 1]
            if code == "%":
                literal.append("%")
                after_field = False
            elif code in _STRFTIME:
                flush()
                spark = _STRFTIME[code]
                # Adjacent numeric fields ("%Y%m%d") need fixed widths to be separable.
                before_field = i + 2 < len(fmt) and fmt[i + 2] == "%"
                if (after_field or before_field) and len(spark) == 1:
                    spark *= 2
                out.append(spark)
                after_field = True
            else:
                raise ValueError(f"unsupported strftime directive %{code} in {fmt!r}")
            i += 2
            continue
        literal.append(ch)
        after_field = False
        i += 1
    flush()
    return "".join(out)


def _iso_ok(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


def _strptime_ok(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
        return True
    except ValueError:
        return False


def detect_time_format(samples: list[str], min_rate: float = 0.5) -> str:
    """Best format for these sample strings: ``"unix"``, ``"unix_ms"``, ``"iso"`` or a Spark pattern.

    Raises ``ValueError`` (listing a few samples) when nothing parses at least ``min_rate`` of them.
    """
    values = [str(v).strip() for v in samples if v is not None and str(v).strip()]
    if not values:
        raise ValueError("cannot detect the time format: the time column is empty")
    numeric = [v for v in values if _NUMBER.match(v)]
    if len(numeric) >= min_rate * len(values):
        big = sorted(abs(float(v)) for v in numeric)[len(numeric) // 2]
        return "unix_ms" if big > 1e11 else "unix"  # 1e11 s is year 5138: those are milliseconds
    best, best_rate = None, 0.0
    candidates = [("iso", None)] + TIME_PATTERNS
    for spark_pattern, py_fmt in candidates:
        ok = sum(_iso_ok(v) if py_fmt is None else _strptime_ok(v, py_fmt) for v in values)
        rate = ok / len(values)
        if rate > best_rate:
            best, best_rate = spark_pattern, rate
        if rate == 1.0:
            break
    if best is None or best_rate < min_rate:
        raise ValueError(
            f"cannot detect the time format from samples like {values[:3]}; pass time_format= "
            "('unix', 'unix_ms', 'iso', a Spark pattern like 'M/d/yy h:mm a' or a strftime format)"
        )
    return best


def spark_pattern(time_format: str) -> str:
    """Normalise a user's format: strftime formats become Spark patterns; keywords pass through."""
    if time_format in ("unix", "unix_ms", "iso", "timestamp"):
        return time_format
    return strftime_to_spark(time_format) if "%" in time_format else time_format


def time_expr(column, time_format: str, dtype: str):
    """Spark expression: ``column`` as int64 unix seconds, null when unparseable.

    ``dtype`` is the column's Spark simple type name (``"string"``, ``"bigint"``, ``"timestamp"``...).
    """
    from pyspark.sql import functions as F

    fmt = spark_pattern(time_format)
    numeric_type = dtype in ("tinyint", "smallint", "int", "bigint", "float", "double") or dtype.startswith("decimal")
    if dtype in ("timestamp", "timestamp_ntz", "date"):
        return F.unix_seconds(column.cast("timestamp"))
    if fmt in ("unix", "unix_ms"):
        if dtype in ("tinyint", "smallint", "int", "bigint"):
            seconds = column.cast("long")
            return F.floor(seconds / 1000).cast("long") if fmt == "unix_ms" else seconds
        # decimal, not double: rejects NaN/Infinity and stays exact for integer strings
        value = column.cast("string") if numeric_type else column
        number = F.trim(value).try_cast("decimal(38,6)")
        if fmt == "unix_ms":
            number = number / 1000
        return F.floor(number).try_cast("long")
    text = F.trim(column.cast("string"))
    if fmt in ("iso", "timestamp"):
        return F.unix_seconds(text.try_cast("timestamp"))
    return F.unix_seconds(F.try_to_timestamp(text, F.lit(fmt)))
