"""Event payloads: ``engine.codec``'s JSON as compact bytes, decoded once per payload.

That the codec writes the stored format is ``tests/engine/test_codec.py``'s part."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from openpoker.engine import codec
from openpoker.engine.hand_events import SeatAmount
from openpoker.eventstore.envelope import RecordedEvent
from openpoker.pokerctl.cmd_sim import play_session
from openpoker.tablelog import payload, store
from openpoker.tablelog.events import HandVoided, OwnerChanged


def _codec_json(event: object) -> bytes:
    return json.dumps(codec.encode(event), separators=(",", ":")).encode()


def test_payloads_are_the_codecs_compact_json_and_decode_back() -> None:
    voided = HandVoided(hand_id="h1", reason="rng away", returned=(SeatAmount(seat=0, amount=5),))
    for event in (*play_session(1, 4).events, OwnerChanged(epoch=3, owner="table-1"), voided):
        data = payload.encode(event)
        assert data == _codec_json(event)
        assert codec.decode(json.loads(data)) == event


def test_values_the_codec_refuses_raise_its_error() -> None:
    @dataclass(frozen=True)
    class Stranger:
        x: int

    with pytest.raises(codec.CodecError):
        payload.encode(Stranger(x=1))
    with pytest.raises(codec.CodecError):
        payload.encode(OwnerChanged(epoch=1, owner=Stranger(x=1)))  # type: ignore[arg-type]
    with pytest.raises(codec.CodecError):
        payload.encode(7)


def test_decoded_payloads_are_shared_and_equal_to_a_fresh_decode() -> None:
    session = play_session(3, 6)
    for event in session.events:
        recorded = store.to_recorded(event)
        assert recorded.payload == _codec_json(event)
        # The writer's own event, and what a fresh decode of the bytes gives, are equal values.
        assert store.from_recorded(recorded) == codec.decode(json.loads(recorded.payload)) == event
        copy = RecordedEvent(type=recorded.type, payload=bytes(bytearray(recorded.payload)))
        assert store.from_recorded(copy) is store.from_recorded(recorded)  # decoded once


def test_the_decode_cache_is_bounded() -> None:
    first = store.to_recorded(OwnerChanged(epoch=10**9, owner="oldest"))
    for epoch in range(store.DECODED_KEPT):  # as many distinct payloads as the cache holds
        store.to_recorded(OwnerChanged(epoch=epoch, owner="table-1"))
    last = store.to_recorded(OwnerChanged(epoch=-1, owner="newest"))
    assert len(store._decoded) <= store.DECODED_KEPT
    assert first.payload not in store._decoded  # the oldest went first
    assert store._decoded[last.payload] == OwnerChanged(epoch=-1, owner="newest")
    assert store.from_recorded(first) == OwnerChanged(epoch=10**9, owner="oldest")  # decoded again
