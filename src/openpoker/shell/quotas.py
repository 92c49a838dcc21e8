"""Per-identity and per-table limits: request rates, table creations, open watch streams.

In-process, per instance: a token bucket per key for rates (``RateLimit``) and a counter per key
for things held open (``OpenLimit``). Over a limit the call is RESOURCE_EXHAUSTED with the
reason ``QUOTA_EXCEEDED`` and the limit's name in the ``ErrorInfo`` metadata, so a client knows
which limit it hit. The clock is passed in, so tests drive time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from openpoker.shell.errors import ResourceExhausted

Clock = Callable[[], float]
MAX_KEYS = 100_000  # buckets kept; the least recently used go first (a full bucket is no loss)


class QuotaExceeded(ResourceExhausted):
    reason = "QUOTA_EXCEEDED"

    def __init__(self, *, limit: str, allowed: int, per_seconds: float | None = None) -> None:
        fields: dict[str, object] = {"limit": limit, "allowed": allowed}
        if per_seconds is not None:
            fields["perSeconds"] = per_seconds
        super().__init__(f"over the {limit} limit", **fields)


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class RateLimit:
    """At most ``burst`` calls at once and ``rate`` per second on average, per key."""

    def __init__(self, *, name: str, rate: float, burst: int, clock: Clock) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.name = name
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, key: str) -> None:
        now = self._clock()
        bucket = self._buckets.pop(key, None) or _Bucket(tokens=float(self._burst), at=now)
        bucket.tokens = min(float(self._burst), bucket.tokens + (now - bucket.at) * self._rate)
        bucket.at = now
        self._buckets[key] = bucket
        if len(self._buckets) > MAX_KEYS:
            self._buckets.popitem(last=False)
        if bucket.tokens < 1:
            raise QuotaExceeded(limit=self.name, allowed=self._burst, per_seconds=self._burst / self._rate)
        bucket.tokens -= 1


class OpenLimit:
    """At most ``limit`` things (such as watch streams) open at once per key."""

    def __init__(self, *, name: str, limit: int) -> None:
        if limit < 1:
            raise ValueError("an open limit needs limit >= 1")
        self.name = name
        self._limit = limit
        self._open: dict[str, int] = {}

    def count(self, key: str) -> int:
        return self._open.get(key, 0)

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        if self._open.get(key, 0) >= self._limit:
            raise QuotaExceeded(limit=self.name, allowed=self._limit)
        self._open[key] = self._open.get(key, 0) + 1
        try:
            yield
        finally:
            left = self._open[key] - 1
            if left:
                self._open[key] = left
            else:
                del self._open[key]
