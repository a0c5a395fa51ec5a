"""Handing the pages of freed temporaries back to the system after large operator runs.

Why: glibc's ``malloc`` raises its mmap threshold to the size of the largest block freed so
far (up to 32 MB).  After a large run's first big temporary is freed, the chunk-sized
temporaries that follow (a reduce's 4,096-key chunks, consolidations, queued batches) come
from the heap, and freeing them leaves their pages resident: the process's memory stays at
its high-water mark, and the next large run adds its own live data on top.  ``malloc_trim(0)``
returns the whole free pages inside the heap (``madvise``) without changing any setting of
the allocator, so the notebook's other libraries see the same ``malloc`` as before.

The price: pages given back are faulted in again when the heap reuses them, so it is done
only after runs large enough for that to be a few percent of their time.  Measured on the
3.4M-edge connected components from scratch (``python -m benchmarks cc --dataset
random-400k-3.4m``): see :data:`~ddlab.engine.tuning.RELEASE_AFTER_ROWS`.  Where the C library
has no ``malloc_trim`` (macOS, musl) this does nothing.
"""
from __future__ import annotations

import ctypes
import sys


def _malloc_trim():
    """glibc's ``malloc_trim``, or ``None`` where the process's C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def release_free_memory() -> bool:
    """Return the free pages of the heap to the system; whether the platform can."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


__all__ = ["release_free_memory"]
