"""In-memory event store for unit tests: the same contract as JetStream, no server.

Messages are stored encoded (the same protobuf bytes as JetStream), so decoding is exercised
identically. Stream sequences are global across subjects, like one JetStream stream; message-id
de-duplication honours a window measured on an injectable clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from openpoker.eventstore import codec
from openpoker.eventstore.appending import AmbiguousAck, RawConflict, append_resolving
from openpoker.eventstore.envelope import AppendResult, Envelope, Snapshot, StoredEnvelope

DEFAULT_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class _Message:
    sequence: int
    subject: str
    msg_id: str
    data: bytes


class InMemoryEventStore:
    def __init__(
        self,
        *,
        duplicate_window: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        self._duplicate_window = duplicate_window
        self._clock = clock
        self._attempts = attempts
        self._messages: list[_Message] = []
        self._by_subject: dict[str, list[_Message]] = {}
        self._seen: dict[str, tuple[int, float]] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._lock = asyncio.Lock()

    async def append(self, subject: str, envelope: Envelope, *, expected_sequence: int) -> AppendResult:
        data = codec.encode(envelope)
        msg_id = envelope.msg_id
        return await append_resolving(
            publish=lambda: self._publish_once(subject, data, msg_id, expected_sequence),
            first_after=lambda: self._first_after(subject, expected_sequence),
            subject=subject,
            msg_id=msg_id,
            expected_sequence=expected_sequence,
            attempts=self._attempts,
        )

    async def _publish_once(
        self, subject: str, data: bytes, msg_id: str, expected_sequence: int
    ) -> AppendResult:
        try:
            return await self._publish(subject, data, msg_id, expected_sequence)
        except TimeoutError as err:
            raise AmbiguousAck from err

    async def _publish(self, subject: str, data: bytes, msg_id: str, expected_sequence: int) -> AppendResult:
        """One raw attempt (tests override it to simulate a lost ack)."""
        async with self._lock:
            now = self._clock()
            seen = self._seen.get(msg_id)
            if seen is not None and now - seen[1] < self._duplicate_window:
                return AppendResult(sequence=seen[0], duplicate=True)
            on_subject = self._by_subject.get(subject, [])
            actual = on_subject[-1].sequence if on_subject else 0
            if actual != expected_sequence:
                raise RawConflict(actual_sequence=actual, error_code=10071)
            message = _Message(len(self._messages) + 1, subject, msg_id, data)
            self._messages.append(message)
            self._by_subject.setdefault(subject, []).append(message)
            self._seen[msg_id] = (message.sequence, now)
            return AppendResult(sequence=message.sequence, duplicate=False)

    async def _first_after(self, subject: str, sequence: int) -> tuple[int, str] | None:
        for message in self._by_subject.get(subject, []):
            if message.sequence > sequence:
                return message.sequence, message.msg_id
        return None

    async def last(self, subject: str) -> StoredEnvelope | None:
        on_subject = self._by_subject.get(subject)
        if not on_subject:
            return None
        message = on_subject[-1]
        return StoredEnvelope(envelope=codec.decode(message.data), sequence=message.sequence)

    async def read(
        self, subject: str, *, after_sequence: int = 0, from_version: int = 1
    ) -> list[StoredEnvelope]:
        out: list[StoredEnvelope] = []
        for message in list(self._by_subject.get(subject, [])):
            if message.sequence <= after_sequence:
                continue
            envelope = codec.decode(message.data)
            if envelope.version >= from_version:
                out.append(StoredEnvelope(envelope=envelope, sequence=message.sequence))
        return out

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshots[snapshot.stream_id] = snapshot

    async def load_snapshot(self, stream_id: str) -> Snapshot | None:
        return self._snapshots.get(stream_id)
