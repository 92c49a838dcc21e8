"""Envelope <-> protobuf bytes (``poker.common.v1.Envelope``), the stored message payload."""

from __future__ import annotations

import datetime as dt

from google.protobuf.timestamp_pb2 import Timestamp

from openpoker.api.common.v1 import envelope_pb2
from openpoker.eventstore.envelope import Envelope, RecordedEvent

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _stamp(when: dt.datetime) -> Timestamp:
    """``Timestamp.FromDatetime`` without its pure-Python detour through ``utctimetuple`` (on
    every append); a naive time is taken as UTC, as ``FromDatetime`` does."""
    delta = (when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)) - _EPOCH
    return Timestamp(seconds=delta.days * 86_400 + delta.seconds, nanos=delta.microseconds * 1000)


# Timestamp's valid range (0001-01-01 to 9999-12-31), as ``Timestamp.ToDatetime`` checks it.
_MIN_SECONDS, _MAX_SECONDS = -62_135_596_800, 253_402_300_799


def _when(stamp: Timestamp) -> dt.datetime:
    """``stamp.ToDatetime(tzinfo=dt.UTC)`` without its pure-Python detours (every read of an
    envelope); an invalid timestamp still goes to ``ToDatetime``, which raises."""
    seconds, nanos = stamp.seconds, stamp.nanos
    if not (_MIN_SECONDS <= seconds <= _MAX_SECONDS and 0 <= nanos < 1_000_000_000):
        return stamp.ToDatetime(tzinfo=dt.UTC)
    return _EPOCH + dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def to_proto(env: Envelope) -> envelope_pb2.Envelope:
    stamp = _stamp(env.recorded_at)
    return envelope_pb2.Envelope(
        stream_id=env.stream_id,
        version=env.version,
        command_id=env.command_id,
        prev_hash=env.prev_hash,
        hash=env.hash,
        owner_epoch=env.owner_epoch,
        rules_version=env.rules_version,
        engine_version=env.engine_version,
        events=[envelope_pb2.Event(type=e.type, payload=e.payload) for e in env.events],
        recorded_at=stamp,
        causation_id=env.causation_id,
        correlation_id=env.correlation_id,
        key_id=env.key_id,
        signature=env.signature,
        batch_index=env.batch_index,
        batch_size=env.batch_size,
        batch_proof=env.batch_proof,
    )


def from_proto(msg: envelope_pb2.Envelope) -> Envelope:
    return Envelope(
        stream_id=msg.stream_id,
        version=msg.version,
        command_id=msg.command_id,
        prev_hash=msg.prev_hash,
        hash=msg.hash,
        owner_epoch=msg.owner_epoch,
        rules_version=msg.rules_version,
        engine_version=msg.engine_version,
        events=tuple(RecordedEvent(type=e.type, payload=e.payload) for e in msg.events),
        recorded_at=_when(msg.recorded_at),
        causation_id=msg.causation_id,
        correlation_id=msg.correlation_id,
        key_id=msg.key_id,
        signature=msg.signature,
        batch_index=msg.batch_index,
        batch_size=msg.batch_size,
        batch_proof=tuple(msg.batch_proof),
    )


def encode(env: Envelope) -> bytes:
    return to_proto(env).SerializeToString(deterministic=True)


def decode(data: bytes) -> Envelope:
    msg = envelope_pb2.Envelope()
    msg.ParseFromString(data)
    return from_proto(msg)
