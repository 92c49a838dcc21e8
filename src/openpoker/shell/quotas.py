"""Per-identity and per-table limits: request rates, table creations, open watch streams.

In-process, per instance: a token bucket per key for rates (``RateLimit``) and a counter per key
for things held open (``OpenLimit``). Over a limit the call is RESOURCE_EXHAUSTED with the
reason ``QUOTA_EXCEEDED`` and the limit's name in the ``ErrorInfo`` metadata, so a client knows
which limit it hit. The clock is passed in, so tests drive time.

Keys (``key_of``): a person by their token's subject, staff by name, an anonymous caller by
the host it calls from. Callers with a certificate of ours (the services, ``pokerctl``'s staff
certificate, on the mutual-TLS service port) are exempt: the dealer drives every table. A
plaintext rig (``POKER_INSECURE``) authenticates nobody and enforces nothing.

Enforced: requests per second per identity in ``shell.interceptor`` (``POKER_QUOTA_RPS``,
``POKER_QUOTA_BURST``); table creations per minute and open watch streams per identity and per
table in the table service (``POKER_TABLE_QUOTA_*``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from openpoker.shell.errors import ResourceExhausted
from openpoker.shell.identity import Kind, Principal

Clock = Callable[[], float]
MAX_KEYS = 100_000  # buckets kept; the least recently used go first (a full bucket is no loss)


def peer_host(peer: str) -> str:
    """``ipv4:127.0.0.1:5000`` -> ``127.0.0.1``; ``ipv6:[::1]:5000`` -> ``[::1]``: one key per
    host, so new connections do not mean new quotas."""
    address = peer.partition(":")[2] or peer
    host, sep, port = address.rpartition(":")
    return host if sep and port.isdigit() else address


def key_of(principal: Principal | None, peer: Callable[[], str]) -> str | None:
    """The quota key of a caller; None: exempt (certificate holders; a plaintext rig). ``peer``
    (``context.peer``) is asked only for an anonymous caller."""
    if principal is None or principal.kind in (Kind.SERVICE, Kind.STAFF):
        return None
    if principal.kind is Kind.ANONYMOUS:
        return f"peer:{peer_host(peer())}"
    return f"user:{principal.name}"


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
