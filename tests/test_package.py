"""The top-level package as the README presents it: ``ddlab.lattice`` and ``ddlab.algorithms``
are real modules (in the editable install and in the wheel: ``.ci/wheel``), and ``dir(ddlab)``
shows the public API, not the package's implementation names."""
from __future__ import annotations

import importlib
import subprocess
import sys

import ddlab


def test_lattice_is_importable_as_the_readme_documents():
    from ddlab.lattice import glb, leq, lub

    assert leq((0, 1), (1, 1)) and lub((0, 2), (1, 1)) == (1, 2) and glb((0, 2), (1, 1)) == (0, 1)
    module = importlib.import_module("ddlab.lattice")
    assert module.__name__ == "ddlab.lattice" and module.__file__.endswith("lattice.py")
    assert ddlab.lattice is module and module.leq is ddlab.engine.lattice.leq


def test_algorithms_is_a_module_of_its_own():
    module = importlib.import_module("ddlab.algorithms")
    assert module.__name__ == "ddlab.algorithms"            # not ddlab.engine.algorithms
    assert module.connected_components is ddlab.engine.algorithms.connected_components
    assert set(module.__all__) == set(ddlab.engine.algorithms.__all__)


def test_dir_shows_the_public_api():
    names = dir(ddlab)
    assert {"Dataflow", "Collection", "View", "algorithms", "lattice", "__version__"} <= set(names)
    assert not {"annotations", "_sys", "_engine_all", "engine"} & set(names)
    assert [n for n in names if n.startswith("_")] == ["__version__"]


def test_a_fresh_interpreter_sees_the_same():
    code = ("import ddlab, sys; from ddlab.lattice import leq; from ddlab.algorithms import "
            "connected_components; print(sys.modules['ddlab.algorithms'].__name__, "
            "'engine' in dir(ddlab))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ddlab.algorithms", "False"]
