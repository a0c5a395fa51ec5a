"""Engine switches.

``fast_paths`` turns on the specialised code paths (packed sort keys, key-only merges of
traces within an epoch, skipping sorts of already sorted data, the presorted min/max).  Each
has a general path that computes the same thing the plain way; tests run programs both ways
and compare (``use_fast_paths(False)``).  ``DDLAB_FAST_PATHS=0`` turns them off globally.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

#: The iteration bound of every loop unless its ``max_iterations`` (or the Dataflow's) says
#: otherwise: a loop still changing after this many iterations raises NonConvergenceError.
DEFAULT_MAX_ITERATIONS = 10_000

fast_paths: bool = os.environ.get("DDLAB_FAST_PATHS", "1") != "0"


@contextmanager
def use_fast_paths(enabled: bool):
    """Run a block with the fast paths on or off."""
    global fast_paths
    previous, fast_paths = fast_paths, enabled
    try:
        yield
    finally:
        fast_paths = previous
