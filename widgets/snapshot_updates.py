"""Keeping each displayed widget's static snapshot as current as the notebook's code left it.

Why: a snapshot is rendered when its widget is displayed, but notebooks change widgets later
(a cell moves a slider to the fixed point, clicks a lattice cell, moves the explorer and lets
it settle); an exported file would show the figure as it first appeared.  So every displayed
widget tree is watched (its traits, and its bokeh documents), and at the end of a cell that
changed it, its output is updated with a fresh snapshot (``update_display_data``, which
nbclient and JupyterLab both apply, across cells too).

Only changes made by a cell's code count: a change from the browser (dragging a slider,
Play) happens outside any cell and waits for the next cell that changes the widget, so an
interaction is never interrupted.  The update is sent twice, first without the widget view:
JupyterLab then disposes the old view and builds one new view, where a single update would
build a second view beside the first and never dispose the first.  A bokeh plot's new view
draws from the widget's render bundle, so that is brought up to date first (jupyter_bokeh's
existing view redraws on that change too; when its first render is still under way, bokehjs
reports "configuration is missing" from the abandoned render in the browser console, and the
new render draws the plot: ``tests/ui/conftest.py``, ``ABANDONED_BOKEH_RENDER``).

Needs ipykernel's display publisher (its message hooks) and IPython's cell events; elsewhere
the snapshots stay those of display time.
"""
from __future__ import annotations

import uuid

import traitlets

__all__ = ["SnapshotUpdates"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class SnapshotUpdates:
    """The widget displays of one kernel and their snapshots (see the module's docstring)."""

    def __init__(self, shell, render):
        self.shell, self.render = shell, render
        self.formatted: dict[str, object] = {}     # model id -> widget just given a snapshot
        self.displays: dict[str, dict] = {}        # display id -> {"widget", "html", "dirty"}
        self.watching: dict[int, set[str]] = {}    # id(widget or document) -> display ids
        self.in_cell = False

    # -- hooks into the kernel ------------------------------------------------------------------
    def install(self) -> bool:
        """Hook into the kernel's display messages and cell events; whether it could."""
        publisher = getattr(self.shell, "display_pub", None)
        if not hasattr(publisher, "register_hook") or not hasattr(self.shell, "events"):
            return False
        publisher.register_hook(self.on_message)
        self.shell.events.register("pre_run_cell", self.cell_starts)
        self.shell.events.register("post_run_cell", self.cell_ends)
        return True

    def uninstall(self) -> None:
        publisher = getattr(self.shell, "display_pub", None)
        if hasattr(publisher, "unregister_hook"):
            publisher.unregister_hook(self.on_message)
        for event, callback in (("pre_run_cell", self.cell_starts),
                                ("post_run_cell", self.cell_ends)):
            try:
                self.shell.events.unregister(event, callback)
            except ValueError:
                pass

    def snapshot(self, widget) -> str | None:
        """The formatter: render, and remember which widget the coming display shows."""
        html = self.render(widget)
        if html is not None:
            self.formatted[widget.model_id] = widget
        return html

    def on_message(self, msg):
        """A display leaving the kernel: one that carries a snapshot is given a display id
        (if it has none) and watched."""
        content = msg.get("content", {})
        view = (content.get("data") or {}).get(WIDGET_VIEW)
        widget = self.formatted.pop(view["model_id"], None) if view else None
        if widget is not None and msg["header"]["msg_type"] in ("display_data",
                                                                  "update_display_data"):
            transient = content.setdefault("transient", {})
            display_id = transient.setdefault("display_id", f"ddlab-{uuid.uuid4().hex}")
            self._watch(display_id, widget, content["data"].get("text/html"))
        return msg

    def cell_starts(self, info=None) -> None:
        self.in_cell = True

    def cell_ends(self, result=None) -> None:
        """Refresh the snapshot of every display the cell changed."""
        self.in_cell = False
        self.formatted.clear()   # (a result shown as the cell's value, not by display(), is
        #                           never a display message: nothing to wait for)
        for display_id in [d for d, entry in self.displays.items() if entry["dirty"]]:
            self._refresh(display_id)

    # -- watching -------------------------------------------------------------------------------
    def _watch(self, display_id: str, widget, html: str | None) -> None:
        self.displays[display_id] = {"widget": widget, "html": html, "dirty": False}
        self._observe(display_id, widget)

    def _observe(self, display_id: str, widget) -> None:
        """Watch every part of ``widget`` (parts added since are watched at each refresh)."""
        for part in _tree(widget):
            key = id(part)
            if key not in self.watching:
                self.watching[key] = set()
                part.observe(self._changed, names=traitlets.All)
                document = getattr(getattr(part, "_model", None), "document", None)
                if document is not None and id(document) not in self.watching:
                    self.watching[id(document)] = set()
                    document.on_change(self._document_changed)
                if document is not None:
                    self.watching[id(document)].add(display_id)
            self.watching[key].add(display_id)

    def _changed(self, change) -> None:
        owner = change["owner"]
        if change["name"] == "comm" and change["new"] is None:   # closed: nothing to show
            for display_id in self.watching.get(id(owner), ()):
                entry = self.displays.get(display_id)
                if entry is not None and entry["widget"] is owner:
                    self._forget(display_id)
            return
        if self.in_cell:
            self._mark(id(owner))

    def _document_changed(self, event) -> None:
        if self.in_cell:
            self._mark(id(event.document))

    def _mark(self, key: int) -> None:
        for display_id in self.watching.get(key, ()):
            if display_id in self.displays:
                self.displays[display_id]["dirty"] = True

    def _forget(self, display_id: str) -> None:
        self.displays.pop(display_id, None)
        for ids in self.watching.values():
            ids.discard(display_id)

    def _refresh(self, display_id: str) -> None:
        from IPython.display import update_display

        entry = self.displays[display_id]
        entry["dirty"] = False
        widget = entry["widget"]
        if widget.comm is None:
            self._forget(display_id)
            return
        html = self.render(widget)
        if html is None or html == entry["html"]:
            return
        bundle = widget._repr_mimebundle_()
        bundle["text/html"] = html
        entry["html"] = html
        self._observe(display_id, widget)
        for part in _tree(widget):
            # a bokeh view draws its plot from the widget's render bundle, then applies the
            # changes sent while it exists: the new view must start from the plot as it is
            if hasattr(part, "update_from_model") and getattr(part, "_model", None) is not None:
                part.update_from_model(part._model)
        update_display({"text/plain": bundle.get("text/plain", "")}, raw=True,
                       display_id=display_id)
        update_display(bundle, raw=True, display_id=display_id)


def _tree(widget):
    """``widget`` and every widget inside it."""
    todo, seen = [widget], set()
    while todo:
        part = todo.pop()
        if id(part) in seen:
            continue
        seen.add(id(part))
        yield part
        todo.extend(getattr(part, "children", ()) or ())
