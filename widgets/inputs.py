"""What the explorer is given (a feed, the collections it shows, a components program),
checked before anything is built, so a refused explorer adds nothing to the flow.

Why apart: each check names what was wrong in the user's terms (which collection, which flow),
and the explorer's constructor then reads as the layout it builds.
"""
from __future__ import annotations

from ddlab.engine import Collection, DataflowError, View

__all__ = ["checked_feed", "named_collections", "check_one_flow", "as_view", "chosen_loop"]


def checked_feed(feed):
    """``(feed, its flow)``; a feed is anything with ``seek`` and ``flow`` (a WindowFeed)."""
    if not hasattr(feed, "seek") or not hasattr(feed, "flow"):
        raise TypeError(f"explore: feed must be a WindowFeed, not {type(feed).__name__}")
    return feed, feed.flow


def named_collections(collections) -> dict:
    """A Collection or View becomes ``{its name: it}``; a mapping must not be empty."""
    if isinstance(collections, (Collection, View)):
        collections = {getattr(collections, "name", None) or collections.label: collections}
    if not isinstance(collections, dict) or not collections:
        raise TypeError("explore: collections must be a Collection, a View, or a non-empty "
                        "mapping name -> Collection/View")
    return collections


def check_one_flow(flow, collections: dict, program) -> None:
    """Every collection and program part is a Collection or View of ``flow``."""
    given = [(f"collection {n!r}", o) for n, o in collections.items()]
    if program is not None:
        given += list(program.parts().items())
    for what, obj in given:
        if not isinstance(obj, (Collection, View)):
            raise TypeError(f"explore: {what} must be a Collection or a View, not "
                            f"{type(obj).__name__}")
        if isinstance(obj, Collection) and obj.flow is not flow:
            raise DataflowError(f"explore: {what} belongs to another Dataflow than the feed's")


def as_view(obj, what: str):
    """A View for ``obj`` (a View, or a Collection given a view now)."""
    if isinstance(obj, View):
        return obj
    if isinstance(obj, Collection):
        try:
            return obj.view(name=f"explorer view of {obj.name}")
        except DataflowError as err:
            raise DataflowError(
                f"explore: {what} is a Collection without a view and the flow has already "
                f"stepped ({err}). Pass its View instead (make it with .view() before the "
                f"first step).") from err
    raise TypeError(f"explore: {what} must be a Collection or a View, not {type(obj).__name__}")


def chosen_loop(flow, loop, default):
    """``loop`` checked against the flow's loops; ``"auto"`` gives ``default``."""
    if loop == "auto":
        return default
    if loop is not None and loop not in flow.loops():
        raise ValueError(f"explore: loop {loop!r} is not a loop of this flow; its loops are "
                         f"{flow.loops()}")
    return loop
