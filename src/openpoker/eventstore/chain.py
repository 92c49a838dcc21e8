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
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from openpoker.eventstore.envelope import Draft, Envelope
from openpoker.eventstore.signing import Signer

GENESIS = bytes(32)
_TAG = b"poker-envelope/v1"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


_LEN = struct.Struct(">I").pack
_INT = struct.Struct(">4sQ").pack  # an unsigned 8-byte integer field with its length
_SIGNED = struct.Struct(">4sq").pack
_EIGHT = _LEN(8)


def _micros(when: dt.datetime) -> int:
    if when.tzinfo is None:
        raise ValueError("recorded_at must be timezone-aware")
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def canonical_bytes(envelope: Envelope | Draft, prev_hash: bytes) -> bytes:
    stream_id = envelope.stream_id.encode()
    command_id = envelope.command_id.encode()
    rules_version = envelope.rules_version.encode()
    engine_version = envelope.engine_version.encode()
    causation_id = envelope.causation_id.encode()
    correlation_id = envelope.correlation_id.encode()
    out: list[bytes] = [
        _TAG,
        _LEN(len(stream_id)),
        stream_id,
        _INT(_EIGHT, envelope.version),
        _LEN(len(command_id)),
        command_id,
        _LEN(len(prev_hash)),
        prev_hash,
        _INT(_EIGHT, envelope.owner_epoch),
        _LEN(len(rules_version)),
        rules_version,
        _LEN(len(engine_version)),
        engine_version,
        _SIGNED(_EIGHT, _micros(envelope.recorded_at)),
        _LEN(len(causation_id)),
        causation_id,
        _LEN(len(correlation_id)),
        correlation_id,
        _LEN(4),
        _LEN(len(envelope.events)),
    ]
    for event in envelope.events:
        kind = event.type.encode()
        out += (_LEN(len(kind)), kind, _LEN(len(event.payload)), event.payload)
    return b"".join(out)


def compute_hash(envelope: Envelope | Draft, prev_hash: bytes) -> bytes:
    return hashlib.sha256(canonical_bytes(envelope, prev_hash)).digest()


def seal(draft: Draft, prev_hash: bytes, *, signer: Signer | None = None) -> Envelope:
    """Chain a draft onto the previous envelope's hash (``GENESIS`` for version 1), signed by
    ``signer`` when given (``eventstore.signing``; unsigned only where no key is configured)."""
    hash_ = compute_hash(draft, prev_hash)
    return Envelope(
        stream_id=draft.stream_id,
        version=draft.version,
        command_id=draft.command_id,
        prev_hash=prev_hash,
        hash=hash_,
        owner_epoch=draft.owner_epoch,
        rules_version=draft.rules_version,
        engine_version=draft.engine_version,
        events=draft.events,
        recorded_at=draft.recorded_at,
        causation_id=draft.causation_id,
        correlation_id=draft.correlation_id,
        key_id="" if signer is None else signer.key_id,
        signature=b"" if signer is None else signer.signature(hash_),
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
