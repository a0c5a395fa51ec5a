"""A bokeh widget whose changes during one explorer move reach the browser as one message.

Why: ``jupyter_bokeh.BokehModel`` sends every document change (a stream, a property set) as
its own PATCH-DOC message, three or more comm messages each, serialized one by one; a move
makes eight to ten such changes over the three plots, and sending them was a third of the
explorer's own cost per move (2.2 of 6.8 ms on Twitter, ``benchmarks/NOTES.md``).  Inside
:func:`batched`, the changes are collected and sent as one PATCH-DOC per plot, which bokeh's
protocol allows (a patch is a list of events) and the front end applies in order.
"""
from __future__ import annotations

import json
from contextlib import ExitStack, contextmanager

from ._deps import require_lab

require_lab()   # one clear line, not bokeh's ModuleNotFoundError

from bokeh.protocol import Protocol  # noqa: E402
from jupyter_bokeh import BokehModel  # noqa: E402

__all__ = ["BatchedBokehModel", "batched"]


class BatchedBokehModel(BokehModel):
    """A :class:`jupyter_bokeh.BokehModel` that can hold its document's changes (see
    :meth:`hold`); outside a hold it sends each change at once, as its base class does."""

    _held: list | None = None
    _detached = False

    def close(self) -> None:
        """Close once: the base class unhooks the plot from its document on every call, and
        a second call (ipywidgets' ``__del__`` after an explicit close) raised ``KeyError``
        into the garbage collector ("Exception ignored", with the whole document's repr)."""
        if self._detached:
            return
        self._detached = True
        super().close()

    @contextmanager
    def hold(self):
        """Collect the document's changes in the block; send them as one patch at its end
        (also when the block raises: what changed is sent, never lost)."""
        if self._held is not None:      # nested: the outer hold sends
            yield
            return
        self._held = []
        try:
            yield
        finally:
            events, self._held = self._held, None
            if events:
                self._send_patch(events)

    def _document_patched(self, event) -> None:
        if event.setter is self:
            return
        if self._held is not None:
            self._held.append(event)
        else:
            self._send_patch([event])

    def _send_patch(self, events: list) -> None:
        # the base class's message layout (header, metadata, content, then each buffer's
        # reference and bytes), for a list of events instead of one
        msg = Protocol().create("PATCH-DOC", events)
        self.send({"msg": "patch", "payload": msg.header_json})
        self.send({"msg": "patch", "payload": msg.metadata_json})
        self.send({"msg": "patch", "payload": msg.content_json})
        for buffer in msg.buffers:
            self.send({"msg": "patch", "payload": json.dumps(buffer.ref)})
            self.send({"msg": "patch"}, [buffer.to_bytes()])


@contextmanager
def batched(*widgets):
    """Hold every :class:`BatchedBokehModel` among ``widgets`` for the block."""
    with ExitStack() as stack:
        for widget in widgets:
            if isinstance(widget, BatchedBokehModel):
                stack.enter_context(widget.hold())
        yield
