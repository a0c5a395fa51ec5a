"""One Spark session per kernel, started lazily, with a Java check before any JVM starts.

Why this module exists: PySpark's own failure without a usable Java is a wall of Py4J trace
("Java gateway process exited before sending its port number").  We check Java first and say
what was found and how to fix it.  The same code reaches a real cluster by a master URL or a
Spark Connect endpoint (argument or environment), so nothing else in ``sources`` may use
``sparkContext`` or RDDs.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import class_archive

__all__ = [
    "SparkUnavailable",
    "require_pyspark",
    "spark_log_path",
    "JavaInfo",
    "find_java",
    "check_java",
    "spark_status",
    "spark_running",
    "spark_target",
    "get_spark",
    "build_session",
    "stop_spark",
    "is_connect",
]

MIN_JAVA = 17  # PySpark 4 needs Java 17+
JAVA_FIX = (
    "Install OpenJDK 17 or newer (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; "
    "conda: `conda install -c conda-forge openjdk=17`) or set JAVA_HOME to a JDK/JRE 17+ folder."
)
DEFAULT_MASTER = "local[*]"

# Only SQL runtime settings may be sent to a Spark Connect server; the rest need a local JVM.
_RUNTIME_CONF = {
    "spark.sql.session.timeZone": "UTC",  # unix seconds <-> timestamps must not depend on the laptop
    "spark.sql.execution.arrow.pyspark.enabled": "true",  # Arrow transfer to pandas/the engine
}
_LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # else a text progress bar lands in notebook cells
    "spark.sql.shuffle.partitions": "4",  # the default 200 is pure overhead on laptop-sized data
    "spark.default.parallelism": "4",
}
# Everything at ERROR.  The org.apache.spark entry matters: Spark prints a "Setting default
# log level" banner unless its own logger's configured level equals the root level.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.netty.name = io.netty
logger.netty.level = error
logger.jetty.name = org.sparkproject
logger.jetty.level = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
"""


class SparkUnavailable(RuntimeError):
    """Spark cannot start here (no pyspark, no Java 17+); the message says why and how to fix it."""


@dataclass(frozen=True)
class JavaInfo:
    """What ``java -version`` said: the binary used, its major version and its first line."""

    path: str
    major: int | None
    version_text: str
    java_home: str | None

    def describe(self) -> str:
        home = f", JAVA_HOME={self.java_home}" if self.java_home else ", JAVA_HOME unset"
        return f"{self.path} ({self.version_text or 'no version output'}{home})"


def _java_major(text: str) -> int | None:
    match = re.search(r'version "([^"]+)"', text) or re.search(r"(?:openjdk|java) (\d[\w.+-]*)", text)
    if not match:
        return None
    parts = re.findall(r"\d+", match.group(1))
    if not parts:
        return None
    major = int(parts[0])
    if major == 1 and len(parts) > 1:  # "1.8.0_292" means Java 8
        major = int(parts[1])
    return major


def find_java() -> JavaInfo:
    """Locate Java the way Spark's launcher does (``$JAVA_HOME/bin/java``, else ``java`` on PATH).

    Raises :class:`SparkUnavailable` when there is none or it is older than 17.
    """
    java_home = os.environ.get("JAVA_HOME") or None
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if not candidate.exists():
            raise SparkUnavailable(
                f"Spark needs Java {MIN_JAVA}+, but JAVA_HOME={java_home} has no bin/java. {JAVA_FIX}"
            )
        path = str(candidate)
    else:
        found = shutil.which("java")
        if not found:
            raise SparkUnavailable(
                f"Spark needs Java {MIN_JAVA}+, but no `java` is on PATH and JAVA_HOME is unset. {JAVA_FIX}"
            )
        path = found
    try:
        proc = subprocess.run([path, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailable(f"Spark needs Java {MIN_JAVA}+, but `{path} -version` failed: {exc}. "
                               f"{JAVA_FIX}") from None
    output = (proc.stderr or "") + (proc.stdout or "")
    first = next((line.strip() for line in output.splitlines() if "version" in line), output.strip()[:120])
    return JavaInfo(path=path, major=_java_major(output), version_text=first, java_home=java_home)


def check_java(min_version: int = MIN_JAVA) -> JavaInfo:
    """Return the Java that Spark will use, or raise :class:`SparkUnavailable` naming what was found."""
    info = find_java()
    if info.major is None or info.major < min_version:
        found = f"Java {info.major}" if info.major else "an unrecognised Java"
        raise SparkUnavailable(
            f"Spark needs Java {min_version}+, found {found}: {info.describe()}. {JAVA_FIX}"
        )
    return info


def _pyspark_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return None
    for dist in ("pyspark", "pyspark-client", "pyspark-connect"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


def require_pyspark() -> str:
    """The installed PySpark version; raises :class:`SparkUnavailable` with one line naming the
    extra to install when it is missing.  Every Spark entry point of ``ddlab.sources`` calls
    this before importing pyspark, so users never see a raw ModuleNotFoundError."""
    from importlib.util import find_spec

    if find_spec("pyspark") is None:
        raise SparkUnavailable("pyspark is not installed: install the Spark extra with "
                               "`pip install 'ddlab[spark]'`.")
    return _pyspark_version() or "?"



def spark_target(master: str | None = None, remote: str | None = None) -> tuple[str, str]:
    """Where a session would go: ``("connect", url)`` or ``("classic", master)``.

    Precedence: the ``remote`` argument, the ``master`` argument, ``SPARK_REMOTE``,
    ``DDLAB_SPARK_MASTER``, then the embedded ``local[*]``.
    """
    if remote:
        return ("connect", remote)
    if master:
        return ("classic", master)
    if os.environ.get("SPARK_REMOTE"):
        return ("connect", os.environ["SPARK_REMOTE"])
    if os.environ.get("DDLAB_SPARK_MASTER"):
        return ("classic", os.environ["DDLAB_SPARK_MASTER"])
    return ("classic", DEFAULT_MASTER)


def _needs_local_jvm(kind: str, where: str) -> bool:
    # sc://host is a thin gRPC client; "local[...]" (classic or Connect) starts a JVM here.
    return not where.startswith("sc://")


_lock = threading.RLock()
_shared = None  # the kernel's session
_shared_target: tuple[str, str] | None = None
_log_dir: str | None = None


def _log_folder() -> str:
    global _log_dir
    if _log_dir is None:
        _log_dir = tempfile.mkdtemp(prefix="ddlab-spark-")
        atexit.register(shutil.rmtree, _log_dir, True)
        Path(_log_dir, "log4j2.properties").write_text(_LOG4J2)
    return _log_dir


def _log4j_file() -> str:
    return str(Path(_log_folder(), "log4j2.properties"))


def spark_log_path() -> str:
    """The file that receives the local JVM's console output (its start-up warnings, such as
    ``Using incubator modules``, and Spark's own log lines), so none of it lands in a
    notebook cell or the terminal."""
    return str(Path(_log_folder(), "spark-jvm.log"))


@contextmanager
def _jvm_output_to_log():
    """While a JVM is being launched, point this process's stdout/stderr file descriptors at
    :func:`spark_log_path`: the JVM inherits them and keeps writing there for its whole life,
    while Python's own streams are restored as soon as the launch is over."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # pragma: no cover - a closed stream
        pass
    log = os.open(spark_log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = []
    try:
        for fd in (1, 2):
            try:
                saved.append((fd, os.dup(fd)))
                os.dup2(log, fd)
            except OSError:  # pragma: no cover - no such descriptor (embedded interpreters)
                pass
        yield
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        os.close(log)


def is_connect(spark) -> bool:
    """True for a Spark Connect session (no JVM in this process, no sparkContext)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _alive(spark) -> bool:
    if spark is None:
        return False
    if is_connect(spark):
        return not getattr(spark, "is_stopped", False)
    try:  # classic: a stopped SparkContext drops its Java handle
        return spark.sparkContext._jsc is not None
    except Exception:
        return False


#: JVM options for a driver that should come up fast rather than run long jobs fast: the
#: client compiler only (no C2 compilations competing for the cores while a cold JVM warms
#: up) and the serial collector.  Measured on the 2-core machine: CollegeMsg's load and
#: windowing on a cold JVM 14.3-18.4 s -> 12.3-12.4 s; a long job is slower (windowing
#: 1.35M Travian events on a warm JVM 6.7 -> 11.6 s), so only the demo asks for it.
QUICK_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def build_session(master: str | None = None, remote: str | None = None, config: dict | None = None,
                  java_options: str = ""):
    """Start a new session for ``master``/``remote`` (see :func:`spark_target`) without sharing it.

    Most code wants :func:`get_spark`; this is for a second, independent session (e.g. a
    Connect client beside the embedded one).  ``java_options``: added to a local driver
    JVM's options (e.g. :data:`QUICK_START_JAVA_OPTIONS`).  A classic session is per JVM, so a classic build
    returns the JVM's existing session if there is one.
    """
    kind, where = spark_target(master, remote)
    require_pyspark()
    java = None
    if _needs_local_jvm(kind, where):
        java = check_java()
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    conf = dict(_RUNTIME_CONF)
    if kind == "connect":
        if where.startswith("local"):
            conf.update(_LOCAL_CONF)
        conf.update(config or {})
        builder = SparkSession.builder.remote(where)
        for key, value in conf.items():
            builder = builder.config(key, value)
        try:
            if where.startswith("local"):  # a local Connect server: a JVM started here
                with _jvm_output_to_log():
                    return builder.create()
            return builder.create()
        except Exception as exc:
            hint = ""
            if "SESSION_ALREADY_EXIST" in str(exc):
                hint = " PySpark runs one kind of session per process: stop the classic one first (stop_spark())."
            raise SparkUnavailable(f"could not start a Spark Connect session for {where}: "
                                   f"{_short(exc)}{hint}") from None
    if where.startswith("local"):
        conf.update(_LOCAL_CONF)
        archive = class_archive.java_options(java) if java is not None else ""
        # the caller's options last: they win over the archive's (e.g. -Xshare:on)
        conf["spark.driver.extraJavaOptions"] = (
            f"-Dlog4j2.configurationFile=file:{_log4j_file()} {archive} {java_options}".strip())
        warehouse = tempfile.mkdtemp(prefix="ddlab-warehouse-")
        atexit.register(shutil.rmtree, warehouse, True)
        conf["spark.sql.warehouse.dir"] = warehouse
    conf.update(config or {})
    builder = SparkSession.builder.master(where).appName("ddlab")
    for key, value in conf.items():
        builder = builder.config(key, value)
    saved_remote = os.environ.pop("SPARK_REMOTE", None)  # an explicit master wins over the env
    # PySpark marks a process that used Connect; a classic session needs the mark gone (it is
    # process-wide: functions build Connect columns while it is set).
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    try:
        with _jvm_output_to_log():
            spark = builder.getOrCreate()
    except Exception as exc:
        raise SparkUnavailable(f"Spark did not start (master {where}): {_short(exc)} "
                               f"(the JVM's output is in {spark_log_path()})") from None
    finally:
        if saved_remote is not None:
            os.environ["SPARK_REMOTE"] = saved_remote
    try:
        spark.sparkContext.setLogLevel("ERROR")  # classic only; Connect has no sparkContext
    except Exception:
        pass
    if java is not None and where.startswith("local"):
        class_archive.start_building(java)   # once per machine, in the background
    return spark


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def get_spark(master: str | None = None, remote: str | None = None, config: dict | None = None,
              java_options: str = ""):
    """The kernel's shared Spark session, started on first use.

    With no arguments: the running shared session, else one for ``SPARK_REMOTE`` /
    ``DDLAB_SPARK_MASTER`` / ``local[*]``.  Asking for a different master or remote stops the
    shared session first (Spark ignores most settings of an existing session) and warns.
    """
    global _shared, _shared_target
    with _lock:
        explicit = master is not None or remote is not None
        target = spark_target(master, remote)
        if _alive(_shared) and (not explicit or target == _shared_target):
            return _shared
        if _alive(_shared):
            warnings.warn(
                f"stopping the shared Spark session ({_shared_target[1]}) to start {target[1]}",
                stacklevel=2,
            )
            _shared.stop()
        _shared = build_session(master, remote, config, java_options)
        _shared_target = target
        return _shared


def start_spark(java_options: str = "") -> threading.Thread:
    """Start the shared session in a background thread and return at once: a caller with
    other work to do (imports, loading compiled kernels) does it while the JVM boots.  The
    next :func:`get_spark` waits for that start; if it failed, it tries again and raises
    the error there.  ``java_options``: see :func:`build_session` (a running session is
    kept as it is)."""
    def boot():
        try:
            get_spark(java_options=java_options)
        except Exception:   # reported by the get_spark() that needs the session
            pass

    thread = threading.Thread(target=boot, name="ddlab-spark-start", daemon=True)
    thread.start()
    return thread


def stop_spark() -> None:
    """Stop the shared session (if any); the next :func:`get_spark` starts a fresh one."""
    global _shared, _shared_target
    with _lock:
        if _alive(_shared):
            _shared.stop()
        _shared, _shared_target = None, None


def spark_running() -> bool:
    """True while the shared session of :func:`get_spark` is up (so using Spark costs no start-up)."""
    return _alive(_shared)


def spark_status() -> tuple[bool, str]:
    """``(ok, one line)`` for a banner: is Spark usable here, and if not, why and how to fix it."""
    try:
        version = require_pyspark()
        if _alive(_shared):
            return True, f"Spark {version}: session running ({_shared_target[1]})"
        kind, where = spark_target()
        if not _needs_local_jvm(kind, where):
            return True, f"Spark {version}: Spark Connect at {where} (contacted on first use)"
        java = check_java()
        return True, f"Spark {version}: ready ({where}, Java {java.major}), starts on first use"
    except SparkUnavailable as exc:
        return False, f"Spark unavailable: {exc}"
