"""Every ddlab module imports on the versions pip resolved (the newest in the README's test
command, the lowest declared ones in ``.ci/lowest`` with ``constraints-lowest.txt``), and
``%load_ext ddlab`` loads on the IPython that came with them.

The class of failure this guards: a module using an API that a newer (or older) release of a
dependency does not have, e.g. IPython 9 removing ``IPython.core.magic.arg_split``."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ddlab
from shipped import shipped_modules

OPTIONAL = {"bokeh", "jupyter_bokeh", "pyspark"}  # modules behind an extra may need these


def test_the_package_has_its_layers():
    names = shipped_modules()
    for layer in ("ddlab.engine", "ddlab.sources", "ddlab.kernel_ext"):
        assert layer in names, names


@pytest.mark.parametrize("name", shipped_modules())
def test_every_module_imports(name):
    try:
        importlib.import_module(name)
    except ImportError as err:  # only an optional extra's package may be missing, and then
        missing = getattr(err, "name", None) or ""  # the message must name the extra
        if missing.split(".")[0] in OPTIONAL or "pip install 'ddlab[" in str(err):
            assert "pip install 'ddlab[" in str(err), f"{name}: {err}"
        else:
            raise


def test_load_ext_prints_one_line_on_this_ipython():
    """In a fresh interpreter, as in a new kernel: one line on stdout, nothing on stderr."""
    code = """
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
config = Config()
config.HistoryAccessor.enabled = False
shell = InteractiveShell.instance(config=config)
shell.run_line_magic("load_ext", "ddlab")
assert "dd" in shell.magics_manager.magics["line"] and "dd" in shell.magics_manager.magics["cell"]
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"ddlab {ddlab.__version__}"), done.stdout
    assert done.stderr == ""
