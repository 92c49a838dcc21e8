"""Envelope <-> protobuf bytes (``poker.common.v1.Envelope``), the stored message payload."""

from __future__ import annotations

import datetime as dt

from google.protobuf.timestamp_pb2 import Timestamp

from eventstore.envelope import Envelope, RecordedEvent
from poker.common.v1 import envelope_pb2

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _stamp(when: dt.datetime) -> Timestamp:
    """``Timestamp.FromDatetime`` without its pure-Python detour through ``utctimetuple`` (on
    every append); a naive time is taken as UTC, as ``FromDatetime`` does."""
    delta = (when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)) - _EPOCH
    return Timestamp(seconds=delta.days * 86_400 + delta.seconds, nanos=delta.microseconds * 1000)


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
        recorded_at=msg.recorded_at.ToDatetime(tzinfo=dt.UTC),
        causation_id=msg.causation_id,
        correlation_id=msg.correlation_id,
    )


def encode(env: Envelope) -> bytes:
    return to_proto(env).SerializeToString(deterministic=True)


def decode(data: bytes) -> Envelope:
    msg = envelope_pb2.Envelope()
    msg.ParseFromString(data)
    return from_proto(msg)
