"""Compiled per-key kernels (numba): the reduce's and the join's per-key work for a batch of
keys in a few calls.

Why: a small change touches a few keys, and the numpy path pays tens of numpy calls (each a
microsecond or two of fixed cost) per operator run, while a Python loop pays per history row.
A compiled kernel pays neither: it finds each key's rows in the trace batches, accumulates
them at the time, consolidates, evaluates the built-in logic, diffs against the previous
output and finds the later interesting times in one or two calls (:mod:`.reduce`); a join
matches a batch of changes against the other side's batches likewise (:mod:`.join`).

The numpy (and Python) paths stay as the reference: every kernel is tested equal to them, and
the fuzzer runs programs with the kernels on and off.  Without numba (not installed, or
failing to import) the engine says so once and runs on its numpy path.

Compilation.  Kernels are cached on disk (numba's ``cache=True``: next to the sources, or,
when that folder is read-only, in numba's per-user cache directory; ``NUMBA_CACHE_DIR``
overrides both), so a process whose cache is warm loads them in about a second the first time
an operator needs them.  Compiling them from nothing takes numba several times that (the
benchmark ``python -m benchmarks kernels`` measures both), so the first time ever, a
background process compiles them (at low priority, on the other core) while this one keeps
running on the numpy path, and switches to the kernels once they are cached: no cell waits
for the compiler.  ``DDLAB_KERNELS``: ``0`` turns the kernels off; ``sync`` compiles in this
process on first use instead (what the tests and benchmarks use, through :func:`warm_up`).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import warnings
from pathlib import Path
from time import monotonic, perf_counter, time

import numpy as np

from .. import tuning
from ..work import KERNEL_CALLS

#: Whether a cold cache is filled by a background process (``False``: compile in-process;
#: ``DDLAB_KERNELS=sync``).  ``tuning.KERNELS`` (``DDLAB_KERNELS=0``) turns the kernels off.
background: bool = os.environ.get("DDLAB_KERNELS", "1").strip().lower() != "sync"

_state = {"checked": False, "available": False, "reason": None, "warned": False,
          "ready": False, "compiling": None, "next_poll": 0.0, "failed": False, "failure": None,
          "load_seconds": None, "waiting": False}
#: Seconds between two checks of a background compilation (``active`` runs per operator).
_POLL_SECONDS = 0.25
#: the kernels' sources: a change to any of them makes the disk cache's stamp stale
_SOURCES = ("histories.py", "logics.py", "matching.py", "reduce.py", "join.py", "rows.py",
            "sorting.py", "spec.py")


def available() -> bool:
    """Whether numba imports (checked once, lazily: importing numba takes a few tenths of a
    second, paid by the first program that reaches a kernel, not by ``import ddlab``)."""
    if not _state["checked"]:
        _state["checked"] = True
        try:
            import numba  # noqa: F401
        except Exception as err:  # ImportError, or a numba/numpy version mismatch
            _state["reason"] = f"{type(err).__name__}: {err}"
        else:
            _state["available"] = True
    return _state["available"]


def active() -> bool:
    """Whether an operator should take its kernel path now: on (``tuning.KERNELS`` and
    ``tuning.FAST_PATHS``), numba usable, and the kernels loaded (loading them from a warm
    cache here, or starting their compilation in the background when the cache is cold and
    answering ``False`` until it is done).

    Never raises: the kernels are an optimisation.  Anything going wrong on the way (numba
    not importing, a numba release without what this module reads, a kernel failing to
    compile) is said once, in one warning, and the engine stays on its numpy path for the
    rest of the process without trying again."""
    if not (tuning.KERNELS and tuning.FAST_PATHS):
        return False
    if _state["ready"]:
        return True
    if _state["failed"]:
        return False
    try:
        return _load()
    except Exception as err:   # e.g. AttributeError from a numba change, a compile error
        _fail(f"the compiled kernels failed to load ({type(err).__name__}: "
              f"{str(err).splitlines()[0] if str(err) else ''})",
              "Please report it with the numba version")
        return False


def _load() -> bool:
    """The body of :func:`active` past its quick answers (which catches what this raises)."""
    if not available():
        _warn_once(f"numba is not usable ({_state['reason']})",
                   "pip install numba to compile the per-key kernels")
        return False
    proc = _state["compiling"]
    if proc is not None:
        now = monotonic()
        if now < _state["next_poll"]:
            return False
        _state["next_poll"] = now + _POLL_SECONDS
        if proc.poll() is None:
            return False
        _state["compiling"] = None
        _release_compile()
        if proc.returncode != 0:
            _fail(f"compiling the kernels failed (exit {proc.returncode}; details in "
                  f"{_log_path()})", "The log says why")
            return False
    elif background and not cache_is_warm():
        if _state["waiting"]:  # another process compiles: wait for its stamp
            now = monotonic()
            if now < _state["next_poll"]:
                return False
            _state["next_poll"] = now + _POLL_SECONDS
            if _compiler_elsewhere():
                return False
            _state["waiting"] = False  # it stopped without a warm cache: compile here
        if not _claim_compile():
            _state["waiting"] = True
            _state["next_poll"] = monotonic() + _POLL_SECONDS
            return False
        _start_background()
        return False
    warm_up()
    return True


#: A compile lock older than this is taken to be left behind (the compiler takes a minute).
_LOCK_SECONDS = 900


def _lock_path() -> Path:
    return cache_dir() / "ddlab-kernels.compiling"


def _compiler_elsewhere() -> bool:
    """Whether another process holds the compile lock and is alive (a lock of a process
    that is gone, or older than :data:`_LOCK_SECONDS`, is removed)."""
    path = _lock_path()
    try:
        pid = int(path.read_text().split()[0])
        age = time() - path.stat().st_mtime
    except (OSError, ValueError, IndexError):
        return path.exists()  # (being written, or unreadable: count it as held)
    if pid == os.getpid() or age > _LOCK_SECONDS or not _alive(pid):
        try:
            path.unlink()
        except OSError:
            pass
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _claim_compile() -> bool:
    """Take the compile lock (created atomically), so that processes starting together on a
    cold cache (a notebook's kernels, a test run) run one compiler, not one each; ``False``
    when another live process holds it.  An unwritable cache cannot be shared: compile."""
    path = _lock_path()
    for _ in range(2):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if _compiler_elsewhere():
                return False
            continue  # a stale lock was removed: try once more
        except OSError:
            return True
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()}\n")
        return True
    return False


def _release_compile() -> None:
    """Remove the compile lock this process took (its compiler finished)."""
    try:
        if int(_lock_path().read_text().split()[0]) == os.getpid():
            _lock_path().unlink()
    except Exception:  # (cleanup: no lock, or no cache location to find it in)
        pass


def _fail(why: str, fix: str) -> None:
    """Give up on the kernels for this process: say why once; the numpy path from now on."""
    _state["failed"], _state["failure"], _state["compiling"] = True, why, None
    _state["waiting"] = False
    _release_compile()
    _warn_once(why, fix)


def _warn_once(why: str, fix: str) -> None:
    if not _state["warned"]:
        _state["warned"] = True
        warnings.warn(f"ddlab: {why}; the engine runs on its numpy path (correct, slower per "
                      f"small change). {fix}.", RuntimeWarning, stacklevel=4)


def warm_up() -> float:
    """Compile (or load from the disk cache) every kernel in this process; returns the
    seconds it took the first time (later calls return at once and cost nothing).  The
    benchmarks report it as the first-use cost of a fresh process."""
    if _state["ready"] or not available():
        return 0.0
    start = perf_counter()
    from . import histories, matching, rows

    histories.warm_up()   # the reduce's kernels
    matching.warm_up()    # the join's
    rows.warm_up()
    _state["ready"] = True
    _state["load_seconds"] = perf_counter() - start
    _write_stamp()
    return _state["load_seconds"]


def cache_dir() -> Path | None:
    """Where numba caches the compiled kernels (``None`` when numba is unavailable)."""
    if not available():
        return None
    from .histories import scan

    # numba keeps it private; a numba without it fails here, and active() falls back
    return Path(scan._cache._cache_path)


def _fingerprint() -> str:
    """What a cache built by another process must match: numba, numpy, Python and the
    kernel sources (numba checks the sources itself; this decides whether to wait for it)."""
    import numba
    import numpy

    here = Path(__file__).parent
    parts = [numba.__version__, numpy.__version__, sys.version]
    for name in _SOURCES:
        stat = (here / name).stat()
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _stamp_path() -> Path:
    return cache_dir() / "ddlab-kernels.stamp"


def _log_path() -> Path:
    return cache_dir() / "ddlab-kernels.log"


def cache_is_warm() -> bool:
    """Whether a process already compiled and cached these kernels (with this numba, numpy,
    Python and these sources)."""
    try:
        return _stamp_path().read_text() == _fingerprint()
    except OSError:
        return False


def _write_stamp() -> None:
    try:
        path = _stamp_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fingerprint())
    except OSError:
        pass  # an unwritable cache: numba compiles in memory; the next process compiles again


def _after_fork_in_child() -> None:
    """A forked process (a worker) is not the background compiler's parent: asking the
    compiler's ``Popen`` there reads as finished (``waitpid`` fails), and every worker would
    compile the kernels itself.  It waits for the compiler's stamp instead, like any other
    process that found the compile lock taken."""
    if _state["compiling"] is not None:
        _state["compiling"] = None
        _state["waiting"] = True
        _state["next_poll"] = monotonic() + _POLL_SECONDS


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _start_background() -> None:
    """Compile the kernels in a background process (low priority); ``active`` polls it."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        log = open(_log_path(), "w")
    except OSError:
        log = subprocess.DEVNULL
    try:
        _state["compiling"] = subprocess.Popen(
            [sys.executable, "-m", "ddlab.engine.kernels.compile"], env=env,
            stdin=subprocess.DEVNULL,
            stdout=log, stderr=log, preexec_fn=_lower_priority if os.name == "posix" else None,
            # its own session: Jupyter's Stop (SIGINT to the kernel's process group) is not
            # meant for it, and would leave the kernels off until the kernel restarts
            start_new_session=os.name == "posix")
        _state["next_poll"] = monotonic() + _POLL_SECONDS
    except OSError as err:
        _fail(f"could not start compiling the kernels ({err})", "The error says why")
    finally:
        if log is not subprocess.DEVNULL:
            log.close()


def _lower_priority() -> None:
    try:
        os.nice(10)
    except OSError:
        pass


def status() -> str:
    """One line on the kernels' state (for ``%dd`` and bug reports)."""
    if not tuning.KERNELS:
        return "compiled kernels: off (DDLAB_KERNELS=0)"
    if not available():
        return f"compiled kernels: numba not usable ({_state['reason']}); numpy path"
    if _state["ready"]:
        return f"compiled kernels: on (loaded in {_state['load_seconds']:.2f} s)"
    if _state["compiling"] is not None:
        return "compiled kernels: compiling in the background; numpy path until then"
    if _state["waiting"]:
        return ("compiled kernels: another process is compiling them in the background; "
                "numpy path until then")
    if _state["failed"]:
        return f"compiled kernels: {_state['failure']}; numpy path"
    return "compiled kernels: not loaded yet (on first use)"


_rows = None

def _rows_module():
    global _rows
    KERNEL_CALLS[0] += 1  # every wrapper below makes one compiled call
    if _rows is None:
        from . import rows

        _rows = rows
    return _rows


def merge_by_key(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two packed batches sorted by key code (row 0) merged into one, stably."""
    return _rows_module().merge_by_key(np.ascontiguousarray(a), np.ascontiguousarray(b))


def merge_by_key_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """:func:`merge_by_key` written into ``out``; ``a``, ``b`` and ``out`` of one integer
    width (int64, or int32 for narrowed batches)."""
    _rows_module().merge_by_key_into(np.ascontiguousarray(a), np.ascontiguousarray(b), out)


def merge_compact(a: np.ndarray, b: np.ndarray, time_row: int, epoch: int):
    """Two packed batches sorted by key code merged, their epoch coordinate (row
    ``time_row``) advanced to ``epoch`` and their updates consolidated (no float fields):
    ``(out, m)``, the result being ``out[:, :m]`` (int64).  Narrowed (int32) batches are
    read as they are when both are; a narrowed one merged with a wide one is widened."""
    if a.dtype != b.dtype:
        a, b = a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    return _rows_module().merge_compact(np.ascontiguousarray(a), np.ascontiguousarray(b),
                                        time_row, epoch)


def sort_values(values: np.ndarray, bits: int) -> None:
    """Sort ``values`` (contiguous non-negative int64 below ``2**bits``) in place, by radix
    (a scratch array as long as ``values`` while it runs)."""
    _rows_module().radix_sort(values, bits)


def sort_by_key(data: np.ndarray) -> np.ndarray:
    """A packed matrix with its columns sorted stably by key code (row 0)."""
    return _rows_module().sort_by_key(np.ascontiguousarray(data))


def consolidate(cols, diffs, times=None):
    """:func:`ddlab.engine.batch.consolidate` of int64 columns (and times) in one compiled
    call: ``(cols, diffs)`` or ``(cols, times, diffs)``, sorted by record then time."""
    k = len(cols)
    fields = list(cols) if times is None else list(cols) + list(times.T)
    matrix = np.array(fields, dtype=np.int64).reshape(len(fields), -1)
    mat, weights = _rows_module().consolidate_rows(matrix, np.ascontiguousarray(diffs))
    if times is None:
        return tuple(mat[:k]), weights
    return tuple(mat[:k]), mat[k:].T, weights


__all__ = ["available", "active", "warm_up", "cache_dir", "cache_is_warm",
           "status", "consolidate", "merge_by_key",
           "merge_by_key_into", "merge_compact", "sort_by_key", "sort_values"]
