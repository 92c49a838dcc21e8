"""The SHA-256 hash chain across a stream's envelopes.

``hash = SHA-256(canonical_bytes(envelope))`` where the canonical bytes are a fixed encoding of
every field except ``hash`` (including ``prev_hash``), so any change to any recorded field, or any
removed, inserted or reordered envelope, breaks the chain from that point on. The encoding does
not depend on protobuf serialisation (which is not canonical across implementations): a domain
tag, then each field as a big-endian 4-byte length and its bytes (integers as 8-byte big-endian,
the time as integer microseconds since the epoch in UTC, each event as its type and payload).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from eventstore.envelope import Draft, Envelope

GENESIS = bytes(32)
_TAG = b"poker-envelope/v1"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _field(out: list[bytes], value: bytes) -> None:
    out.append(len(value).to_bytes(4, "big"))
    out.append(value)


def _micros(when: dt.datetime) -> int:
    if when.tzinfo is None:
        raise ValueError("recorded_at must be timezone-aware")
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def canonical_bytes(envelope: Envelope | Draft, prev_hash: bytes) -> bytes:
    out: list[bytes] = [_TAG]
    _field(out, envelope.stream_id.encode())
    _field(out, envelope.version.to_bytes(8, "big"))
    _field(out, envelope.command_id.encode())
    _field(out, prev_hash)
    _field(out, envelope.owner_epoch.to_bytes(8, "big"))
    _field(out, envelope.rules_version.encode())
    _field(out, envelope.engine_version.encode())
    _field(out, _micros(envelope.recorded_at).to_bytes(8, "big", signed=True))
    _field(out, envelope.causation_id.encode())
    _field(out, envelope.correlation_id.encode())
    _field(out, len(envelope.events).to_bytes(4, "big"))
    for event in envelope.events:
        _field(out, event.type.encode())
        _field(out, event.payload)
    return b"".join(out)


def compute_hash(envelope: Envelope | Draft, prev_hash: bytes) -> bytes:
    return hashlib.sha256(canonical_bytes(envelope, prev_hash)).digest()


def seal(draft: Draft, prev_hash: bytes) -> Envelope:
    """Chain a draft onto the previous envelope's hash (``GENESIS`` for version 1)."""
    return Envelope(
        stream_id=draft.stream_id,
        version=draft.version,
        command_id=draft.command_id,
        prev_hash=prev_hash,
        hash=compute_hash(draft, prev_hash),
        owner_epoch=draft.owner_epoch,
        rules_version=draft.rules_version,
        engine_version=draft.engine_version,
        events=draft.events,
        recorded_at=draft.recorded_at,
        causation_id=draft.causation_id,
        correlation_id=draft.correlation_id,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainReport:
    """Result of ``verify_chain``: ``ok``, or the first broken version and what is wrong."""

    checked: int
    first_broken_version: int | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.first_broken_version is None


def verify_chain(envelopes: Iterable[Envelope], *, start_hash: bytes = GENESIS) -> ChainReport:
    """Check a stream's envelopes in order from version 1 (or from a known ``start_hash``).

    Checks, per envelope: one stream id throughout; versions gapless (+1 each); ``prev_hash``
    equals the previous envelope's hash; ``hash`` recomputes; owner epochs never decrease.
    Reports the first envelope where any check fails.
    """
    prev_hash = start_hash
    prev_version: int | None = None
    prev_epoch = 0
    stream_id: str | None = None
    checked = 0
    for env in envelopes:
        problem = ""
        if stream_id is not None and env.stream_id != stream_id:
            problem = f"stream id {env.stream_id!r} in stream {stream_id!r}"
        elif prev_version is not None and env.version != prev_version + 1:
            problem = f"version {env.version} follows {prev_version}"
        elif prev_version is None and start_hash == GENESIS and env.version != 1:
            problem = f"first version is {env.version}, not 1"
        elif env.prev_hash != prev_hash:
            problem = "prev_hash does not match the previous envelope's hash"
        elif compute_hash(env, env.prev_hash) != env.hash:
            problem = "hash does not match the envelope's content"
        elif env.owner_epoch < prev_epoch:
            problem = f"owner epoch {env.owner_epoch} after {prev_epoch}"
        if problem:
            return ChainReport(checked=checked, first_broken_version=env.version, problem=problem)
        stream_id = env.stream_id
        prev_hash, prev_version, prev_epoch = env.hash, env.version, env.owner_epoch
        checked += 1
    return ChainReport(checked=checked)
