"""Java missing or too old: a clear SparkUnavailable before any JVM start (no JVM needed here)."""
from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ddlab.sources import session
from ddlab.sources.session import SparkUnavailable


def fake_java(folder: Path, version_line: str) -> Path:
    """A ``java`` script that prints ``version_line`` to stderr like ``java -version``."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    java = bin_dir / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\necho 'Fake Runtime Environment' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return java


@pytest.fixture
def no_shared_session(monkeypatch):
    # get_spark would hand back a running shared session; these tests are about starting one.
    monkeypatch.setattr(session, "_shared", None)
    monkeypatch.setattr(session, "_shared_target", None)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("DDLAB_SPARK_MASTER", raising=False)


def test_no_java_anywhere(tmp_path, monkeypatch, no_shared_session):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkUnavailable) as err:
        session.get_spark()
    message = str(err.value)
    assert "no `java` is on PATH and JAVA_HOME is unset" in message
    assert "openjdk-17-jre-headless" in message and "JAVA_HOME" in message
    assert "Py4J" not in message and "gateway" not in message
    ok, line = session.spark_status()
    assert not ok and "Java 17+" in line and "\n" not in line


def test_java_too_old_on_path(tmp_path, monkeypatch, no_shared_session):
    java = fake_java(tmp_path, 'openjdk version "11.0.22" 2024-01-16')
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(java.parent))
    with pytest.raises(SparkUnavailable) as err:
        session.build_session(master="local[1]")
    message = str(err.value)
    assert "found Java 11" in message and str(java) in message and '"11.0.22"' in message
    assert "apt-get install openjdk-17-jre-headless" in message


def test_java_8_via_java_home(tmp_path, monkeypatch, no_shared_session):
    fake_java(tmp_path / "jdk8", 'java version "1.8.0_292"')
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk8"))
    with pytest.raises(SparkUnavailable, match=r"found Java 8: .*JAVA_HOME=.*jdk8"):
        session.check_java()


def test_java_home_without_java(tmp_path, monkeypatch, no_shared_session):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkUnavailable, match="has no bin/java"):
        session.get_spark(master="local[1]")


def test_new_enough_fake_java_passes_the_check(tmp_path, monkeypatch):
    fake_java(tmp_path / "jdk21", 'openjdk version "21.0.3" 2024-04-16')
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk21"))
    assert session.check_java().major == 21


def test_connect_client_needs_no_java(tmp_path, monkeypatch, no_shared_session):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    ok, line = session.spark_status()
    assert ok and "Spark Connect at sc://127.0.0.1:15002" in line


def test_target_precedence(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("DDLAB_SPARK_MASTER", raising=False)
    assert session.spark_target() == ("classic", "local[*]")
    monkeypatch.setenv("DDLAB_SPARK_MASTER", "spark://127.0.0.1:7077")
    assert session.spark_target() == ("classic", "spark://127.0.0.1:7077")
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    assert session.spark_target() == ("connect", "sc://127.0.0.1:15002")
    assert session.spark_target(master="local[2]") == ("classic", "local[2]")
    assert session.spark_target(remote="sc://127.0.0.1:1") == ("connect", "sc://127.0.0.1:1")


def test_import_ddlab_does_not_import_pyspark():
    code = ("import sys, ddlab, ddlab.sources as s; s.spark_status; "
            "assert 'pyspark' not in sys.modules, 'pyspark imported'")
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
