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


#: folders of the checkout that are packages but run from the checkout only (not shipped)
NOT_SHIPPED = {"benchmarks"}


def test_every_package_folder_is_declared():
    """A subpackage missing from pyproject's ``packages`` imports in the editable install but
    not from the wheel (``ddlab.engine.why`` was)."""
    from shipped import declared_packages

    declared = declared_packages()
    folders = {path.resolve() for path in declared.values()}
    missing = [f"{name}.{sub.name}" for name, folder in declared.items()
               for sub in sorted(folder.iterdir())
               if (sub / "__init__.py").exists() and sub.resolve() not in folders
               and not (name == "ddlab" and sub.name in NOT_SHIPPED)]
    assert not missing, f"add to [tool.setuptools] packages and package-dir: {missing}"
