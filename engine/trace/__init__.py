"""Traces: the indexed, multi-versioned state behind arrangements.

One module per concept:

- :mod:`.layout`: the packed layout (all fields of a run of updates in one int64 matrix);
- :mod:`.batches`: :class:`TraceBatch`, the immutable key-sorted runs of a spine;
- :mod:`.rows`: :class:`Rows`, updates gathered for a reader;
- :mod:`.lookup`: finding keys' rows in sorted batches, few keys or many;
- :mod:`.recent`: the recent rows of small inserts and the cached histories (Python-side);
- :mod:`.spine`: :class:`Trace`, the spine itself (insert, merge, compact, read);
- :mod:`.entered`: :class:`EnteredTrace`, an outer trace read from inside loops;
- :mod:`.reader`: :class:`TraceReader`, what readers may ask, implemented by both.
"""
from .batches import TraceBatch
from .entered import EnteredTrace
from .reader import TraceReader
from .rows import Rows
from .spine import Trace

__all__ = ["Trace", "EnteredTrace", "TraceReader", "TraceBatch", "Rows"]
