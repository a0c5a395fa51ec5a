"""The driver JVM's class-data-sharing archive: named after the Java and the pyspark it was
made for, offered only when it is there, built once (never twice at a time, never again after
a failure), and, built for real, mapped by a later JVM that then runs a job."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import session_archive

from ddlab.sources import class_archive, jvm_archive
from ddlab.sources.session import JavaInfo

JAVA = JavaInfo(path="/usr/bin/java", major=17, version_text='openjdk version "17.0.15"',
                java_home=None)


@pytest.fixture
def archive_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DDLAB_JVM_ARCHIVE", "1")
    monkeypatch.setenv("DDLAB_JVM_ARCHIVE_DIR", str(tmp_path))
    monkeypatch.delenv("DDLAB_JVM_ARCHIVE_BUILDER", raising=False)
    return tmp_path


def test_the_archive_is_named_after_the_java_and_offered_only_when_there(archive_dir, monkeypatch):
    pytest.importorskip("pyspark")
    path = jvm_archive.archive_path(JAVA)
    assert path.parent == archive_dir and "java17" in path.name and path.suffix == ".jsa"
    assert jvm_archive.archive_path(JAVA, "/elsewhere") == Path("/elsewhere") / path.name
    assert jvm_archive.archive_path(replace(JAVA, version_text='openjdk version "21"')) != path
    assert jvm_archive.archive_path(replace(JAVA, path="/opt/jdk/bin/java")) != path
    assert jvm_archive.java_options(JAVA) == ""
    path.write_bytes(b"x")
    assert jvm_archive.java_options(JAVA) == f"-XX:SharedArchiveFile={path} -Xshare:auto"
    monkeypatch.setenv("DDLAB_JVM_ARCHIVE", "0")
    assert jvm_archive.java_options(JAVA) == "" and not jvm_archive.start_building(JAVA)


def test_a_build_starts_once_and_not_again_after_a_failure(archive_dir, monkeypatch):
    pytest.importorskip("pyspark")
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    path = jvm_archive.archive_path(JAVA)
    assert jvm_archive.start_building(JAVA) and len(started) == 1
    assert not jvm_archive.start_building(JAVA)             # the lock of a running build
    lock = path.with_suffix(".building")
    old = time.time() - jvm_archive.BUILD_TIMEOUT_S - 1
    os.utime(lock, (old, old))
    assert jvm_archive.start_building(JAVA) and len(started) == 2   # a dead build's lock
    lock.unlink()
    path.with_suffix(".failed").write_text("no archive")
    assert not jvm_archive.start_building(JAVA)
    path.with_suffix(".failed").unlink()
    monkeypatch.setenv("DDLAB_JVM_ARCHIVE_BUILDER", "1")    # the builder itself never recurses
    assert not jvm_archive.start_building(JAVA)


def test_a_session_builds_no_archive_unless_asked(archive_dir, monkeypatch):
    """By default a local session maps an archive that is there but never starts a second
    JVM to build one; DDLAB_JVM_ARCHIVE=build asks for the background build."""
    pytest.importorskip("pyspark")
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    monkeypatch.delenv("DDLAB_JVM_ARCHIVE")
    assert not jvm_archive.start_building(JAVA) and started == []
    assert not any(archive_dir.iterdir())
    path = jvm_archive.archive_path(JAVA)
    path.write_bytes(b"x")
    assert jvm_archive.java_options(JAVA) == f"-XX:SharedArchiveFile={path} -Xshare:auto"
    path.unlink()
    monkeypatch.setenv("DDLAB_JVM_ARCHIVE", "build")
    assert jvm_archive.start_building(JAVA) and len(started) == 1


def test_a_build_that_fails_to_start_leaves_no_lock_and_no_open_log(archive_dir, monkeypatch):
    pytest.importorskip("pyspark")
    opened = []
    real_open = open

    def recording_open(*args, **kwargs):
        handle = real_open(*args, **kwargs)
        opened.append(handle)
        return handle

    def no_process(*args, **kwargs):
        raise OSError("fork failed: out of memory")

    monkeypatch.setattr(class_archive, "open", recording_open, raising=False)
    monkeypatch.setattr(subprocess, "Popen", no_process)
    path = jvm_archive.archive_path(JAVA)
    assert not jvm_archive.start_building(JAVA)
    assert not path.with_suffix(".building").exists()       # the next session may try again
    assert opened and all(handle.closed for handle in opened)
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    assert jvm_archive.start_building(JAVA) and len(started) == 1


@pytest.mark.slow
@pytest.mark.spark
def test_a_built_archive_is_mapped_by_a_later_jvm(tmp_path):
    """A real build (a recording JVM through Spark's start and a small job: the session's
    recording through CollegeMsg's load and windows only adds classes, and minutes of the
    suite), then a fresh JVM started with the archive and ``-Xshare:on``, which refuses to
    start unless it maps it, runs a job.  The build checked is the test session's own
    recording (``tests/support/session_archive.py``: the same call, made before the first
    Spark test) when the session made one; otherwise one made here."""
    done = session_archive.SESSION
    if done is None:
        (tmp_path / "archive").mkdir()
        done = session_archive.record(tmp_path / "archive",
                                      env=dict(os.environ, DDLAB_CACHE_DIR=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr[-3000:]
    path = done.path
    assert path.is_file() and path.stat().st_size > 1_000_000
    assert done.left == (path.name,), done.left       # no lock, partial file or log left behind
    env = dict(os.environ, DDLAB_JVM_ARCHIVE="1", DDLAB_JVM_ARCHIVE_DIR=str(done.folder),
               DDLAB_CACHE_DIR=str(tmp_path / "cache"))
    script = ("from ddlab.sources import get_spark\n"
              "s = get_spark(java_options='-Xshare:on')\n"
              "print(s.range(10).count())\n")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().splitlines()[-1] == "10", run.stderr[-2000:]
