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
from typing import Protocol

from eventstore.envelope import Envelope
from eventstore.port import EventStore
from eventstore.subjects import table_subject

HAND_ENDED = "HandEnded"


class HandLog(Protocol):
    async def hand_ended(self, table_id: str, hand_id: str) -> bool: ...


class InMemoryHandLog:
    def __init__(self) -> None:
        self._ended: set[tuple[str, str]] = set()

    def end(self, table_id: str, hand_id: str) -> None:
        self._ended.add((table_id, hand_id))

    async def hand_ended(self, table_id: str, hand_id: str) -> bool:
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
    """Scans the table's stream from the start (a few hundred envelopes per table at most
    between snapshots; reveals are rare, once per hand, off the playing path)."""

    def __init__(self, store: EventStore) -> None:
        self._store = store

    async def hand_ended(self, table_id: str, hand_id: str) -> bool:
        for stored in await self._store.read(table_subject(table_id)):
            if ends_hand(stored.envelope, hand_id):
                return True
        return False
