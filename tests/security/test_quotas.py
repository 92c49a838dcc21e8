"""``shell.quotas``: token buckets and open-stream limits, driven by a fake clock."""

from __future__ import annotations

import pytest

from openpoker.shell.quotas import OpenLimit, QuotaExceeded, RateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate() -> None:
    clock = Clock()
    limit = RateLimit(name="tables_per_minute", rate=1 / 6, burst=3, clock=clock)
    for _ in range(3):
        limit.take("alice")
    with pytest.raises(QuotaExceeded) as refused:
        limit.take("alice")
    assert refused.value.reason == "QUOTA_EXCEEDED"
    assert refused.value.metadata()["limit"] == "tables_per_minute"
    limit.take("bob")  # one identity's burst is not another's
    clock.now = 5.9
    with pytest.raises(QuotaExceeded):
        limit.take("alice")
    clock.now = 6.0
    limit.take("alice")
    with pytest.raises(QuotaExceeded):
        limit.take("alice")


def test_a_refused_call_spends_nothing() -> None:
    clock = Clock()
    limit = RateLimit(name="requests_per_second", rate=1, burst=1, clock=clock)
    limit.take("k")
    for _ in range(10):
        with pytest.raises(QuotaExceeded):
            limit.take("k")
    clock.now = 1.0
    limit.take("k")


def test_open_streams_are_counted_and_released() -> None:
    streams = OpenLimit(name="watch_streams", limit=2)
    with streams.hold("alice"), streams.hold("alice"):
        assert streams.count("alice") == 2
        with pytest.raises(QuotaExceeded), streams.hold("alice"):
            pass
        with streams.hold("bob"):
            assert streams.count("bob") == 1
    assert streams.count("alice") == 0
    with pytest.raises(RuntimeError), streams.hold("alice"):
        raise RuntimeError("a stream that fails still gives its place back")
    assert streams.count("alice") == 0
