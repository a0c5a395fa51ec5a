"""A class-data-sharing archive for the local Spark driver JVM, built once per machine, never
while somebody waits for it.

Why: a cold JVM spends seconds finding, reading and verifying Spark's classes before its first
job (on the project's 2-core machine CollegeMsg's load and windowing took 14.3 s on a fresh JVM
and 9.4 s on one that mapped an archive of those classes; ``benchmarks/NOTES.md``).  Java 17
writes such an archive when a JVM started with ``-XX:ArchiveClassesAtExit=FILE`` exits, and a
later JVM started with ``-XX:SharedArchiveFile=FILE`` maps it.  Recording slows the recording
JVM by seconds, so no session a user waits on records: the first local session on a machine
starts a background process (lowest priority) that, a minute later, runs its own JVM through
a small load and windowing job and files the archive; every later session maps it.

The archive is named after the Java binary and version and the pyspark installation, so it is
only ever offered to the JVM it was made for; a JVM that still cannot map it runs without it
(``-Xshare:auto``).  It lives in ``$DDLAB_JVM_ARCHIVE_DIR``, else ``cache_dir()/jvm`` (about
170 MB; deleting it is always safe); ``DDLAB_JVM_ARCHIVE=0`` neither uses nor builds one.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["archive_path", "java_options", "start_building", "enabled"]

#: A build that has not filed its archive after this long is taken for dead (its lock ignored).
BUILD_TIMEOUT_S = 600
#: The background build waits this long before starting its JVM, so that the session that
#: asked for it (a demo's first load and windowing) has the cores to itself meanwhile.
BUILD_DELAY_S = 60


def enabled() -> bool:
    """Whether archives are used and built (``DDLAB_JVM_ARCHIVE=0`` turns both off)."""
    return os.environ.get("DDLAB_JVM_ARCHIVE", "1").strip() not in ("0", "false", "no", "")


def archive_path(java, folder: Path | str | None = None) -> Path:
    """Where the archive for this Java (a :class:`~.session.JavaInfo`) and this pyspark is
    (in ``folder``, default ``$DDLAB_JVM_ARCHIVE_DIR`` or ``cache_dir()/jvm``)."""
    import pyspark

    from .window_cache import cache_dir

    home = str(Path(pyspark.__file__).resolve().parent)
    digest = hashlib.sha256("\n".join([java.path, java.version_text, home,
                                       pyspark.__version__]).encode()).hexdigest()[:16]
    if folder is None:
        folder = os.environ.get("DDLAB_JVM_ARCHIVE_DIR") or cache_dir() / "jvm"
    return Path(folder) / f"spark-{pyspark.__version__}-java{java.major}-{digest}.jsa"


def java_options(java) -> str:
    """The driver JVM's options that map the archive, or ``""`` when there is none (yet)."""
    if not enabled() or os.environ.get("DDLAB_JVM_ARCHIVE_BUILDER"):
        return ""
    path = archive_path(java)
    return f"-XX:SharedArchiveFile={path} -Xshare:auto" if path.is_file() else ""


def start_building(java) -> bool:
    """Start the background build of the archive unless it exists or is being built; returns
    whether a build was started.  Never raises: the archive is an optimisation."""
    try:
        if not enabled() or os.environ.get("DDLAB_JVM_ARCHIVE_BUILDER"):
            return False
        path = archive_path(java)
        if path.is_file() or path.with_suffix(".failed").is_file():
            return False            # there, or this Java cannot record one (see the .failed file)
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = path.with_suffix(".building")
        try:
            if time.time() - lock.stat().st_mtime < BUILD_TIMEOUT_S:
                return False        # another process is building it
            lock.unlink()
        except FileNotFoundError:
            pass
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        os.close(fd)
        log = open(path.with_suffix(".log"), "w")
        env = dict(os.environ, DDLAB_JVM_ARCHIVE_BUILDER="1")
        env.pop("SPARK_REMOTE", None)
        subprocess.Popen([sys.executable, "-m", "ddlab.sources.jvm_archive", str(path),
                          str(BUILD_DELAY_S)],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         env=env, start_new_session=True, close_fds=True)
        log.close()
        return True
    except Exception:
        return False


def build(path: Path, delay_s: float = 0.0) -> None:
    """Record the archive at ``path`` (after ``delay_s`` seconds): a local JVM that loads
    CollegeMsg and cuts its windows (what a first session does), stopped so that it writes the
    archive, then filed atomically."""
    from .datasets import load_dataset
    from .session import get_spark
    from .windows import window_updates

    os.environ["DDLAB_JVM_ARCHIVE_BUILDER"] = "1"   # this session neither maps nor builds one
    lock = path.with_suffix(".building")
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    try:
        try:
            os.nice(19)
        except OSError:
            pass
        time.sleep(delay_s)
        spark = get_spark("local[*]", java_options=f"-XX:ArchiveClassesAtExit={partial}")
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


if __name__ == "__main__":   # python -m ddlab.sources.jvm_archive PATH [DELAY_S] (start_building)
    build(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
