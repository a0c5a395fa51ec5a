"""Labelled events: interactions carrying a label the components panel can rank, the closest
real analogue of the CIDR paper's demo ("the most popular hashtag within each component").

Travian (``../shared/data/travian``, Hajibagheri et al., SBP 2015) has, beside its daily
message files, each day's alliances: one line per alliance, its members' player ids, and no
alliance name or id.  :func:`travian_alliances` gives every (day, player) its alliance with a
stable name across days (an alliance keeps its name while most of its members stay together);
:func:`travian_messages_by_alliance` loads the messages on Spark with each message's sender's
alliance of that day as ``label`` ("no alliance" for players in none).  A day runs from 05:00
to 04:59 UTC, as the daily files do.
"""
from __future__ import annotations

import dataclasses
import re
import zipfile
from pathlib import Path

import pandas as pd

from .datasets import dataset_path, travian
from .loaders import LoadResult
from .session import require_pyspark

__all__ = ["travian_alliances", "travian_messages_by_alliance", "NO_ALLIANCE",
           "TRAVIAN_DAY_OFFSET_S"]

#: The label of a message whose sender is in no alliance that day.
NO_ALLIANCE = "no alliance"
#: Travian's days (file names) run from 05:00 to 04:59 UTC: a message's day is the UTC date
#: of its time minus this offset (checked on every daily file).
TRAVIAN_DAY_OFFSET_S = 5 * 3600
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")


def _read_days(path: Path) -> list[tuple[str, list[list[int]]]]:
    """``[(day, [alliance members, ...])]`` from the zip (or a folder) of daily TXT files."""
    entries = []
    if path.is_dir():
        files = [(f.name, f.read_text) for f in sorted(path.iterdir()) if f.is_file()]
    else:
        archive = zipfile.ZipFile(path)
        files = [(n, (lambda n=n: archive.read(n).decode())) for n in sorted(archive.namelist())
                 if not n.endswith("/")]
    for name, read in files:
        match = _DAY.search(Path(name).name)
        if not match or Path(name).name.startswith("."):
            continue
        groups = []
        for number, line in enumerate(read().splitlines(), 1):
            if not line.strip():
                continue
            try:
                groups.append([int(tok) for tok in line.split()])
            except ValueError:
                raise ValueError(f"Travian communities: {name} line {number} is not "
                                 f"space-separated player ids: {line[:60]!r}") from None
        entries.append((match[1], groups))
    if not entries:
        raise ValueError(f"Travian communities: no daily files (communities-YYYY-MM-DD.txt) in "
                         f"{path}")
    return sorted(entries)


def travian_alliances(path=None) -> pd.DataFrame:
    """Every player's alliance per day: ``day`` (``YYYY-MM-DD``), ``player``, ``alliance``
    (``"A1"``, ``"A2"``, ...), one row per (day, player) in an alliance.

    The files name no alliance, so names are given by following alliances from day to day:
    on the first day by size (``A1`` the largest); on later days an alliance takes the name
    of the previous day's alliance holding most of its members, when that is at least half
    of them and no other alliance of the day holds more of that one's members; otherwise it
    gets a new name.  ``path``: the zip of daily files (default
    ``../shared/data/travian/travian-communities.zip``) or a folder of them.

    >>> alliances = travian_alliances()                                  # doctest: +SKIP
    >>> alliances[alliances.day == "2009-12-01"].alliance.nunique()      # doctest: +SKIP
    232
    """
    file = dataset_path("travian/travian-communities.zip", path, "Travian communities")
    rows: list[tuple[str, int, str]] = []
    previous: dict[int, str] = {}         # player -> alliance name, the day before
    next_id = 1
    for day, groups in _read_days(file):
        order = sorted(range(len(groups)), key=lambda i: (-len(groups[i]), min(groups[i])))
        # each alliance's best previous match: (members shared, name)
        best = {}
        for i in order:
            shared: dict[str, int] = {}
            for p in groups[i]:
                name = previous.get(p)
                if name is not None:
                    shared[name] = shared.get(name, 0) + 1
            if shared:
                name, count = max(shared.items(), key=lambda kv: (kv[1], kv[0]))
                if 2 * count >= len(groups[i]):
                    best[i] = (count, name)
        claimed: dict[str, tuple[int, int]] = {}   # name -> (members shared, alliance)
        for i, (count, name) in best.items():
            if name not in claimed or count > claimed[name][0]:
                claimed[name] = (count, i)
        names = {i: name for name, (_, i) in claimed.items()}
        today: dict[int, str] = {}
        for i in order:
            if i not in names:
                names[i] = f"A{next_id}"
                next_id += 1
            for p in groups[i]:
                today[p] = names[i]
                rows.append((day, p, names[i]))
        previous = today
    return pd.DataFrame(rows, columns=["day", "player", "alliance"]).astype(
        {"player": "int64"})


def travian_messages_by_alliance(path=None, communities=None, spark=None,
                                 **kwargs) -> LoadResult:
    """Travian messages (Spark, ``src, dst, time, label``) with each message's sender's
    alliance of that day as ``label`` (:data:`NO_ALLIANCE` when in none), so a component's
    top label is the alliance whose members sent most of its messages.

    ``path``: the messages zip (or folder), ``communities``: the alliances zip (or folder);
    both default to ``../shared/data/travian``.  ``kwargs`` go to the messages loader."""
    require_pyspark()
    from pyspark.sql import functions as F

    alliances = travian_alliances(communities)
    messages = travian("messages", path=path, spark=spark, **kwargs)
    df = messages.df
    session = df.sparkSession
    table = session.createDataFrame(alliances.rename(columns={"player": "src"}))
    # the day's date by arithmetic on unix seconds (no session time zone involved)
    days = F.floor((F.col("time") - F.lit(TRAVIAN_DAY_OFFSET_S)) / F.lit(86400)).cast("int")
    day = F.date_format(F.date_add(F.lit("1970-01-01").cast("date"), days), "yyyy-MM-dd")
    labelled = (df.withColumn("day", day).join(table, on=["day", "src"], how="left")
                .select("src", "dst", "time",
                        F.coalesce(F.col("alliance"), F.lit(NO_ALLIANCE)).alias("label")))
    report = dataclasses.replace(messages.report, source="travian messages by alliance",
                                 columns={**messages.report.columns, "label": "alliance"})
    return LoadResult(labelled, report)
