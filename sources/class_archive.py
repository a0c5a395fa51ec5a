"""The local Spark driver JVM's class-data-sharing archive as a session sees it: where it
is, whether the session maps it (:func:`java_options`), and starting its build in the
background when asked (:func:`start_building`).  Why, and the build itself:
:mod:`.jvm_archive` (which runs a Spark session, so it is a module of its own that this one,
imported by every session, does not import).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from .caches import cache_dir

__all__ = ["archive_path", "java_options", "start_building", "enabled", "builds_in_background"]

#: A build that has not filed its archive after this long is taken for dead (its lock ignored).
BUILD_TIMEOUT_S = 600
#: The background build waits this long before starting its JVM, so that the session that
#: asked for it (a demo's first load and windowing) has the cores to itself meanwhile.
BUILD_DELAY_S = 60


def _setting() -> str:
    return os.environ.get("DDLAB_JVM_ARCHIVE", "").strip().lower()


def enabled() -> bool:
    """Whether an archive that is there is mapped (``DDLAB_JVM_ARCHIVE=0`` turns it off)."""
    return _setting() not in ("0", "false", "no")


def builds_in_background() -> bool:
    """Whether a local session may start building a missing archive in the background: only
    when asked, ``DDLAB_JVM_ARCHIVE=build`` (or ``1``)."""
    return _setting() in ("build", "1", "true", "yes")


def archive_path(java, folder: Path | str | None = None) -> Path:
    """Where the archive for this Java (a :class:`~.session.JavaInfo`) and this pyspark is
    (in ``folder``, default ``$DDLAB_JVM_ARCHIVE_DIR`` or ``cache_dir()/jvm``)."""
    import pyspark

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
    """Start the background build of the archive if asked for (:func:`builds_in_background`)
    and it neither exists nor is being built; returns whether a build was started.  Never
    raises, and a failure on the way leaves no lock behind: the archive is an optimisation."""
    try:
        if not builds_in_background() or os.environ.get("DDLAB_JVM_ARCHIVE_BUILDER"):
            return False
        path = archive_path(java)
        if path.is_file() or path.with_suffix(".failed").is_file():
            return False            # there, or this Java cannot record one (see the .failed file)
        path.parent.mkdir(parents=True, exist_ok=True)
    except Exception:
        return False
    lock = path.with_suffix(".building")
    if not _take_lock(lock):
        return False
    try:
        with open(path.with_suffix(".log"), "w") as log:
            env = dict(os.environ, DDLAB_JVM_ARCHIVE_BUILDER="1")
            env.pop("SPARK_REMOTE", None)
            subprocess.Popen([sys.executable, "-m", "ddlab.sources.jvm_archive", str(path),
                              str(BUILD_DELAY_S)],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True, close_fds=True)
        return True
    except Exception:               # no build runs: the lock must not block the next try
        try:
            lock.unlink()
        except OSError:
            pass
        return False


def _take_lock(lock: Path) -> bool:
    """Create the build's lock file; ``False`` when a live build holds it (a lock older than
    :data:`BUILD_TIMEOUT_S` is a dead build's, taken over) or it cannot be created."""
    try:
        if time.time() - lock.stat().st_mtime < BUILD_TIMEOUT_S:
            return False            # another process is building it
        lock.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:                 # FileExistsError: another process took it just now
        return False
    return True
