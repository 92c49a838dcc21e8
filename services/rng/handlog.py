"""Has a hand ended? The table's event log answers (a seed is revealed only after it).

The port ``HandLog`` has an in-memory implementation for unit tests and a JetStream one that
reads the table's subject ``poker.table.<partition>.<table_id>`` (partition = crc32(table_id)
mod P, ARCHITECTURE.md) in the ``TABLE_EVENTS`` stream: each message is a
``poker.common.v1.Envelope``; the hand has ended when some envelope carries an event of type
``HandEnded`` whose JSON payload has this ``hand_id``.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from typing import Protocol

from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError

from eventstore.codec import decode as decode_envelope

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


def table_subject(table_id: str, partitions: int, prefix: str = "poker.table") -> str:
    return f"{prefix}.{zlib.crc32(table_id.encode()) % partitions}.{table_id}"


def envelope_ends_hand(data: bytes, hand_id: str) -> bool:
    """True if the stored envelope holds ``HandEnded`` for ``hand_id``."""
    for event in decode_envelope(data).events:
        if event.type != HAND_ENDED:
            continue
        try:
            payload = json.loads(event.payload)
        except ValueError:
            continue
        if isinstance(payload, dict) and payload.get("hand_id") == hand_id:
            return True
    return False


class JetStreamHandLog:
    """Reads the table's subject from the start with an ordered consumer until caught up."""

    def __init__(self, js: JetStreamContext, *, stream: str, partitions: int, timeout: float = 5.0) -> None:
        self._js = js
        self._stream = stream
        self._partitions = partitions
        self._timeout = timeout

    async def hand_ended(self, table_id: str, hand_id: str) -> bool:
        subject = table_subject(table_id, self._partitions)
        try:
            info = await self._js.stream_info(self._stream, subjects_filter=subject)
        except NotFoundError:
            return False
        if not (info.state.subjects or {}).get(subject):
            return False
        sub = await self._js.subscribe(
            subject, stream=self._stream, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
        )
        try:
            async with asyncio.timeout(self._timeout):
                while True:
                    msg = await sub.next_msg(timeout=self._timeout)
                    if envelope_ends_hand(msg.data, hand_id):
                        return True
                    if msg.metadata.num_pending == 0:
                        return False
        except (TimeoutError, NatsTimeout):
            return False
        finally:
            await sub.unsubscribe()
