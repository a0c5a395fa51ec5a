"""Shared test configuration: hypothesis profiles (CI runs the same number of examples)."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("DDLAB_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def spark():
    """One local[2] Spark session for the whole run (Spark allows one per process), with Arrow
    fallback off so Arrow problems fail loudly; skips with the reason when Spark is unusable."""
    pytest.importorskip("pyspark", reason="the Spark tests need pyspark (pip install 'ddlab[spark]')")
    from ddlab.sources import session

    try:
        session.check_java()
    except session.SparkUnavailable as exc:
        pytest.skip(f"the Spark tests need Java 17+: {exc}")
    spark = session.get_spark(
        master="local[2]",
        config={
            "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
        },
    )
    yield spark
    session.stop_spark()


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    """The compiled kernels loaded (compiled here if the cache is cold) before any test runs,
    so a test of the kernel path never runs the numpy path while a background compilation is
    under way (the engine's behaviour for users, see ddlab.engine.kernels)."""
    from ddlab.engine import kernels

    kernels.warm_up()
