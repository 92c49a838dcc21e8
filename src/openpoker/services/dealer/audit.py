"""The audit record of revealed seeds: stream ``RNG_AUDIT``, subject
``poker.audit.rng.<table_id>``, one JSON message per hand (``Nats-Msg-Id`` = ``reveal:<hand_id>``,
so a retried or repeated reveal is stored once within the duplicate window and readers keep the
first record per hand).

Message (UTF-8 JSON): ``{"table_id", "hand_id", "hand_number", "algorithm_version",
"deck_size", "commitment", "seed"}`` with the commitment and seed in lowercase hex. Together with
the table log (the cards dealt, ``HandStarted.commitment``) it is what the dispute replay needs
to re-derive every card (``shuffle.verify_record``). The stream is file-backed and denies delete
and purge, like the other logs that are evidence.
"""

from __future__ import annotations

import json

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from openpoker.eventstore import streams
from openpoker.eventstore.streams import StreamSettings, ensure_stream
from openpoker.services.dealer.ports import Reveal

RNG_AUDIT = streams.RNG_AUDIT


def audit_subject(table_id: str) -> str:
    return f"poker.audit.rng.{table_id}"


def encode_reveal(r: Reveal) -> bytes:
    doc = {
        "table_id": r.table_id,
        "hand_id": r.hand_id,
        "hand_number": r.hand_number,
        "algorithm_version": r.version,
        "deck_size": r.deck_size,
        "commitment": r.commitment,
        "seed": r.seed.hex(),
    }
    return json.dumps(doc, sort_keys=True).encode()


def decode_reveal(data: bytes) -> Reveal:
    doc = json.loads(data)
    return Reveal(
        table_id=doc["table_id"],
        hand_id=doc["hand_id"],
        hand_number=int(doc["hand_number"]),
        version=doc["algorithm_version"],
        deck_size=int(doc["deck_size"]),
        commitment=doc["commitment"],
        seed=bytes.fromhex(doc["seed"]),
    )


class InMemoryAudit:
    def __init__(self) -> None:
        self.records: dict[str, Reveal] = {}

    async def record_reveal(self, reveal: Reveal) -> None:
        self.records.setdefault(reveal.hand_id, reveal)


class JetStreamAudit:
    def __init__(self, js: JetStreamContext, *, timeout: float = 2.0) -> None:
        self._js = js
        self._timeout = timeout

    async def ensure(self, replicas: int = 1) -> None:
        await ensure_stream(
            self._js, StreamSettings(name=RNG_AUDIT.name, subjects=RNG_AUDIT.subjects, replicas=replicas)
        )

    async def record_reveal(self, reveal: Reveal) -> None:
        await self._js.publish(
            audit_subject(reveal.table_id),
            encode_reveal(reveal),
            timeout=self._timeout,
            headers={"Nats-Msg-Id": f"reveal:{reveal.hand_id}"},
        )


async def read_reveals(js: JetStreamContext, table_id: str | None = None) -> list[Reveal]:
    """Every revealed seed (of one table, or all), first record per hand, in stream order."""
    subject = audit_subject(table_id) if table_id else "poker.audit.rng.>"
    try:
        info = await js.stream_info(RNG_AUDIT.name)
    except NotFoundError:  # no stream yet: nothing revealed
        return []
    last = info.state.last_seq
    out: dict[str, Reveal] = {}
    if not last:
        return []
    sub = await js.subscribe(subject, ordered_consumer=True, stream=RNG_AUDIT.name)
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1.0)
            except TimeoutError:
                break
            r = decode_reveal(msg.data)
            out.setdefault(r.hand_id, r)
            if msg.metadata.sequence.stream >= last:
                break
    finally:
        await sub.unsubscribe()
    return list(out.values())
