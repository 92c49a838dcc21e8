"""One table survives a foreign message on its log (real nats-server, real wallet): garbage
bytes or another stream's envelope on its subject. That table keeps its seats and refuses writes
with LOG_QUARANTINED, before and after a restart, with the player's chips back in cash; the
other tables play on; ``pokerctl replay`` of it exits non-zero with no traceback."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import nats
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.eventstore import RecordedEvent, seal
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.eventstore.subjects import table_subject
from openpoker.ledger.store import SUBJECT as WALLET_SUBJECT
from openpoker.services.table.server import TableServer
from openpoker.services.wallet.server import WalletServer
from openpoker.shell.client import channel, rich_error
from tests.helpers.forgery import next_draft
from tests.integration.table_system import balance, table_service
from tests.services.table.helpers import create, join

pytestmark = pytest.mark.integration

SUBJECT = table_subject("t1")


async def _garbage(js: Any) -> None:
    await js.publish(SUBJECT, b"\xff\xfe not an envelope", stream=TABLE_EVENTS.name)


async def _of_another_stream(js: Any) -> None:
    last = await JetStreamEventStore(js, stream=TABLE_EVENTS.name).last(SUBJECT)
    assert last is not None
    tip = last.envelope
    draft = next_draft(tip, (RecordedEvent(type="PlayerJoined", payload=b"{}"),), stream_id="t2")
    await js.publish(SUBJECT, envelope_codec.encode(seal(draft, tip.hash)), stream=TABLE_EVENTS.name)


async def _replay(nats_url: str, table_id: str = "t1") -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "openpoker.pokerctl",
        "replay",
        "--table",
        table_id,
        "--nats",
        nats_url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return int(proc.returncode or 0), out.decode() + err.decode()


async def _seated(stub: Any, table: str) -> set[str]:
    reply = await stub.GetTable(pb.GetTableRequest(name=table))
    return {s.player_id for s in reply.table.seats if s.player_id}


async def _refused_join(stub: Any, player: str) -> dict[str, str]:
    with pytest.raises(grpc.RpcError) as caught:
        await join(stub, player, 3, table="tables/t1")
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
    return dict(err.metadata)


@pytest.mark.parametrize(
    ("inject", "problem", "replayed"),
    [(_garbage, "undecodable", ""), (_of_another_stream, "wrong stream", "stream 't2'")],
    ids=["garbage", "wrong-stream"],
)
@pytest.mark.parametrize("funded", [("ann", "bob", "cat")])
async def test_one_table_survives_a_foreign_message_and_the_others_play_on(
    nats_url: str, wallet: WalletServer, inject: Callable[[Any], Awaitable[None]], problem: str, replayed: str
) -> None:
    table: TableServer | None = await table_service(nats_url, wallet, "table-a")
    assert table is not None
    nc = await nats.connect(nats_url)
    try:
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub, "t1")
            await create(stub, "t2")
            await join(stub, "ann", 1, buy_in=150, table="tables/t1")
            await inject(nc.jetstream())
            sequence = (await nc.jetstream().get_last_msg(TABLE_EVENTS.name, SUBJECT)).seq
            expected = {"stream": "t1", "sequence": str(sequence), "problem": problem}
            assert await _refused_join(stub, "bob") == expected
            assert await _seated(stub, "tables/t1") == {"ann"}
            await join(stub, "bob", 1, buy_in=100, table="tables/t2")
        await table.stop()
        table = await table_service(nats_url, wallet, "table-b")
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            assert await _seated(stub, "tables/t1") == {"ann"}
            assert await _refused_join(stub, "cat") == expected
            await join(stub, "cat", 2, buy_in=100, table="tables/t2")
            assert await _seated(stub, "tables/t2") == {"bob", "cat"}
        # The refused joins' chips went back; nothing was written past the message.
        assert [await balance(wallet, f"cash/{p}") for p in ("ann", "bob", "cat")] == [850, 900, 900]
        assert (await nc.jetstream().get_last_msg(TABLE_EVENTS.name, SUBJECT)).seq == sequence
        code, printed = await _replay(nats_url)
        assert code != 0, printed
        assert (replayed or f"message {sequence} ") in printed
        assert "Traceback" not in printed
        if replayed:  # once: replay reads the ledger too, and names garbage there (t2 is sound)
            await nc.jetstream().publish(WALLET_SUBJECT, b"\xff\xfe", stream=WALLET_EVENTS.name)
            await table.stop()
            table = None
            code, printed = await _replay(nats_url, "t2")
            assert code != 0, printed
            assert "undecodable at stream sequence" in printed
            assert "Traceback" not in printed
    finally:
        await nc.close()
        if table is not None:
            await table.stop()
