"""The rng service end to end on a real nats-server: KV-stored sealed seeds, the hand-end check
on the table's JetStream subject, restarts, and the seed key."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from nats.aio.client import Client

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as pb_grpc
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, ensure_stream
from openpoker.services.rng.config import RngConfig
from openpoker.services.rng.server import RngServer, start
from openpoker.services.rng.store import JetStreamShuffleStore
from openpoker.shell.client import channel, rich_error
from openpoker.shuffle import derive_deck
from tests.services.rng.rig import cards_of
from tests.services.rng.tablelog import TableWriter

pytestmark = pytest.mark.integration
KEY = "42" * 32
DEALER = (("x-caller", "dealer"),)


@pytest.fixture
async def nc(nc: Client) -> Client:
    """The shared client, with the table events stream."""
    await ensure_stream(nc.jetstream(), TABLE_EVENTS)
    return nc


def config(nats_url: str, key: str = KEY) -> RngConfig:
    return RngConfig.from_env(
        {
            "POKER_INSECURE": "true",
            "POKER_NATS_URL": nats_url,
            "POKER_RNG_PORT": "0",
            "POKER_RNG_SEED_KEY": key,
        }
    )


async def with_server(cfg: RngConfig) -> AsyncIterator[tuple[RngServer, pb_grpc.RngServiceAsyncStub]]:
    server = await start(cfg)
    chan = channel(server.server.address)
    try:
        yield server, pb_grpc.RngServiceStub(chan)
    finally:
        await chan.close()
        await server.stop()


def shuffle_request(hand: str, table: str = "t-1") -> pb.ShuffleRequest:
    return pb.ShuffleRequest(request_id=f"r-{hand}", table_id=table, hand_id=hand, deck_size=52)


async def test_shuffle_reveal_verify_on_jetstream(nats_url: str, nc: Client) -> None:
    table = TableWriter(JetStreamEventStore(nc.jetstream(), stream="TABLE_EVENTS"), "t-1")
    async for _server, stub in with_server(config(nats_url)):
        shuffled = await stub.Shuffle(shuffle_request("h-1"), metadata=DEALER)
        await table.play_hand("h-1", end=False)
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await stub.RevealSeed(pb.RevealSeedRequest(hand_id="h-1"), metadata=DEALER)
        assert rich_error(e.value).reason == "HAND_NOT_ENDED"
        await table.append(("HandEnded", {"type": "HandEnded", "hand_id": "h-1"}))
        revealed = await stub.RevealSeed(pb.RevealSeedRequest(hand_id="h-1"), metadata=DEALER)
        record = revealed.record
        assert record.commitment == shuffled.commitment
        assert [str(c) for c in derive_deck(record.seed, "h-1", 52)] == cards_of(shuffled)
        record.dealt.extend(pb.DealtCard(position=i, card=c) for i, c in enumerate(cards_of(shuffled)[:20]))
        assert (await stub.Verify(pb.VerifyRequest(record=record))).ok

    # The sealed seed is in the KV bucket, not the plaintext.
    store = await JetStreamShuffleStore.open(nc.jetstream(), "RNG_SHUFFLES")
    stored = await store.get("h-1")
    assert stored is not None
    assert record.seed not in stored.sealed_seed
    assert stored.commitment == shuffled.commitment


async def test_restart_keeps_the_seed_and_the_key_guards_it(nats_url: str, nc: Client) -> None:
    async for _server, stub in with_server(config(nats_url)):
        first = await stub.Shuffle(shuffle_request("h-9"), metadata=DEALER)
    # A new process with the same key: the retry returns the stored shuffle, not a new one.
    async for _server, stub in with_server(config(nats_url)):
        again = await stub.Shuffle(shuffle_request("h-9"), metadata=DEALER)
        assert (again.commitment, cards_of(again)) == (first.commitment, cards_of(first))
    # With the wrong key the seed cannot be unsealed: DATA_LOSS, never a fresh seed.
    async for _server, stub in with_server(config(nats_url, key="17" * 32)):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await stub.Shuffle(shuffle_request("h-9"), metadata=DEALER)
        assert (e.value.code(), rich_error(e.value).reason) == (grpc.StatusCode.DATA_LOSS, "SEED_UNSEALABLE")


async def test_concurrent_shuffles_of_one_hand_agree(nats_url: str) -> None:

    async for _server, stub in with_server(config(nats_url)):
        responses = await asyncio.gather(
            *(stub.Shuffle(shuffle_request("h-r"), metadata=DEALER) for _ in range(8))
        )
        assert len({r.commitment for r in responses}) == 1
        assert len({tuple(cards_of(r)) for r in responses}) == 1
