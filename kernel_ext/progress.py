"""The progress row the magics show for long operations.  It is public in the widgets layer
(``ddlab.widgets.Progress``, :mod:`ddlab.widgets.progress`), where notebooks import it; this
name stays for the magics' modules and older imports."""
from __future__ import annotations

from ddlab.widgets.progress import NullProgress, Progress, in_kernel

__all__ = ["Progress", "NullProgress", "in_kernel"]
