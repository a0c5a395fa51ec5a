"""Data sources on Spark: loading, named datasets, window update batches, the stateless baseline.

Spark does the bulk work (reading, parsing, cleaning, windowing, the from-scratch baseline);
the engine does the incremental and iterative work.  Names are resolved lazily (PEP 562), so
importing this package imports neither pyspark nor pandas.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

_EXPORTS = {
    # session.py
    "SparkUnavailable": "session", "get_spark": "session", "build_session": "session",
    "stop_spark": "session", "spark_status": "session", "check_java": "session",
    "spark_target": "session", "is_connect": "session", "require_pyspark": "session",
    "spark_log_path": "session", "spark_running": "session", "start_spark": "session",
    # loaders.py
    "load_events": "loaders", "LoadResult": "loaders", "LoadReport": "loaders", "LoadError": "loaders",
    # timeparse.py
    "detect_time_format": "timeparse", "strftime_to_spark": "timeparse",
    # datasets.py
    "DatasetNotFound": "datasets",
    "collegemsg": "datasets", "twitter24h": "datasets", "travian": "datasets", "enron": "datasets",
    "bitcoinotc": "datasets", "shared_data_dir": "datasets", "collegemsg_path": "datasets",
    "collegemsg_pandas": "datasets",
    # catalog.py
    "load_dataset": "catalog", "DATASETS": "catalog", "dataset_names": "catalog",
    "travian_by_alliance": "catalog",
    # labels.py
    "travian_alliances": "labels", "travian_messages_by_alliance": "labels",
    # window_cache.py
    "cached_windows": "window_cache", "StoredWindows": "window_cache", "windows_cached": "window_cache",
    "dataset_files": "window_cache", "cache_dir": "window_cache",
    # windows.py
    "window_batches": "windows", "WindowBatches": "windows", "events_in_window": "windows",
    "to_seconds": "windows", "format_duration": "windows", "format_span": "windows",
    "window_updates": "windows", "WindowPlan": "windows",
    # records.py
    "records_with_diff": "records", "collect_records": "records",
    # feed.py, moves.py
    "WindowFeed": "feed", "MoveController": "moves",
    # baseline.py
    "stateless_cc": "baseline", "BaselineResult": "baseline",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover
    from .baseline import BaselineResult, stateless_cc
    from .catalog import DATASETS, dataset_names, load_dataset, travian_by_alliance
    from .datasets import (DatasetNotFound, bitcoinotc, collegemsg, collegemsg_path, enron,
                           shared_data_dir, travian, twitter24h)
    from .feed import WindowFeed
    from .moves import MoveController
    from .labels import travian_alliances, travian_messages_by_alliance
    from .window_cache import (StoredWindows, cache_dir, cached_windows, dataset_files,
                               windows_cached)
    from .loaders import LoadError, LoadReport, LoadResult, load_events
    from .records import collect_records, records_with_diff
    from .session import (SparkUnavailable, build_session, check_java, get_spark, is_connect,
                          require_pyspark, spark_log_path, spark_running, spark_status,
                          spark_target, start_spark, stop_spark)
    from .timeparse import detect_time_format, strftime_to_spark
    from .windows import (WindowBatches, WindowPlan, events_in_window, format_duration,
                          format_span, to_seconds, window_batches, window_updates)
