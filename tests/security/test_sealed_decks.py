"""Decks only the table can open, on a running secure system: rng sends no card in clear, and the
table refuses a deck that does not open for its table, hand and commitment, or is not exactly the
game's deck. The test holds the dealer's certificate, so each refusal is the deck's, not the
caller's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest

from openpoker.api.rng.v1 import rng_service_pb2 as rpb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as rgrpc
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.engine.cards import STANDARD_DECK
from openpoker.pokerctl.bots import table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import channel, rich_error
from openpoker.shell.tls import TlsFiles
from openpoker.shuffle.deck_seal import DeckKeys, load_deck_keys, open_deck, seal_deck
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TABLE = "sealed-1"
CODES = "".join(str(c) for c in STANDARD_DECK)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("sealed"), secure=True) as local:
        yield local


def keys(system: LocalSystem) -> DeckKeys:
    return load_deck_keys(system.data_dir / "secrets" / "deck-keys.json")


class AsDealer:
    def __init__(self, system: LocalSystem) -> None:
        assert system.pki is not None
        dealer = TlsFiles.from_pki(system.pki, "dealer")
        self.chans = [channel(system.targets["table"], dealer), channel(system.targets["rng"], dealer)]
        self.table: Any = tgrpc.TableServiceStub(self.chans[0])
        self.rng: Any = rgrpc.RngServiceStub(self.chans[1])

    async def close(self) -> None:
        for chan in self.chans:
            await chan.close()


@pytest.fixture
async def dealer(system: LocalSystem) -> AsyncIterator[AsDealer]:
    d = AsDealer(system)
    try:
        yield d
    finally:
        await d.close()


async def table_version(system: LocalSystem) -> int:
    async with channel(system.targets["table"], system.tls) as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        with_table = await stub.GetTable(tpb.GetTableRequest(name=f"tables/{TABLE}"), timeout=5)
        return int(with_table.table.version)


async def created(system: LocalSystem) -> None:
    async with channel(system.targets["table"], system.tls) as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        config = table_config("holdem", "nl", clock_ms=60_000)
        await stub.CreateTable(
            tpb.CreateTableRequest(request_id=f"create-{TABLE}", table_id=TABLE, config=config), timeout=5
        )


async def test_rng_sends_the_deck_sealed_never_in_clear(system: LocalSystem, dealer: AsDealer) -> None:
    shuffled = await dealer.rng.Shuffle(
        rpb.ShuffleRequest(request_id=str(uuid.uuid4()), table_id="t-rng", hand_id="h-rng", deck_size=52),
        timeout=5,
    )
    assert "cards" not in rpb.ShuffleResponse.DESCRIPTOR.fields_by_name
    opened = open_deck(
        keys(system), shuffled.sealed_deck, table_id="t-rng", hand_id="h-rng", commitment=shuffled.commitment
    )
    assert len(opened) == 104
    # No card code in clear anywhere in the reply.
    wire = shuffled.SerializeToString()
    assert opened.encode() not in wire
    assert opened[:8].encode() not in wire


def _flip_last(sealed: bytes) -> bytes:
    return sealed[:-1] + bytes([sealed[-1] ^ 1])


def _start(hand_id: str, sealed: bytes, commitment: str = "c" * 64) -> tpb.StartHandRequest:
    return tpb.StartHandRequest(
        request_id=str(uuid.uuid4()),
        table=f"tables/{TABLE}",
        hand_id=hand_id,
        deck_commitment=commitment,
        sealed_deck=sealed,
    )


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("clear", "SEALED_DECK_INVALID"),
        ("other_hand", "SEALED_DECK_INVALID"),
        ("other_table", "SEALED_DECK_INVALID"),
        ("other_commitment", "SEALED_DECK_INVALID"),
        ("tampered", "SEALED_DECK_INVALID"),
        ("foreign_key", "SEALED_DECK_INVALID"),
        ("short", "INVALID_DECK"),
        ("duplicate", "INVALID_DECK"),
    ],
)
async def test_the_table_refuses_a_deck_that_is_not_this_hands(
    system: LocalSystem, dealer: AsDealer, case: str, reason: str
) -> None:
    await created(system)
    before = await table_version(system)
    hand = f"h-{case}"
    bound = {"table_id": TABLE, "hand_id": hand, "commitment": "c" * 64}
    k = keys(system)
    sealed = {
        "clear": CODES.encode(),
        "other_hand": seal_deck(k, CODES, **{**bound, "hand_id": "h-else"}),
        "other_table": seal_deck(k, CODES, **{**bound, "table_id": "t-else"}),
        "other_commitment": seal_deck(k, CODES, **{**bound, "commitment": "d" * 64}),
        "tampered": _flip_last(seal_deck(k, CODES, **bound)),
        "foreign_key": seal_deck(DeckKeys(keys={k.current: bytes(32)}, current=k.current), CODES, **bound),
        "short": seal_deck(k, CODES[:-2], **bound),
        "duplicate": seal_deck(k, CODES[:-2] + CODES[:2], **bound),
    }[case]
    with pytest.raises(grpc.RpcError) as err:
        await dealer.table.StartHand(_start(hand, sealed), timeout=5)
    rich = rich_error(err.value)
    assert (rich.code, rich.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert await table_version(system) == before
