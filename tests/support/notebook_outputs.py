"""What an executed notebook showed its reader, as text: the prose of its markdown cells and the
outputs of its code cells (printed text, tables, and the values of the widgets it displayed).

Why here: the claims test (``tests/notebooks/test_claims.py``) checks each number a lesson's
prose states against what the executed lesson printed, and a reader sees more than stdout: a
DataFrame is an HTML table, a caption is an ``ipywidgets.HTML`` whose value lives in the
notebook's widget state.  Everything is read from the executed ``.ipynb`` document (nbformat),
never from a kernel.
"""
from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: widget traits a reader sees as text
_SHOWN_TRAITS = ("description", "value", "placeholder", "_options_labels")


def source(cell: dict) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def html_to_text(markup: str) -> str:
    """The text a browser shows for ``markup`` (tags dropped, entities decoded, cells and
    blocks separated by spaces)."""
    markup = re.sub(r"<(script|style)\b.*?</\1>", " ", markup, flags=re.S | re.I)
    markup = re.sub(r"<(br|/p|/tr|/div|/li|/h\d)\b[^>]*>", "\n", markup, flags=re.I)
    markup = re.sub(r"<(/td|/th)\b[^>]*>", " ", markup, flags=re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", markup))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


class _Tables(HTMLParser):
    """Every ``<table>`` of an HTML fragment as a list of rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_tables(markup: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(markup)
    return parser.tables


class ExecutedNotebook:
    """An executed notebook (a path to an ``.ipynb`` or its parsed JSON) read as its reader
    saw it."""

    def __init__(self, document: dict | str | Path, name: str | None = None):
        if isinstance(document, (str, Path)):
            name = name or Path(document).name
            document = json.loads(Path(document).read_text(encoding="utf-8"))
        self.document = document
        self.name = name or "notebook"
        self.cells: list[dict] = list(document["cells"])
        state = document.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {})
        self.widgets: dict = state.get("state", {})

    # -- prose ---------------------------------------------------------------------------------
    def markdown(self) -> str:
        """All markdown cells, in order, separated by blank lines."""
        return "\n\n".join(source(c) for c in self.cells if c["cell_type"] == "markdown")

    @property
    def parameters(self) -> dict:
        """The UPPER_CASE names the parameters cell (the first code cell) assigns."""
        cell = next(c for c in self.cells if c["cell_type"] == "code")
        ns: dict = {}
        exec(source(cell), ns)  # noqa: S102 - the notebook's own parameters cell
        return {k: v for k, v in ns.items() if k.isupper()}

    # -- outputs -------------------------------------------------------------------------------
    def code_cell(self, containing: str) -> dict:
        """The one code cell whose source contains ``containing``."""
        found = [c for c in self.cells if c["cell_type"] == "code" and containing in source(c)]
        if len(found) != 1:
            raise LookupError(f"{self.name}: {len(found)} code cells contain {containing!r} (need exactly one)")
        return found[0]

    def _widget_text(self, model_id: str, seen: set) -> list[str]:
        if model_id in seen or model_id not in self.widgets:
            return []
        seen.add(model_id)
        state = self.widgets[model_id].get("state", {})
        out = []
        for trait in _SHOWN_TRAITS:
            value = state.get(trait)
            if isinstance(value, str) and value:
                out.append(html_to_text(value) if "<" in value else value)
            elif trait == "_options_labels" and value:
                out.append(" ".join(map(str, value)))
            elif trait == "value" and isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append(str(value))
        for child in state.get("children", []) or []:
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                out.extend(self._widget_text(child[len("IPY_MODEL_"):], seen))
        for output in state.get("outputs", []) or []:         # an ipywidgets.Output's captured outputs
            out.extend(self._output_texts(output, seen))
        return out

    def _output_texts(self, output: dict, seen: set) -> list[str]:
        if output.get("output_type") == "stream":
            text = output.get("text", "")
            return [text if isinstance(text, str) else "".join(text)]
        data = output.get("data", {})
        if WIDGET_VIEW in data:
            return self._widget_text(data[WIDGET_VIEW]["model_id"], seen)
        if "text/html" in data:
            markup = data["text/html"]
            return [html_to_text(markup if isinstance(markup, str) else "".join(markup))]
        if "text/plain" in data:
            text = data["text/plain"]
            return [text if isinstance(text, str) else "".join(text)]
        return []

    def text(self, containing: str | None = None) -> str:
        """What the reader sees of the outputs of one code cell (the one whose source contains
        ``containing``), or of every code cell: printed text, tables, widget values."""
        cells = [self.code_cell(containing)] if containing else [c for c in self.cells if c["cell_type"] == "code"]
        seen: set = set()
        parts = [t for c in cells for o in c.get("outputs", []) for t in self._output_texts(o, seen)]
        return "\n".join(parts)

    def raw(self, containing: str, mime: str = "text/html") -> str:
        """The ``mime`` data of one code cell's outputs as written (an SVG's attributes, say),
        joined."""
        cell = self.code_cell(containing)
        parts = [o.get("data", {}).get(mime) for o in cell.get("outputs", [])]
        return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts if p)

    def tables(self, containing: str) -> list[list[list[str]]]:
        """The HTML tables (DataFrames, ``to_html``) one code cell displayed, including those
        inside widgets, as rows of cell texts."""
        cell = self.code_cell(containing)
        found = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            markup = data.get("text/html")
            if markup:
                found.extend(html_tables(markup if isinstance(markup, str) else "".join(markup)))
            elif WIDGET_VIEW in data:
                found.extend(self._widget_tables(data[WIDGET_VIEW]["model_id"], set()))
        return found

    def _widget_tables(self, model_id: str, seen: set) -> list:
        if model_id in seen or model_id not in self.widgets:
            return []
        seen.add(model_id)
        state = self.widgets[model_id].get("state", {})
        found = []
        if isinstance(state.get("value"), str) and "<table" in state["value"]:
            found.extend(html_tables(state["value"]))
        for child in state.get("children", []) or []:
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                found.extend(self._widget_tables(child[len("IPY_MODEL_"):], seen))
        for output in state.get("outputs", []) or []:
            markup = output.get("data", {}).get("text/html")
            if markup:
                found.extend(html_tables(markup if isinstance(markup, str) else "".join(markup)))
        return found

    def table(self, containing: str, index: int = 0) -> dict:
        """One displayed table as ``{row label: {column label: cell text}}`` (the first column
        is the row label; a DataFrame's index-name header row is skipped)."""
        rows = self.tables(containing)[index]
        header, body = rows[0], rows[1:]
        if body and len(body[0]) and all(not c for c in body[0][1:]) and len(body[0]) == len(header):
            body = body[1:]                                   # pandas' index-name row
        return {r[0]: dict(zip(header[1:], r[1:])) for r in body if r}

    def find(self, pattern: str, containing: str | None = None, index: int | None = None):
        """The groups of the one match of ``pattern`` in the outputs (of one cell), as numbers
        where they read as numbers; ``index`` picks one of several matches."""
        text = self.text(containing)
        matches = list(re.finditer(pattern, text))
        where = f" in the outputs of the cell containing {containing!r}" if containing else ""
        if not matches:
            raise LookupError(f"{self.name}: no match for {pattern!r}{where}")
        if index is None and len(matches) > 1:
            raise LookupError(f"{self.name}: {len(matches)} matches for {pattern!r}{where}; pass index=")
        groups = tuple(as_number(g) for g in matches[index or 0].groups())
        return groups[0] if len(groups) == 1 else groups


def as_number(text):
    """'3,228' -> 3228, '0.48' -> 0.48, '12%' -> 12.0; other text unchanged."""
    if text is None:
        return None
    plain = text.replace(",", "").replace("\u2212", "-").rstrip("%").strip()
    if re.fullmatch(r"-?\d+", plain):
        return int(plain)
    if re.fullmatch(r"-?\d*\.\d+(e-?\d+)?|-?\d+e-?\d+", plain):
        return float(plain)
    return text
