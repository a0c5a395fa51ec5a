"""Travian's alliances as labels: stable names across days (checked on small hand-made days
with known answers), and each message labelled with its sender's alliance of the day of its
daily file (checked against a pandas join over the real files; skipped without them)."""
from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from ddlab.sources import shared_data_dir, travian_alliances

TRAVIAN = shared_data_dir() / "travian"


def _days(folder, days: dict[str, list[list[int]]]):
    for day, groups in days.items():
        (folder / f"communities-{day}.txt").write_text(
            "\n".join(" ".join(map(str, g)) for g in groups) + "\n")
    return folder


def test_alliance_names_follow_most_of_their_members(tmp_path):
    folder = _days(tmp_path, {
        "2009-12-01": [[1, 2, 3, 4], [5, 6], [7, 8, 9]],
        # A1 loses a member, A3 (7,8,9) splits: 7,8 keep the name, 9 starts a new one;
        # 5,6 join 10 and 11: half of them were A3, so it keeps the name
        "2009-12-02": [[1, 2, 3], [9, 12], [7, 8], [5, 6, 10, 11]],
        # 1,2,3 scatter into groups where they are a minority: new names
        "2009-12-03": [[1, 20, 21], [2, 3, 22, 23, 24]],
    })
    got = travian_alliances(folder)
    named = {(d, p): a for d, p, a in got.itertuples(index=False)}
    assert named[("2009-12-01", 1)] == "A1" and named[("2009-12-01", 7)] == "A2"
    assert named[("2009-12-01", 5)] == "A3"          # by size, then smallest member
    assert {named[("2009-12-02", p)] for p in (1, 2, 3)} == {"A1"}
    assert {named[("2009-12-02", p)] for p in (7, 8)} == {"A2"}
    assert named[("2009-12-02", 9)] not in {"A1", "A2", "A3"}
    assert {named[("2009-12-02", p)] for p in (5, 6, 10, 11)} == {"A3"}
    assert named[("2009-12-03", 1)] not in {"A1"} and named[("2009-12-03", 2)] != "A1"
    assert len(got) == len(set(zip(got.day, got.player))), "one alliance per player and day"


def test_a_bad_line_is_named(tmp_path):
    (tmp_path / "communities-2009-12-01.txt").write_text("1 2 3\n4 x 5\n")
    with pytest.raises(ValueError, match=r"communities-2009-12-01.txt line 2"):
        travian_alliances(tmp_path)


@pytest.mark.spark
def test_messages_carry_the_senders_alliance_of_the_day(spark):
    if not (TRAVIAN / "travian-messages.zip").exists():
        pytest.skip(f"needs travian/travian-messages.zip and travian-communities.zip of the "
                    f"shared data folder, absent at {TRAVIAN}")
    from ddlab.sources import load_dataset

    alliances = travian_alliances()
    whole = {(d, p): a for d, p, a in alliances.itertuples(index=False)}
    # the oracle: each daily file's day from its name, the alliance looked up in pandas
    rows = []
    with zipfile.ZipFile(TRAVIAN / "travian-messages.zip") as zf:
        for name in sorted(zf.namelist())[:3]:
            day = name.split("timestamped-")[1][:10]
            frame = pd.read_csv(zf.open(name), header=None, names=["time", "src", "dst"])
            frame["label"] = [whole.get((day, s), "no alliance") for s in frame["src"]]
            rows.append(frame)
    expected = pd.concat(rows)
    loaded = load_dataset("travian-alliances", spark=spark)
    assert loaded.report.malformed_total == 0
    got = loaded.df.where(f"time <= {int(expected.time.max())}").toPandas()
    key = ["time", "src", "dst", "label"]
    assert (got[key].sort_values(key).reset_index(drop=True)
            .equals(expected[key].sort_values(key).reset_index(drop=True)))
    assert (expected.label != "no alliance").mean() > 0.5
