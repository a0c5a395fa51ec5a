"""Shared test configuration: hypothesis profiles (CI runs the same number of examples)."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("DDLAB_HYPOTHESIS_PROFILE", "default"))
