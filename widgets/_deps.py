"""One clear line when the plotting dependencies are missing (not a raw ModuleNotFoundError)."""
from __future__ import annotations

from importlib.util import find_spec

#: The packages the explorer needs beyond ddlab's core dependencies.
LAB_PACKAGES = ("bokeh", "jupyter_bokeh", "ipywidgets")


class MissingLabDependency(ImportError):
    """``ddlab.widgets`` needs the ``lab`` extra."""


def require_lab(find=find_spec) -> None:
    """Raise :class:`MissingLabDependency` naming the fix if a lab package is not installed."""
    missing = [name for name in LAB_PACKAGES if find(name) is None]
    if missing:
        raise MissingLabDependency(
            f"ddlab.widgets needs {', '.join(missing)}: pip install 'ddlab[lab]'")
