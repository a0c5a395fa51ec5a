"""Run by ``.ci/wheel`` in a venv holding only the installed wheel: the installed ``ddlab``
has exactly the modules of the packages pyproject.toml declares (``tests/support/shipped.py``
reads them from the checkout) and each of them imports."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

repo = Path(sys.argv[1])
sys.path.insert(0, str(repo / "tests" / "support"))
from shipped import declared_packages, shipped_modules  # noqa: E402

import ddlab  # noqa: E402

if Path(ddlab.__file__).resolve().is_relative_to(repo.resolve()):
    sys.exit(f"ddlab was imported from the checkout ({ddlab.__file__}), not from the wheel")
installed = []
for package in declared_packages():
    folder = Path(importlib.util.find_spec(package).submodule_search_locations[0])
    installed.append(package)
    installed += [f"{package}.{p.stem}" for p in folder.glob("*.py") if p.stem != "__init__"]
expected = shipped_modules(main=True)
missing, extra = sorted(set(expected) - set(installed)), sorted(set(installed) - set(expected))
if missing or extra:
    sys.exit(f"the wheel differs from the declared packages: missing {missing}, extra {extra}")
failed = []
for name in expected:
    if name.endswith("__main__"):
        continue
    try:
        importlib.import_module(name)
    except ImportError as err:  # only behind an extra, and then saying which
        if "pip install 'ddlab[" not in str(err):
            failed.append(f"{name}: {err!r}")
if failed:
    sys.exit("modules that do not import from the wheel:\n" + "\n".join(failed))
if not (Path(ddlab.__file__).parent / "py.typed").exists():
    sys.exit("the wheel lacks py.typed (type checkers would skip ddlab)")
from ddlab.lattice import glb, leq, lub  # noqa: E402,F401  (the README's names)
from ddlab.algorithms import connected_components  # noqa: E402,F401
print(f"ok: {len(expected)} modules shipped and importable from {ddlab.__file__}")
