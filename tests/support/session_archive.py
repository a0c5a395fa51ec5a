"""The test session's JVM class archive: recorded once per session (``tests/conftest.py``,
before the first Spark test), and what that recording left, for the test of the build itself
(``tests/sources/test_jvm_archive.py``), which checks this very recording instead of making a
second, identical one (a minute of the suite on the 2-core machine).
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: the recording ``build`` makes: the same call as ``python -m ddlab.sources.jvm_archive``'s,
#: in the foreground, with the minimal job (Spark's start and one small count)
RECORD = ("import sys; from pathlib import Path; from ddlab.sources import jvm_archive; "
          "from ddlab.sources.session import check_java; "
          "jvm_archive.build(jvm_archive.archive_path(check_java(), Path(sys.argv[1])), "
          "low_priority=False, recording='minimal')")


@dataclass(frozen=True)
class Recording:
    """One finished recording: the folder, the archive path it was to write, what the folder
    held right after it (before any other JVM of the session ran), and the recorder's exit
    status and error output."""
    folder: Path
    path: Path
    left: tuple[str, ...]
    returncode: int
    stderr: str


#: this session's recording (set by ``record``), None when the session made none
SESSION: Recording | None = None


def record(folder: Path, env: dict | None = None, meanwhile=None) -> Recording:
    """Record the archive into ``folder`` in a fresh process (its error output kept);
    ``meanwhile()``, if given, runs in this process while the recording JVM works (it uses
    a core of its own for much of its minute)."""
    from ddlab.sources import jvm_archive
    from ddlab.sources.session import check_java

    path = jvm_archive.archive_path(check_java(), folder)
    with subprocess.Popen([sys.executable, "-c", RECORD, str(folder)], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            if meanwhile is not None:
                meanwhile()
            _, stderr = proc.communicate(timeout=900)
        except BaseException:
            proc.kill()
            raise
    left = tuple(sorted(p for p in os.listdir(folder) if p != "cache"))
    return Recording(Path(folder), path, left, proc.returncode, stderr)


def record_for_session(folder: Path, meanwhile=None) -> Recording:
    """``record`` for the whole session: kept in ``SESSION``."""
    global SESSION
    SESSION = record(folder, meanwhile=meanwhile)
    return SESSION
