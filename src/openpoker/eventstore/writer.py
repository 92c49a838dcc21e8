"""``SealedWriter``: appends envelopes of (type, payload) events to one stream's subject the way
a service's writer does (gapless versions, the hash chain, the expected sequence), for tools,
benchmarks and tests that need a real log without the service that writes it."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable

from openpoker.engine.version import ENGINE_VERSION
from openpoker.eventstore.chain import GENESIS, seal
from openpoker.eventstore.envelope import Draft, RecordedEvent
from openpoker.eventstore.port import EventStore
from openpoker.eventstore.subjects import table_subject


class SealedWriter:
    """Appends to one table's subject (``eventstore.subjects.table_subject``)."""

    def __init__(
        self,
        store: EventStore,
        table_id: str,
        *,
        engine_version: str = ENGINE_VERSION,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime(2026, 11, 22, tzinfo=dt.UTC),
    ) -> None:
        self.store = store
        self.table_id = table_id
        self.subject = table_subject(table_id)
        self.version = 0
        self.sequence = 0
        self.prev_hash = GENESIS
        self._engine_version = engine_version
        self._clock = clock

    async def append(self, *events: tuple[str, dict[str, object]]) -> None:
        """One envelope holding ``events`` (each a type name and its JSON payload)."""
        self.version += 1
        draft = Draft(
            stream_id=self.table_id,
            version=self.version,
            command_id=f"cmd-{self.version}",
            owner_epoch=1,
            rules_version="seeds/1",
            engine_version=self._engine_version,
            events=tuple(RecordedEvent(type=t, payload=json.dumps(p).encode()) for t, p in events),
            recorded_at=self._clock(),
        )
        envelope = seal(draft, self.prev_hash)
        result = await self.store.append(self.subject, envelope, expected_sequence=self.sequence)
        self.sequence = result.sequence
        self.prev_hash = envelope.hash
