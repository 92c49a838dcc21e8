"""The site-wide record of each player's all-ins due to disconnection (seed 000: "a total of no
more than 2 All-ins due to disconnection within any 24-hour period", the member's, not a
table's).

A table's log knows only the protections used at that table; this record knows them all. One
KV key per player in bucket ``poker-allowances`` (the key is the player id in base64url, as ids
may hold characters keys may not); the value is JSON ``{"reset_at_ms", "reset_request",
"reset_cleared", "uses": [[at_ms, table, hand, request, used], ...]}``: the last reset of every
table (its time, request id and count, so a retried reset answers the same), and each
protection's time, the table and hand it was used in, the request id of the time-out that took
it (a reservation's identity: a retried request finds its own), and whether the table's log has
it yet (``used``) or it is only reserved. The table service writes it with compare-and-set on
the key's revision (``RecordChanged`` when someone wrote first), so two tables deciding at once
cannot both take the last protection. Uses older than ``KEEP_MS`` are dropped at each write, and
the bucket's keys expire a little after that, so records of players who stopped playing go by
themselves.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, replace
from typing import Final, Protocol

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from openpoker.eventstore.streams import ALLOWANCES

ALLOWANCES_BUCKET: Final = ALLOWANCES.bucket
DAY_MS: Final = 24 * 60 * 60 * 1000
# Uses are kept this long (the default window, 24 hours, and an hour more for clocks that
# disagree); the bucket's keys live as long after their last write.
KEEP_MS: Final = DAY_MS + 60 * 60 * 1000


class RecordChanged(Exception):
    """Someone wrote the player's record since it was read (compare-and-set refused)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Use:
    at_ms: int
    table: str
    hand: str
    request: str  # the time-out's request id
    used: bool  # False: reserved, the table's decision not appended yet


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    uses: tuple[Use, ...] = ()
    reset_at_ms: int = 0  # the last operator reset of every table (0: never)
    # That reset's request id and how many protections it cleared: its retry's answer.
    reset_request: str = ""
    reset_cleared: int = 0

    def counting(self, at_ms: int, window_ms: int) -> tuple[Use, ...]:
        """The uses (reserved ones too) in the rolling window ending at ``at_ms``, after the
        last reset."""
        return tuple(u for u in self.uses if at_ms - u.at_ms < window_ms and u.at_ms >= self.reset_at_ms)

    def elsewhere(self, table: str, at_ms: int, window_ms: int) -> int:
        """Protections counting at ``at_ms`` that were used (or are being taken) at other tables."""
        return sum(1 for u in self.counting(at_ms, window_ms) if u.table != table)

    def of_request(self, request: str) -> Use | None:
        return next((u for u in self.uses if u.request == request), None)

    def with_use(self, use: Use, *, now_ms: int) -> Record:
        """``use`` added (or replacing the one of its request), old uses dropped."""
        kept = tuple(u for u in self.uses if u.request != use.request and now_ms - u.at_ms < KEEP_MS)
        return replace(self, uses=(*kept, use))

    def without(self, *, request: str = "", table: str = "") -> Record:
        """The use of ``request`` dropped, or every use at ``table``."""
        return replace(
            self,
            uses=tuple(
                u
                for u in self.uses
                if not ((request and u.request == request) or (table and u.table == table))
            ),
        )


def key_of(player: str) -> str:
    return base64.urlsafe_b64encode(player.encode()).decode().rstrip("=")


def encode(record: Record) -> bytes:
    doc = {
        "reset_at_ms": record.reset_at_ms,
        "reset_request": record.reset_request,
        "reset_cleared": record.reset_cleared,
        "uses": [[u.at_ms, u.table, u.hand, u.request, u.used] for u in record.uses],
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def decode(data: bytes) -> Record:
    """A stored record; anything unreadable reads as no record (an empty value too)."""
    try:
        doc = json.loads(data or b"{}")
        uses = tuple(
            Use(at_ms=int(a), table=str(t), hand=str(h), request=str(r), used=bool(u))
            for a, t, h, r, u in doc.get("uses", [])
        )
        return Record(
            uses=uses,
            reset_at_ms=int(doc.get("reset_at_ms", 0)),
            reset_request=str(doc.get("reset_request", "")),
            reset_cleared=int(doc.get("reset_cleared", 0)),
        )
    except (ValueError, TypeError, AttributeError):
        return Record()


class AllowanceRecords(Protocol):
    async def get(self, player: str) -> tuple[Record, int]:
        """The player's record and its revision (0: none yet)."""
        ...

    async def put(self, player: str, record: Record, *, revision: int) -> int:
        """Write the record if its revision is still ``revision`` (0: if there is none);
        returns the new revision, raises ``RecordChanged`` otherwise."""
        ...


class MemoryAllowanceRecords:
    """For unit tests: the records in memory, shared by every table app given this object.
    ``unreachable`` makes every call fail as a NATS that cannot be reached would."""

    def __init__(self) -> None:
        self.records: dict[str, tuple[bytes, int]] = {}
        self.revision = 0
        self.unreachable = False
        self.gets = 0  # calls made (tests)

    async def get(self, player: str) -> tuple[Record, int]:
        self._check()
        self.gets += 1
        data, revision = self.records.get(player, (b"", 0))
        await asyncio.sleep(0)  # a real read yields: another table may write meanwhile
        return decode(data), revision

    async def put(self, player: str, record: Record, *, revision: int) -> int:
        self._check()
        if self.records.get(player, (b"", 0))[1] != revision:
            raise RecordChanged(player)
        self.revision += 1
        self.records[player] = (encode(record), self.revision)
        return self.revision

    def _check(self) -> None:
        if self.unreachable:
            raise ConnectionError("allowance records unreachable")


class KvAllowanceRecords:
    """The records in NATS KV bucket ``poker-allowances``."""

    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv

    async def get(self, player: str) -> tuple[Record, int]:
        try:
            entry = await self._kv.get(key_of(player))
        except KeyNotFoundError:
            return Record(), 0
        return decode(entry.value or b""), entry.revision or 0

    async def put(self, player: str, record: Record, *, revision: int) -> int:
        try:
            if revision == 0:
                return await self._kv.create(key_of(player), encode(record))
            return await self._kv.update(key_of(player), encode(record), last=revision)
        except (KeyWrongLastSequenceError, KeyNotFoundError):
            raise RecordChanged(player) from None
