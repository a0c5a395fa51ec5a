"""``ddlab.lattice``: timestamps and their lattice (``leq``, ``lub``, ``glb``, the packed
priority coordinate, logical compaction).  The engine's :mod:`ddlab.engine.lattice` under the
short name the README uses; the functions are the same objects."""
from ddlab.engine.lattice import *  # noqa: F403  (its __all__)
from ddlab.engine.lattice import __all__  # noqa: F401
