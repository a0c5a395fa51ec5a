"""Window batches without Spark, for the explorer tests that need no real loader: each step's
update batch is the difference of two windows computed with the pandas reference
(``events_in_window``), held in the same in-memory class the window cache serves."""
from __future__ import annotations

import pandas as pd

from ddlab.sources.window_cache import StoredWindows
from ddlab.sources.windows import events_in_window

DAY = 86_400


def pandas_windows(events: pd.DataFrame, *, width: int = 7 * DAY, step: int = DAY,
                   steps: int = 30) -> StoredWindows:
    """``steps`` positions of a ``width``-second window moving ``step`` seconds from the first
    event: position ``k``'s batch turns window ``k-1`` into window ``k``."""
    origin = int(events["time"].min())
    frames, before = [], None
    for k in range(steps):
        now = events_in_window(events, origin + k * step, origin + k * step + width)
        if before is None:
            batch = now
        else:
            both = pd.concat([now, before.assign(diff=-before["diff"])])
            batch = both.groupby(["src", "dst"], as_index=False)["diff"].sum()
            batch = batch[batch["diff"] != 0]
        frames.append(batch.assign(step=k))
        before = now
    frame = pd.concat(frames, ignore_index=True)[["step", "src", "dst", "diff"]]
    return StoredWindows(frame, origin=origin, width=width, step=step, steps=steps,
                         multigraph=False, columns=("src", "dst"), source="pandas reference")
