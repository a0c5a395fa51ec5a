"""The code passes the linter configured in pyproject.toml (``[tool.ruff]``): ruff comes with
the test extra, so the README's test command checks it; without ruff the test skips, and fails
under CI (``DDLAB_CI=1``, set by ``.ci/run``)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from ci import skip_unless_ci

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_passes():
    try:
        import ruff  # noqa: F401  (only to know it is installed)
    except ImportError:
        if shutil.which("ruff") is None:
            skip_unless_ci("ruff is not installed (pip install -e '.[test]' brings it)")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
