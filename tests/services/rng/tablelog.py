"""Test helper: write a table's events the way the table service does (sealed envelopes)."""

from __future__ import annotations

import datetime as dt
import json

from eventstore import GENESIS, Draft, EventStore, RecordedEvent, seal
from eventstore.subjects import table_subject


class TableWriter:
    """Appends envelopes of (type, payload) events to one table's subject."""

    def __init__(self, store: EventStore, table_id: str) -> None:
        self.store = store
        self.table_id = table_id
        self.subject = table_subject(table_id)
        self.version = 0
        self.sequence = 0
        self.prev_hash = GENESIS

    async def append(self, *events: tuple[str, dict[str, object]]) -> None:
        self.version += 1
        draft = Draft(
            stream_id=self.table_id,
            version=self.version,
            command_id=f"cmd-{self.version}",
            owner_epoch=1,
            rules_version="seeds/1",
            engine_version="test",
            events=tuple(RecordedEvent(type=t, payload=json.dumps(p).encode()) for t, p in events),
            recorded_at=dt.datetime(2026, 11, 22, tzinfo=dt.UTC),
        )
        envelope = seal(draft, self.prev_hash)
        result = await self.store.append(self.subject, envelope, expected_sequence=self.sequence)
        self.sequence = result.sequence
        self.prev_hash = envelope.hash

    async def play_hand(self, hand_id: str, *, end: bool = True) -> None:
        await self.append(("HandStarted", {"type": "HandStarted", "hand_id": hand_id}))
        await self.append(("DeckCommitted", {"type": "DeckCommitted", "hand_id": hand_id}))
        if end:
            await self.append(("HandEnded", {"type": "HandEnded", "hand_id": hand_id, "stacks": [100, 200]}))
