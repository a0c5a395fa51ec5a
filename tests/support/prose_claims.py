"""Keeping a notebook's prose and its output together: the numbers its markdown states, each
tied to what the executed notebook printed.

Each notebook ``notebooks/NAME.ipynb`` has a claims list beside it, ``notebooks/claims/KEY.py``
(KEY: the lesson's number, ``06``, or the notebook's name, ``demo``), holding ``CLAIMS``, a list
of three kinds of entries:

* ``Claim(phrase, compute)``: ``phrase`` is a piece of the markdown, copied exactly (white
  space and ``*`` emphasis aside); ``compute(nb)`` reads the executed notebook (an
  ``ExecutedNotebook``: ``nb.find(regex)``, ``nb.table(cell)``, ``nb.parameters`` ...) and
  returns the numbers the phrase states, in order.  A number in the phrase is compared at the
  precision it is written with: "0.07" against ``round(value, 2)``, "3,228" exactly, "11.5%"
  against a value in percent; ``at_least(v)``, ``at_most(v)`` and ``about(v, rel)`` state a
  bound instead.
* ``Quote(phrase, paper, words)``: a number taken from a paper; ``words`` are the paper's own
  (``paper``: ``"report"``, ``"cidr"`` or ``"cacm"``, the texts in ``../shared/papers``) and
  hold every number of ``phrase``.
* ``Exempt(phrase, why)``: a number that is neither measured nor quoted (a version, a name).

A lesson whose prose describes its run on a dataset of ``../shared/data`` sets ``REQUIRES_DATA``
(the file's path there): without the file the lesson runs on its fallback (CollegeMsg) and the
printed numbers are checked only where the file is.

The test (``tests/notebooks/test_claims.py``) checks, without executing anything, that every
phrase is in the markdown and that every number of the markdown outside code spans is covered
by an entry or is a reference or a name (Figure 6, Section 2.3, lesson 05, a year, a list
number; node 5, epoch 1, the edge 1-3, a time (0, 3)); then,
on the executed notebook, that every claim computes the numbers its phrase states.  Numbers
that measure something are written in digits, so that this check sees them.
"""
from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
CLAIMS_DIR = NOTEBOOKS / "claims"
PAPERS = REPO.parent / "shared" / "papers"
PAPER_FILES = {"report": "naiad-tech-report.txt", "cidr": "cidr2013-differential-dataflow.txt",
               "cacm": "cacm-timely-dataflow.txt"}

#: a number as prose writes it: 7, 3,228, 0.48, 11.5%, 10^7's 10 and 7, 24-hour's 24; not the
#: digits of a name (r2, log10, 01_differences)
NUMBER = re.compile(r"(?<![\w.\\/])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)(?![_\d])")
#: references, not measurements: Figure 6, Figures 14 and 15, Sections 2.3-2.4, lesson 05, CACM 2.2
REFERENCE = re.compile(
    r"\b(?:[Ff]igures?|Fig\.|[Tt]ables?|[Ss]ections?|Algorithms?|Examples?|[Ee]quations?|[Ll]essons?|Exercises?|"
    r"Appendix|CACM|SOSP|CIDR|VLDB|PLDI|OSDI|NSDI)\s+\d+(?:\.\d+)*"
    r"(?:\s*(?:,|and|-|–|to|or)\s*\d+(?:\.\d+)*)*")
#: names, not measurements: node 5, nodes 1 and 3, the edge 1-3, epoch 0, iterations 3, 5 and 11,
#: label 1, a path 1-2-4-5, a time or a record written as a tuple, (0, 3) or (5, 4, 2, 1); a
#: singular word names one number (iteration 12, 14 records: the 14 is a count), a plural a list
_N = r"\d+(?:\.\d+)?(?![,.]\d)"
_NAMED = ("node", "edge", "epoch", "iteration", "label", "priorit", "round", "slide", "move", "window", "position",
          "class", "step", "key", "version", "rule", "cell", "component", "user", "seed", "root", "column", "row",
          "field")
_SINGULAR = "|".join(rf"[{w[0].upper()}{w[0]}]{w[1:]}{'y' if w == 'priorit' else ''}" for w in _NAMED)
_PLURAL = "|".join(rf"[{w[0].upper()}{w[0]}]{w[1:]}{'ies' if w == 'priorit' else 'es' if w == 'class' else 's'}"
                   for w in _NAMED)
IDENTIFIER = re.compile(
    rf"\b(?:{_PLURAL})\s+{_N}(?:\s*(?:,|and|or|-|–|to)\s*{_N})*"
    rf"|\b(?:{_SINGULAR})\s+{_N}(?:[-–]{_N})?\b"
    rf"|\b{_N}(?:-{_N}){{2,}}|\({_N}(?:,\s*\(?{_N}\)?)+\)")
#: the rows of the report's Table 2, named by program and size: SSSP 1M, SCC 200K, CC 3.4M
TABLE2_ROW = re.compile(r"\b(?:SSSP|SCC|CC) \d+(?:\.\d+)?[MK]\b")
#: a year (June 2003, CIDR 2013, 2026-11-26), not a count (2000 records)
YEAR = re.compile(r"(?<![\d,.])(?:19[5-9]\d|20[0-3]\d)"
                  r"(?!\d|[.,]\d|\s+(?:records|edges|nodes|users|updates|rows|labels|x\b))")
LIST_NUMBER = re.compile(r"^\s*(?:#+\s*|\*\*)?\d+\.(?=\s)", re.M)
CODE_SPAN = re.compile(r"```.*?```|`[^`\n]+`", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
LINK_LESSON = re.compile(r"\[\d+\]")


# -- the entries --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claim:
    phrase: str
    compute: Callable[[Any], Any]


@dataclass(frozen=True)
class Quote:
    phrase: str
    paper: str
    words: str


@dataclass(frozen=True)
class Exempt:
    phrase: str
    why: str


@dataclass(frozen=True)
class Bound:
    """A bound the phrase's number states about a value: ``kind`` is at_least, at_most or about."""
    kind: str
    value: float
    rel: float = 0.0


def at_least(value) -> Bound:
    """The phrase's number is a lower bound of ``value`` ("more than 100 times")."""
    return Bound("at_least", value)


def at_most(value) -> Bound:
    """The phrase's number is an upper bound of ``value`` ("under 20%")."""
    return Bound("at_most", value)


def about(value, rel: float) -> Bound:
    """The phrase's number is ``value`` within ``rel`` ("about 50 times")."""
    return Bound("about", value, rel)


# -- reading the prose ----------------------------------------------------------------------------
def normalise(text: str) -> str:
    """White space collapsed and ``*`` emphasis dropped: how phrases and prose are compared."""
    return " ".join(text.replace("*", "").split())


def _blank(text: str, pattern: re.Pattern) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def numbers_in(phrase: str) -> list[tuple[str, int, bool]]:
    """The numbers a phrase states, in order, references and years aside: (digits without
    commas, decimals, is a percent)."""
    text = normalise(phrase)
    for pattern in (REFERENCE, TABLE2_ROW, YEAR):
        text = _blank(text, pattern)
    return [(m.group(1).replace(",", "") + (m.group(2) or ""), len(m.group(2) or "") - bool(m.group(2)),
             bool(m.group(3))) for m in NUMBER.finditer(text)]


def unaccounted_numbers(markdown: str, entries: list) -> list[str]:
    """The numbers of the prose (outside code spans and link targets) that no entry covers and
    that are not references: each with some words around it."""
    text = normalise(_blank(markdown, LIST_NUMBER))
    for entry in entries:
        phrase = normalise(entry.phrase)
        text = text.replace(phrase, " " * len(phrase))
    for pattern in (CODE_SPAN, LINK_LESSON, LINK_TARGET, REFERENCE, IDENTIFIER, TABLE2_ROW, YEAR):
        text = _blank(text, pattern)
    out = []
    for m in NUMBER.finditer(text):
        around = " ".join(text[max(0, m.start() - 50): m.end() + 30].split())
        out.append(f"{m.group(0)!r} in '...{around}...'")
    return out


def missing_phrases(markdown: str, entries: list) -> list[str]:
    text = normalise(markdown)
    return [f"{type(e).__name__} phrase not in the markdown: {e.phrase!r}" for e in entries
            if normalise(e.phrase) not in text]


# -- checking a claim -----------------------------------------------------------------------------
def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _agrees(written: str, decimals: int, value) -> bool:
    stated = float(written)
    if isinstance(value, Bound):
        if value.kind == "at_least":
            return value.value >= stated
        if value.kind == "at_most":
            return value.value <= stated
        return abs(value.value - stated) <= value.rel * abs(stated)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return abs(round(float(value), decimals) - stated) < 10 ** -(decimals + 3) if decimals \
        else abs(float(value) - stated) < 0.5 or (float(value) == stated)


def check_claim(claim: Claim, nb) -> str | None:
    """None if the phrase states what ``claim.compute(nb)`` gives, else what differs."""
    stated = numbers_in(claim.phrase)
    try:
        values = _flatten(claim.compute(nb))
    except Exception as exc:  # noqa: BLE001 - the claim's reading of the output failed: say how
        return f"{claim.phrase!r}: could not compute ({type(exc).__name__}: {exc})"
    if len(values) != len(stated):
        return (f"{claim.phrase!r}: states {len(stated)} numbers {[s for s, _, _ in stated]}, "
                f"computed {len(values)}: {values}")
    wrong = [(s, v) for (s, d, _), v in zip(stated, values) if not _agrees(s, max(d, 0), v)]
    if wrong:
        return f"{claim.phrase!r}: " + "; ".join(f"says {s}, the output gives {v}" for s, v in wrong)
    return None


# -- papers ----------------------------------------------------------------------------------------
def _squash(text: str) -> str:
    text = re.sub(r"(\w)-\s+(\w)", r"\1\2", text)          # hyphenation at line ends
    return re.sub(r"[^0-9a-z%.]", "", text.lower())


def check_quote(quote: Quote, papers: dict[str, str] | None) -> str | None:
    """The quote's numbers are the paper's words' numbers, and (when the papers are at hand)
    the words are the paper's."""
    said = {s for s, _, _ in numbers_in(quote.phrase)}
    source = {m.group(1).replace(",", "") + (m.group(2) or "") for m in NUMBER.finditer(normalise(quote.words))}
    if not said <= source:
        return f"{quote.phrase!r}: numbers {sorted(said - source)} are not in the quoted words {quote.words!r}"
    if papers is not None and _squash(quote.words) not in _squash(papers[quote.paper]):
        return f"{quote.phrase!r}: the {quote.paper} text does not say {quote.words!r}"
    return None


def read_papers() -> dict[str, str] | None:
    if not all((PAPERS / f).exists() for f in PAPER_FILES.values()):
        return None
    return {k: (PAPERS / f).read_text(encoding="utf-8", errors="replace") for k, f in PAPER_FILES.items()}


# -- the claims files -------------------------------------------------------------------------------
def claims_key(notebook: str) -> str:
    """``06_figure1_and_figure6.ipynb`` -> ``06``; ``demo.ipynb`` -> ``demo``."""
    stem = Path(notebook).stem
    lead = re.match(r"\d+", stem)
    return lead.group(0) if lead else stem


def claims_path(notebook: str) -> Path:
    return CLAIMS_DIR / f"{claims_key(notebook)}.py"


def _module(notebook: str):
    path = claims_path(notebook)
    spec = importlib.util.spec_from_file_location(f"notebook_claims_{claims_key(notebook)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_claims(notebook: str) -> list:
    return list(_module(notebook).CLAIMS)


def required_data(notebook: str) -> str | None:
    """The file under ``../shared/data`` whose run the prose describes (``REQUIRES_DATA`` in the
    claims list), if any: without it the notebook runs on its fallback and the numbers differ."""
    return getattr(_module(notebook), "REQUIRES_DATA", None)
