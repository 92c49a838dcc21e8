"""Has a hand ended? The table's event log answers (a seed is revealed only after it).

The port ``HandLog`` has a set-backed implementation for unit tests and ``EventLogHandLog``,
which reads the table's subject (``eventstore.subjects.table_subject``: ``poker.table.
<crc32 % 256>.<table_id>`` in ``TABLE_EVENTS``) through the event store port, so it runs on
``InMemoryEventStore`` and ``JetStreamEventStore`` alike. The hand has ended when some envelope
carries an event of type ``HandEnded`` whose JSON payload (``engine.codec``) has this
``hand_id``; ``HandEnded`` is the last event of every hand (cross-team contract).
"""

from __future__ import annotations

import json
from typing import Final, Protocol

from openpoker.eventstore.envelope import Envelope
from openpoker.eventstore.port import EventStore
from openpoker.eventstore.subjects import table_subject

HAND_ENDED = "HandEnded"
# Tables whose last seen log sequence is remembered (a few dozen bytes each).
TABLES_REMEMBERED: Final = 65536


class HandLog(Protocol):
    async def position(self, table_id: str) -> int:
        """Where the table's log ends now (0 if empty): a later hand's events come after it."""
        ...

    async def hand_ended(self, table_id: str, hand_id: str, *, after: int = 0) -> bool:
        """Whether ``HandEnded`` for the hand is in the table's log after position ``after``."""
        ...


class InMemoryHandLog:
    def __init__(self) -> None:
        self._ended: set[tuple[str, str]] = set()

    def end(self, table_id: str, hand_id: str) -> None:
        self._ended.add((table_id, hand_id))

    async def position(self, table_id: str) -> int:
        return 0

    async def hand_ended(self, table_id: str, hand_id: str, *, after: int = 0) -> bool:
        return (table_id, hand_id) in self._ended


def ends_hand(envelope: Envelope, hand_id: str) -> bool:
    """True if ``envelope`` holds ``HandEnded`` for ``hand_id``."""
    for event in envelope.events:
        if event.type != HAND_ENDED:
            continue
        try:
            payload = json.loads(event.payload)
        except ValueError:
            continue
        if isinstance(payload, dict) and payload.get("hand_id") == hand_id:
            return True
    return False


class EventLogHandLog:
    """Reads the table's subject after the position recorded when the hand was shuffled.

    A hand is shuffled before it starts, so its ``HandEnded`` can only come after the log's end
    at that moment: reading from there keeps a reveal's cost to one hand's envelopes however
    old the table is (reading from the start cost ~14 ms of CPU per reveal after 200 hands).

    First, though, the log's last envelope alone: the dealer asks for the seed as soon as it
    has settled the hand and before it starts the next one, so the envelope that ended the hand
    is usually still the last. That is one direct get instead of a consumer created, fed the
    hand's envelopes and deleted. The answer is read from the log either way; only where the
    reading starts differs.

    ``position`` answers from the last sequence this process saw on the table's subject when it
    has seen one (the previous hand's reveal, typically), without reading the log: any sequence
    the log has reached is a valid start, since a hand shuffled now ends after the log's end now,
    which is at or past it (sequences only grow). A stale one only makes a fallback read longer.
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._seen: dict[str, int] = {}  # table id -> a sequence its subject has reached

    def _saw(self, table_id: str, sequence: int) -> None:
        seen = self._seen
        if table_id not in seen and len(seen) >= TABLES_REMEMBERED:
            del seen[next(iter(seen))]  # the oldest entry: it is only a shortcut
        if sequence > seen.get(table_id, 0):
            seen[table_id] = sequence

    async def position(self, table_id: str) -> int:
        known = self._seen.get(table_id)
        if known is not None:
            return known
        last = await self._store.last(table_subject(table_id))
        sequence = 0 if last is None else last.sequence
        if sequence:
            self._saw(table_id, sequence)
        return sequence

    async def hand_ended(self, table_id: str, hand_id: str, *, after: int = 0) -> bool:
        subject = table_subject(table_id)
        last = await self._store.last(subject)
        if last is None or last.sequence <= after:
            return False  # nothing appended since the shuffle: the hand cannot have ended
        self._saw(table_id, last.sequence)
        if ends_hand(last.envelope, hand_id):
            return True
        for stored in await self._store.read(subject, after_sequence=after):
            if ends_hand(stored.envelope, hand_id):
                return True
        return False
