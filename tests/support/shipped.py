"""The modules the wheel ships: those of the packages ``pyproject.toml`` declares.

The editable install maps ``ddlab`` to the repository root, so it also exposes folders the
wheel does not ship (``ddlab.benchmarks``...); tests that walk the package use this list, read
from pyproject.toml and the folders it maps (nothing imported), so they check what a user
installs and nothing more.  ``.ci/wheel`` checks the built wheel holds exactly these.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def declared_packages() -> dict[str, Path]:
    """``{package: its folder}`` from ``[tool.setuptools]`` of pyproject.toml."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        setup = tomllib.load(fh)["tool"]["setuptools"]
    return {name: ROOT / setup["package-dir"][name] for name in setup["packages"]}


def shipped_modules(main: bool = False) -> list[str]:
    """Every module of the declared packages (the packages themselves included), sorted;
    ``__main__`` modules only with ``main`` (importing one runs it)."""
    names = []
    for package, folder in declared_packages().items():
        names.append(package)
        names += [f"{package}.{path.stem}" for path in folder.glob("*.py")
                  if path.stem != "__init__" and (main or path.stem != "__main__")]
    return sorted(names)
