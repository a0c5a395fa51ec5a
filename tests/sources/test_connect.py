"""The same pipeline against a Spark Connect endpoint: a local server from the pyspark distribution.

Proves that pointing ddlab at a cluster (``sc://host:port``) needs no code change: only the
DataFrame API is used.  The server listens on a free loopback port and is always killed.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import pytest

from ddlab.sources.session import SparkUnavailable, check_java

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("error::FutureWarning")]

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    try:
        check_java()
    except SparkUnavailable as exc:
        pytest.skip(f"the Spark Connect test needs Java 17+: {exc}")
    spec = find_spec("pyspark")
    spark_home = Path(spec.origin).parent
    submit = spark_home / "bin" / "spark-submit"
    if not any((spark_home / "jars").glob("spark-connect_*.jar")):
        pytest.skip(f"this pyspark distribution has no Spark Connect server jar in {spark_home / 'jars'}")
    port = free_loopback_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    env = dict(os.environ, SPARK_HOME=str(spark_home), SPARK_LOCAL_IP="127.0.0.1")
    env.pop("SPARK_REMOTE", None)
    cmd = [
        str(submit), "--class", SERVER_CLASS, "--master", "local[2]",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
        "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
        "spark-internal",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not listening(port):
            if proc.poll() is not None:
                pytest.fail(f"the Spark Connect server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"the Spark Connect server did not listen on 127.0.0.1:{port} within 120 s:\n"
                            f"{log.read_text()[-3000:]}")
            time.sleep(0.25)
        yield f"sc://127.0.0.1:{port}"
    finally:
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)  # the server's own process group (start_new_session)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass


def test_window_pipeline_through_spark_connect(connect_server):
    # A fresh process: PySpark allows one mode (classic or Connect) per process (connect_client.py).
    client = Path(__file__).with_name("connect_client.py")
    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    proc = subprocess.run([sys.executable, str(client), connect_server], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), (
        f"Connect client failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
