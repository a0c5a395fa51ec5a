"""A static snapshot of a widget, carried in the same output as the live widget, so a notebook
exported to HTML (``jupyter nbconvert --to html``, Jupyter Book) still shows its figures.

Why: a widget's output holds only a reference to a model that lives in the kernel, so an
exported notebook shows nothing where the figure was.  A display's mimebundle may hold several
representations of one object, and each front end picks the one it prefers: JupyterLab (and
the classic notebook) show the live widget view, nbconvert falls back to ``text/html`` when the
notebook carries no widget state, which is how JupyterLab saves by default.  So every widget
displayed in a kernel gets a ``text/html`` representation rendered from its state at that
moment: a bokeh plot as bokeh's standalone embed (BokehJS inline, no network), HTML widgets as
their HTML, controls as ``description: value``, boxes laid out as rows and columns.

:func:`register` adds it to IPython's ``text/html`` formatter for every ``DOMWidget``
(``import ddlab`` does it in a Jupyter kernel); :func:`snapshot_html` is the rendering.

Limits: a change made from the browser (a slider dragged, Play) reaches the file with the
next cell that changes the widget (:mod:`.snapshot_updates`); an ``Output`` widget shows
what the kernel knows of its outputs (what a ``with out:`` block displays is captured by the
front end, not the kernel); a notebook saved *with* widget state
(JupyterLab's "Save Widget State Automatically", or ``jupyter nbconvert --execute``, which
stores it unless given ``--ExecutePreprocessor.store_widget_state=False``) is exported with
the widget manager, which nbconvert loads from the network.
"""
from __future__ import annotations

import base64
import html

__all__ = ["snapshot_html", "register", "unregister", "SNAPSHOT_CLASS"]

#: The class of a snapshot's outer element (what a test of an exported page looks for).
SNAPSHOT_CLASS = "ddlab-static"
_BOX_GAP = "4px 12px"
_NOTE = ("<!-- ddlab: a static snapshot of the widget below, for exported notebooks; "
         "a live Jupyter front end shows the widget itself -->")


def snapshot_html(widget) -> str | None:
    """HTML showing ``widget`` (and everything inside it) as it is now, or ``None`` when there
    is nothing to show (a widget with no view, or one hidden by its layout)."""
    inner = _render(widget)
    if inner is None:
        return None
    return f"{_NOTE}<div class='{SNAPSHOT_CLASS}'>{inner}</div>"


# -- rendering, one widget kind at a time --------------------------------------------------------

def _render(widget) -> str | None:
    if _hidden(widget):
        return None
    for kind, render in _renderers():
        if isinstance(widget, kind):
            return render(widget)
    return None


def _hidden(widget) -> bool:
    layout = getattr(widget, "layout", None)
    return layout is not None and (getattr(layout, "display", None) == "none"
                                   or getattr(layout, "visibility", None) == "hidden")


def _children(widget) -> list[str]:
    return [part for part in (_render(child) for child in widget.children) if part]


def _box(widget) -> str | None:
    parts = _children(widget)
    if not parts:
        return None
    import ipywidgets as w

    column = isinstance(widget, w.VBox) or "column" in (widget.layout.flex_flow or "")
    flow = "column" if column else "row wrap"
    return (f"<div style='display:flex;flex-flow:{flow};gap:{_BOX_GAP};"
            f"align-items:flex-start'>{''.join(parts)}</div>")


def _accordion(widget) -> str | None:
    titles = list(getattr(widget, "titles", ()) or ())
    parts = []
    for i, child in enumerate(widget.children):
        body = _render(child)
        if body is None:
            continue
        title = titles[i] if i < len(titles) and titles[i] else f"part {i + 1}"
        opened = " open" if widget.selected_index == i else ""
        parts.append(f"<details{opened}><summary>{html.escape(str(title))}</summary>"
                     f"{body}</details>")
    return "".join(parts) or None


def _selected_child(widget) -> str | None:
    """A Tab or a Stack shows its selected child."""
    i = widget.selected_index
    return _render(widget.children[i]) if i is not None and i < len(widget.children) else None


def _html(widget) -> str | None:
    if not widget.value and not widget.description:
        return None
    return f"<div>{_label(widget)}{widget.value}</div>"


def _text_label(widget) -> str | None:
    return f"<div>{html.escape(str(widget.value))}</div>" if widget.value else None


def _button(widget) -> str:
    colour = getattr(widget.style, "button_color", None) or "#eeeeee"
    return (f"<span style='display:inline-block;padding:2px 8px;border:1px solid #bbb;"
            f"border-radius:2px;background:{html.escape(str(colour))};font-size:13px'>"
            f"{html.escape(widget.description or '')}</span>")


def _control(widget) -> str | None:
    """A control shows the state it is in: ``description: value``."""
    if hasattr(widget, "label") and hasattr(widget, "options"):
        value = widget.label                       # selection widgets: the chosen label
        if isinstance(value, tuple):               # a multiple selection
            value = ", ".join(str(v) for v in value)
    elif hasattr(widget, "value"):
        value = widget.value
    else:
        return None
    if value is None or value == "":
        value = "–"
    return (f"<span style='font-size:13px;color:#333'>{_label(widget)}"
            f"<b>{html.escape(str(value))}</b></span>")


def _progress(widget) -> str:
    share = 0.0 if not widget.max else (widget.value - widget.min) / (widget.max - widget.min)
    return (f"<span style='font-size:13px'>{_label(widget)}<span style='display:inline-block;"
            f"width:160px;height:8px;background:#eee;vertical-align:middle'><span "
            f"style='display:block;height:8px;width:{100 * max(0.0, min(share, 1.0)):.0f}%;"
            f"background:#2196f3'></span></span></span>")


def _image(widget) -> str | None:
    if not widget.value:
        return None
    data = base64.b64encode(bytes(widget.value)).decode("ascii")
    size = "".join(f" {k}='{html.escape(str(v))}'" for k, v in
                   (("width", widget.width), ("height", widget.height)) if v)
    fmt = "svg+xml" if widget.format == "svg" else widget.format
    return f"<img src='data:image/{html.escape(fmt)};base64,{data}'{size}>"


def _output(widget) -> str | None:
    parts = [part for part in (_output_item(o) for o in widget.outputs) if part]
    return "".join(parts) or None


def _output_item(output: dict) -> str | None:
    kind = output.get("output_type")
    if kind == "stream":
        return f"<pre>{html.escape(output.get('text', ''))}</pre>"
    data = output.get("data") or {}
    if "text/html" in data:
        return _joined(data["text/html"])
    if "image/png" in data:
        return f"<img src='data:image/png;base64,{_joined(data['image/png'])}'>"
    if "image/svg+xml" in data:
        return _joined(data["image/svg+xml"])
    if "text/plain" in data:
        return f"<pre>{html.escape(_joined(data['text/plain']))}</pre>"
    return None


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _bokeh(widget) -> str | None:
    """Bokeh's standalone embed of the plot as it is now (the page loads BokehJS once)."""
    from bokeh.embed import components

    from .bokehjs import ensure_bokehjs

    model = getattr(widget, "_model", None)
    if model is None:
        return None
    ensure_bokehjs()
    script, div = components(model)
    return f"<div>{div}{script}</div>"


def _label(widget) -> str:
    text = getattr(widget, "description", "") or ""
    return f"<span style='color:#555'>{html.escape(text)}: </span>" if text else ""


_RENDERERS: list | None = None


def _renderers() -> list:
    """(widget class, renderer), most specific first; built on first use, so registering
    the formatter imports neither ipywidgets nor jupyter_bokeh."""
    global _RENDERERS
    if _RENDERERS is None:
        import ipywidgets as w

        kinds = []
        try:
            from jupyter_bokeh import BokehModel
        except ImportError:   # without the lab extra there is no bokeh widget to show
            pass
        else:
            kinds.append((BokehModel, _bokeh))
        _RENDERERS = kinds + [
            (w.Accordion, _accordion), (w.Tab, _selected_child), (w.Stack, _selected_child),
            (w.Box, _box), (w.HTML, _html), (w.HTMLMath, _html), (w.Label, _text_label),
            (w.Button, _button), (w.Play, lambda _: None), (w.IntProgress, _progress),
            (w.FloatProgress, _progress), (w.Image, _image), (w.Output, _output),
            (w.ValueWidget, _control)]
    return _RENDERERS


# -- the formatter -----------------------------------------------------------------------------

_WIDGET = ("ipywidgets.widgets.domwidget", "DOMWidget")
_UPDATES: dict[int, object] = {}   # id(shell) -> its SnapshotUpdates


def register(ip) -> None:
    """Give every ``DOMWidget`` displayed in ``ip`` a ``text/html`` snapshot (a live front
    end still shows the widget: it prefers the widget's own representation), kept current
    at the end of each cell that changes the widget where the kernel allows it
    (:mod:`.snapshot_updates`).  Registering twice changes nothing."""
    from .snapshot_updates import SnapshotUpdates

    if id(ip) in _UPDATES:
        return
    updates = SnapshotUpdates(ip, snapshot_html)
    updates.install()
    _UPDATES[id(ip)] = updates
    ip.display_formatter.formatters["text/html"].for_type_by_name(*_WIDGET, updates.snapshot)


def unregister(ip) -> None:
    """Remove what :func:`register` added."""
    updates = _UPDATES.pop(id(ip), None)
    if updates is not None:
        updates.uninstall()
    ip.display_formatter.formatters["text/html"].pop(".".join(_WIDGET), None)
