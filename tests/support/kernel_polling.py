"""A notebook client that cannot lose a kernel's reply for the length of the cell timeout.

Why: in about half of the suite's runs one notebook of the 16 stood still for 300 s (nbmake's
cell timeout) and then went on as if nothing had happened.  Reproduced by running lessons 08
and 09 again and again, three at a time (9 stalls in 322 runs, each a wait of 300 s for the
reply to a cell that displays widgets), and placed:

- the kernel was idle in every thread, and answered a ``kernel_info_request`` sent on its shell
  port from another client at once: it had sent the cell's reply;
- the waiting client's shell socket had no send pending and one receive waiting, and its TCP
  queues were empty: the reply was already in the client's socket;
- the cell ended exactly 300 s after it was sent, without an error.

So the client lost the wake-up of a message that had arrived.  ``zmq.asyncio`` waits on the
socket's file descriptor, which is edge-triggered: whatever reads the socket's events between
the message's arrival and the event loop's wait clears the edge, and the wait then lasts until
its timeout, when pyzmq's poll looks once more (``poll(0)``), finds the message and returns it.
jupyter/nbclient#312 reports the same stall after widget cells.

The fix here waits in slices of :data:`POLL_SLICE_S`: each slice ends with that same last look,
so a lost wake-up costs at most one slice, and the cell's own timeout is kept.  It changes no
message and no order: a slice that finds nothing waits again.
"""
from __future__ import annotations

import time
from queue import Empty

from nbclient import NotebookClient

#: seconds one wait for a kernel message lasts before it looks at the socket itself
POLL_SLICE_S = 1.0

#: messages found by a slice's last look after a whole slice of waiting (a lost wake-up, or a
#: message that arrived just then): for diagnosis
RECOVERED = {"messages": 0}


def poll_in_slices(channel, slice_s: float = POLL_SLICE_S) -> None:
    """Make ``channel.get_msg(timeout)`` (a jupyter_client asyncio channel) wait in slices of
    ``slice_s`` seconds up to ``timeout`` (``None``: without end), raising ``Empty`` as before
    when the whole timeout passes with nothing."""
    original = channel.get_msg

    async def get_msg(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            wait = slice_s if left is None else min(slice_s, left)
            began = time.monotonic()
            try:
                msg = await original(timeout=wait)
            except Empty:
                if left is not None and left <= slice_s:
                    raise
                continue
            if time.monotonic() - began >= wait:
                RECOVERED["messages"] += 1
            return msg

    channel.get_msg = get_msg


class SlicedPollClient(NotebookClient):
    """nbclient's client, its shell and IOPub waits in slices (:func:`poll_in_slices`)."""

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.shell_channel, kc.iopub_channel):
            poll_in_slices(channel)
        return kc
