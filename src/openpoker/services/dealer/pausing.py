"""Why a table is paused, and the dealer's own pause of a table whose hands cannot open.

A hand *opens* when the table has started it and the wallet has reserved its stacks. When that
fails for a reason that will not go away by itself (the wallet refuses the reservation because
stacks and escrow disagree, the table refuses ``StartHand``, rng refuses the shuffle), starting
the next hand at once would only start and void hand after hand (seen: 1,100 hands in 80 s at
one table after escrow drifted). So each consecutive failure pushes the next attempt back
(``retry`` doubling up to ``retry_max``) and after ``limit`` of them the dealer pauses the table
itself, for an operator to look at and resume. A hand that opens clears the count; so does the
operator's resume. The count lives in memory: a restarted dealer tries at most ``limit`` times
again before it pauses, and a pause is stored (``services.dealer.pauses``) like an operator's.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from openpoker.shell.retry import Backoff

OPERATOR = "operator"  # who paused: an operator (PauseTable) ...
DEALER = "dealer"  # ... or the dealer itself


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause:
    """A paused table: who paused it, why, after how many hands failed to open, and when."""

    by: str = OPERATOR
    reason: str = OPERATOR  # the refusal's reason for a pause by the dealer (a metric label)
    failures: int = 0
    detail: str = ""  # the last refusal in full
    at: dt.datetime | None = None

    def encode(self) -> bytes:
        doc: dict[str, object] = {"by": self.by, "reason": self.reason, "failures": self.failures}
        if self.detail:
            doc["detail"] = self.detail
        if self.at is not None:
            doc["at"] = self.at.isoformat()
        return json.dumps(doc, sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> Pause:
        """A stored pause; anything else (``1``, written before pauses had reasons) is an
        operator's."""
        try:
            doc = json.loads(data)
        except ValueError:
            return cls()
        if not isinstance(doc, dict):
            return cls()
        at = doc.get("at")
        return cls(
            by=str(doc.get("by", OPERATOR)),
            reason=str(doc.get("reason", OPERATOR)),
            failures=int(doc.get("failures", 0)),
            detail=str(doc.get("detail", "")),
            at=dt.datetime.fromisoformat(at) if isinstance(at, str) else None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenRetry:
    """How hands that cannot open are retried: the first gap, its cap, and the consecutive
    failures after which the dealer pauses the table (0: never)."""

    retry: float = 1.0
    retry_max: float = 30.0
    limit: int = 5


@dataclass(slots=True)
class OpenFailures:
    """Consecutive failures to open a hand at one table (times from a monotonic clock)."""

    policy: OpenRetry
    count: int = 0
    reason: str = ""
    detail: str = ""
    not_before: float = 0.0  # no new hand before this

    def failed(self, *, reason: str, detail: str, now: float) -> bool:
        """Record a failure at ``now``; True when the table should be paused."""
        self.count += 1
        self.reason, self.detail = reason, detail
        p = self.policy
        self.not_before = now + Backoff(first=p.retry, cap=p.retry_max).ceiling(self.count - 1)
        return p.limit > 0 and self.count >= p.limit

    def opened(self) -> None:
        self.count = 0
        self.reason = self.detail = ""
        self.not_before = 0.0
