"""A user function that fails on demand, as a bug in user code would inside an epoch.

``armed = Armed(); edges.filter_columns(armed.check).view()``; after ``armed.on = True`` the
next epoch that runs the filter raises inside the engine (an ``OperatorError``), which rolls
the epoch back; ``armed.on = False`` makes it pass everything again.
"""
from __future__ import annotations


class Armed:
    def __init__(self, message: str = "a user function failed on purpose"):
        self.on, self.message = False, message

    def check(self, src, dst):
        """A column filter keeping every row, or raising once armed."""
        if self.on:
            raise ValueError(self.message)
        return src == src
