"""The share of a fuzzer's examples that were compared with the oracle: a generator drifting
towards examples the oracle gives up on would otherwise pass while checking nothing."""
from __future__ import annotations

from collections import Counter


def assert_share_compared(outcomes: Counter, skipped: str, share: float, what: str,
                          why_skipped: str) -> None:
    """Fail unless at least ``share`` of the examples counted in ``outcomes`` were compared
    (every outcome but ``skipped``)."""
    total = sum(outcomes.values())
    compared = total - outcomes[skipped]
    assert total and compared >= share * total, (
        f"{what}: only {compared} of {total} examples were compared with the from-scratch "
        f"evaluation (the rest skipped: {why_skipped}); at least {share:.0%} must be.  "
        f"{dict(outcomes)}")
