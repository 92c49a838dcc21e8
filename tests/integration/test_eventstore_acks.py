"""The lean ack path (``eventstore.acks.AckInbox``) against a real nats-server: every answer the
server can give is read as ``js.publish`` reads it. (The event-store contract, lost acks and
conflicts included, runs through this path too: ``test_eventstore_contract.py``.)"""

from __future__ import annotations

import asyncio

import nats
import nats.errors
import pytest
from nats.aio.client import Client as Nats
from nats.js.errors import APIError, BadRequestError, NoStreamResponseError

from openpoker.eventstore.acks import AckInbox

STREAM = "ACKS"


@pytest.fixture
async def nc(nc: Nats) -> Nats:
    """The shared client, with this module's stream."""
    await nc.jetstream().add_stream(name=STREAM, subjects=["acks.>"], duplicate_window=60)
    return nc


async def test_acks_carry_the_sequence_and_duplicates(nc: Nats) -> None:
    inbox = AckInbox(nc)
    first = await inbox.publish("acks.t1", b"a", headers={"Nats-Msg-Id": "m1"}, stream=STREAM, ack_wait=2)
    again = await inbox.publish("acks.t1", b"a", headers={"Nats-Msg-Id": "m1"}, stream=STREAM, ack_wait=2)
    second = await inbox.publish("acks.t1", b"b", headers={"Nats-Msg-Id": "m2"}, stream=STREAM, ack_wait=2)
    assert (first.stream, first.seq, bool(first.duplicate)) == (STREAM, 1, False)
    assert (again.seq, again.duplicate) == (1, True)
    assert second.seq == 2
    stored = await nc.jetstream().get_msg(STREAM, 2)
    assert stored.data == b"b"


async def test_many_appends_at_once_each_get_their_own_ack(nc: Nats) -> None:
    inbox = AckInbox(nc)  # the first publishes race to make the one subscription
    acks = await asyncio.gather(
        *(
            inbox.publish(f"acks.t{k}", str(k).encode(), headers={}, stream=STREAM, ack_wait=5)
            for k in range(60)
        )
    )
    assert sorted(a.seq for a in acks) == list(range(1, 61))
    for k, ack in enumerate(acks):
        assert (await nc.jetstream().get_msg(STREAM, ack.seq)).data == str(k).encode()


async def test_a_wrong_last_sequence_is_the_api_error_with_its_code(nc: Nats) -> None:
    inbox = AckInbox(nc)
    await inbox.publish("acks.t1", b"a", headers={}, stream=STREAM, ack_wait=2)
    with pytest.raises(BadRequestError) as caught:
        await inbox.publish(
            "acks.t1",
            b"b",
            headers={"Nats-Expected-Last-Subject-Sequence": "0"},
            stream=STREAM,
            ack_wait=2,
        )
    assert caught.value.err_code == 10071


async def test_another_stream_capturing_the_subject_is_refused(nc: Nats) -> None:
    with pytest.raises(APIError) as caught:
        await AckInbox(nc).publish("acks.t1", b"a", headers={}, stream="OTHER", ack_wait=2)
    assert caught.value.err_code == 10060  # expected stream does not match
    assert (await nc.jetstream().stream_info(STREAM)).state.messages == 0


async def test_no_stream_on_the_subject_is_no_responders(nc: Nats) -> None:
    with pytest.raises(NoStreamResponseError):
        await AckInbox(nc).publish("elsewhere.t1", b"a", headers={}, stream=STREAM, ack_wait=2)


async def test_a_reply_that_never_comes_times_out(nc: Nats) -> None:
    silent = await nc.subscribe("quiet.t1")  # a responder exists (no 503) but never answers
    try:
        with pytest.raises(nats.errors.TimeoutError):
            await AckInbox(nc).publish("quiet.t1", b"a", headers={}, stream=STREAM, ack_wait=0.2)
    finally:
        await silent.unsubscribe()
