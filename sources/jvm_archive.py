"""A class-data-sharing archive for the local Spark driver JVM: built once per machine when
asked for, then mapped by every local session.

Why: a cold JVM spends seconds finding, reading and verifying Spark's classes before its first
job (on the project's 2-core machine CollegeMsg's load and windowing took 14.3 s on a fresh JVM
and 9.4 s on one that mapped an archive of those classes; ``benchmarks/NOTES.md``).  Java 17
writes such an archive when a JVM started with ``-XX:ArchiveClassesAtExit=FILE`` exits, and a
later JVM started with ``-XX:SharedArchiveFile=FILE`` maps it.

Building one runs a second JVM through a small load and windowing job (a minute of CPU and
about 170 MB on disk), so a library does not do it on its own: it is opt-in.
``python -m ddlab.sources.jvm_archive`` builds it now, in the foreground, for this machine's
Java; ``DDLAB_JVM_ARCHIVE=build`` lets the first local session start that build in the
background instead (at the lowest priority, a minute after it asked).  Every local session
maps an archive that is there (``DDLAB_JVM_ARCHIVE=0``: neither maps nor builds).

The archive is named after the Java binary and version and the pyspark installation, so it is
only ever offered to the JVM it was made for; a JVM that still cannot map it runs without it
(``-Xshare:auto``).  It lives in ``$DDLAB_JVM_ARCHIVE_DIR``, else ``cache_dir()/jvm``
(deleting it is always safe).  What every session needs of it (without this module's Spark
job) is :mod:`.class_archive`'s.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .class_archive import (BUILD_DELAY_S, BUILD_TIMEOUT_S, _take_lock, archive_path,
                            builds_in_background, enabled, java_options, start_building)
from .catalog import load_dataset
from .session import check_java, get_spark
from .windows import window_updates

__all__ = ["archive_path", "java_options", "start_building", "enabled", "builds_in_background",
           "build", "BUILD_DELAY_S", "BUILD_TIMEOUT_S"]


def build(path: Path, delay_s: float = 0.0, low_priority: bool = True,
          recording: str = "session") -> None:
    """Record the archive at ``path`` (after ``delay_s`` seconds): a local JVM that loads
    CollegeMsg and cuts its windows (what a first session does), stopped so that it writes the
    archive, then filed atomically.  ``low_priority``: at the lowest CPU priority (a
    background build; the foreground one of ``python -m ddlab.sources.jvm_archive`` is not).
    ``recording="minimal"`` records one tiny job instead (the classes Spark's start loads, a
    few seconds: for tests of the build itself)."""
    os.environ["DDLAB_JVM_ARCHIVE_BUILDER"] = "1"   # this session neither maps nor builds one
    lock = path.with_suffix(".building")
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    try:
        if low_priority:
            try:
                os.nice(19)
            except OSError:
                pass
        time.sleep(delay_s)
        spark = get_spark("local[*]", java_options=f"-XX:ArchiveClassesAtExit={partial}")
        if recording == "minimal":
            spark.range(10).count()
        else:
            events = load_dataset("collegemsg", spark=spark)
            window_updates(events, "7d", "1h").updates.toArrow()
        _stop_and_wait(spark)
        if partial.is_file() and partial.stat().st_size > 0:
            os.replace(partial, path)
        else:   # e.g. a JDK without its base archive: say so once, do not try at every start
            path.with_suffix(".failed").write_text(
                f"the JVM wrote no archive (its output: {path.with_suffix('.log')})\n")
    finally:
        for leftover in (partial, lock):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass


def _stop_and_wait(spark) -> None:
    """Stop the session and wait for its JVM to exit: the archive is written on the way out."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    spark.stop()
    if proc is None:
        return
    try:
        gateway.shutdown()
    except Exception:
        pass
    if proc.stdin is not None:
        proc.stdin.close()      # the gateway server exits when its stdin closes
    proc.wait(timeout=BUILD_TIMEOUT_S)


def main(argv: list[str]) -> int:
    """``python -m ddlab.sources.jvm_archive``: build this machine's archive now (in the
    foreground) and say where it is; ``... PATH [DELAY_S]``: record it at PATH (what the
    background build of :func:`start_building` runs)."""
    if argv:
        build(Path(argv[0]), float(argv[1]) if len(argv) > 1 else 0.0)
        return 0
    path = archive_path(check_java())
    if path.is_file():
        print(f"the JVM class archive is there already: {path}")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    if not _take_lock(path.with_suffix(".building")):
        print(f"another process is building it: {path}")
        return 1
    path.with_suffix(".failed").unlink(missing_ok=True)   # asked for: try again
    print(f"recording the JVM class archive (a local Spark job, about a minute): {path}")
    build(path, low_priority=False)
    if not path.is_file():
        print(f"no archive was written: {path.with_suffix('.failed').read_text().strip()}")
        return 1
    print(f"done: every local Spark session now maps {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
