"""The embedded session's settings, and the shared-session behaviour."""
from __future__ import annotations

import pytest

from ddlab.sources import get_spark, is_connect, spark_status

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("error::FutureWarning")]


def test_embedded_session_settings(spark):
    conf = spark.conf
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert conf.get("spark.sql.execution.arrow.pyspark.fallback.enabled") == "false"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.ui.showConsoleProgress") == "false"
    assert conf.get("spark.master") == "local[2]"
    assert not is_connect(spark)


def test_one_shared_session(spark):
    assert get_spark() is spark
    assert get_spark(master="local[2]") is spark  # same target: no restart
    ok, line = spark_status()
    assert ok and "session running (local[2])" in line
