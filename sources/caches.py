"""Where ddlab keeps what it computes once per machine and reads again: cached window batches
(:mod:`.window_cache`) and the JVM class archive (:mod:`.class_archive`)."""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """Where cached window batches live (see :mod:`.window_cache`); ``$DDLAB_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/ddlab`` or ``~/.cache/ddlab``."""
    if os.environ.get("DDLAB_CACHE_DIR"):
        return Path(os.environ["DDLAB_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ddlab"
