"""Time-format detection and strftime translation (pure Python, no JVM)."""
from __future__ import annotations

import pytest

from ddlab.sources.timeparse import detect_time_format, strftime_to_spark


@pytest.mark.parametrize("samples, expected", [
    (["4/15/04 2:56 PM", "12/1/04 11:02 AM"], "M/d/yy h:mm a"),  # CollegeMsg
    (["4", "6", "86399"], "unix"),
    (["1289241911.72836", "1289241941.53378"], "unix"),  # Bitcoin OTC: float seconds
    (["1700000000123", "1700000000456"], "unix_ms"),
    (["2001-05-14 16:39:00", "1999-01-02 03:04:05"], "iso"),  # Enron
    (["2020-01-01T00:00:00Z", "2020-01-01T00:01:00+02:00"], "iso"),
    (["25/12/2020 10:00", "13/01/2021 23:59"], "d/M/yyyy H:mm"),  # day > 12: not US order
    (["4/15/04 2:56 PM", "garbage", "4/16/04 2:56 PM"], "M/d/yy h:mm a"),  # a bad row does not stop detection
])
def test_detects(samples, expected):
    assert detect_time_format(samples) == expected


def test_undetectable_names_samples():
    with pytest.raises(ValueError, match="time_format=.*") as err:
        detect_time_format(["yesterday", "last week"])
    assert "yesterday" in str(err.value)


@pytest.mark.parametrize("fmt, expected", [
    ("%m/%d/%y %I:%M %p", "M/d/yy h:mm a"),
    ("%Y-%m-%dT%H:%M:%S", "yyyy-M-d'T'H:mm:ss"),
    ("%Y%m%d", "yyyyMMdd"),
    ("%d.%m.%Y", "d.M.yyyy"),
])
def test_strftime_to_spark(fmt, expected):
    assert strftime_to_spark(fmt) == expected
