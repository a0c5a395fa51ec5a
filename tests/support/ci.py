"""Whether the suite runs as CI, and what a check that cannot run does there.

``.ci/run`` (the README's test command in a new venv, every extra installed) sets
``DDLAB_CI=1``.  Under it, a check that finds its tool or an extra missing *fails*: the
environment is broken and a skip would hide it.  Elsewhere (a developer's partial install)
the check skips with the reason.
"""
from __future__ import annotations

import os

import pytest

#: the environment variable ``.ci/run`` sets
CI_VARIABLE = "DDLAB_CI"


def under_ci() -> bool:
    return os.environ.get(CI_VARIABLE, "").strip() not in ("", "0")


def skip_unless_ci(reason: str) -> None:
    """Skip with ``reason``; under CI, fail with it instead."""
    if under_ci():
        pytest.fail(f"{reason} (under CI, {CI_VARIABLE}=1, this fails instead of skipping)",
                    pytrace=False)
    pytest.skip(reason)
