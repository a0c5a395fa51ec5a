"""``ddlab.algorithms``: the graph algorithms of the Naiad papers (connected components, strongly
connected components, shortest paths, reachability, the top label per component), written
with the public operators.  The engine's :mod:`ddlab.engine.algorithms` under the short name
the README uses; the functions are the same objects."""
from ddlab.engine.algorithms import *  # noqa: F403  (its __all__)
from ddlab.engine.algorithms import __all__  # noqa: F401
