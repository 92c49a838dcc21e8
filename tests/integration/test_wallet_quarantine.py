"""The wallet survives a foreign message on its stream without losing or changing a balance
(real nats-server): garbage bytes, a foreign envelope published under the wallet's next
``Nats-Msg-Id`` before the wallet's own write, and an envelope of another stream chained onto
the wallet's. The running wallet, and a restarted one, keep every balance, serve reads and
refuse writes with LOG_QUARANTINED naming the message's stream sequence (their health,
``WalletService/writes``, NOT_SERVING), and
``pokerctl ledger audit`` names the message and exits 1, with no traceback."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import nats
import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from openpoker.eventstore import RecordedEvent, seal
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.jetstream import MSG_ID_HEADER, JetStreamEventStore
from openpoker.eventstore.streams import WALLET_EVENTS
from openpoker.ledger.store import SUBJECT
from openpoker.services.wallet.server import WRITES_HEALTH, WalletServer
from openpoker.shell.client import channel, health_status, rich_error
from tests.helpers.forgery import next_draft
from tests.integration.table_system import CASHIER, balance, deposit, wallet_service

pytestmark = pytest.mark.integration

ACCOUNTS = ("cash/ann", "cash/bob")
# Events no ledger folds: a forged message like those that made a restart end in a KeyError.
FOREIGN_EVENTS = (RecordedEvent(type="TransfersCommitted", payload=b'{"type":"TransfersCommitted"}'),)


async def _balances(wallet: WalletServer) -> dict[str, int]:
    return {account: await balance(wallet, account) for account in ACCOUNTS}


async def _refused(wallet: WalletServer) -> dict[str, str]:
    """A deposit's refusal: LOG_QUARANTINED, with its metadata."""
    async with channel(wallet.server.address) as chan:
        stub: Any = wpb_grpc.WalletServiceStub(chan)
        request = wpb.DepositRequest(request_id=str(uuid.uuid4()), player="ann", amount=5)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.Deposit(request, metadata=CASHIER)
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
    return dict(err.metadata)


async def _writes(wallet: WalletServer) -> str:
    return await health_status(wallet.server.address, WRITES_HEALTH)


async def _until_writes_refused(wallet: WalletServer) -> None:
    for _ in range(100):
        if await _writes(wallet) == "NOT_SERVING":
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the writes' health never became NOT_SERVING")


async def _last_sequence(js: Any) -> int:
    return int((await js.get_last_msg(WALLET_EVENTS.name, SUBJECT)).seq)


async def _ledger_audit(nats_url: str) -> tuple[int, str, str]:
    """``pokerctl ledger audit`` as an operator runs it: its exit code, stdout and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "openpoker.pokerctl",
        "ledger",
        "audit",
        "--nats",
        nats_url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return int(proc.returncode or 0), out.decode(), err.decode()


Inject = Callable[[Any, JetStreamEventStore], Awaitable[None]]


async def _garbage(js: Any, _: JetStreamEventStore) -> None:
    await js.publish(SUBJECT, b"\xff\xfe not an envelope", stream=WALLET_EVENTS.name)


async def _forged(events: JetStreamEventStore, *, stream_id: str) -> tuple[bytes, str]:
    """An envelope chained onto the wallet's last one, and the wallet's next message id."""
    last = await events.last(SUBJECT)
    assert last is not None
    tip = last.envelope
    envelope = seal(next_draft(tip, FOREIGN_EVENTS, stream_id=stream_id), tip.hash)
    return envelope_codec.encode(envelope), envelope.msg_id


async def _under_the_wallets_id(js: Any, events: JetStreamEventStore) -> None:
    data, msg_id = await _forged(events, stream_id="wallet")
    await js.publish(SUBJECT, data, stream=WALLET_EVENTS.name, headers={MSG_ID_HEADER: msg_id})


async def _of_another_stream(js: Any, events: JetStreamEventStore) -> None:
    data, _ = await _forged(events, stream_id="t1")
    await js.publish(SUBJECT, data, stream=WALLET_EVENTS.name)


@pytest.mark.parametrize(
    ("inject", "problem", "after_restart"),
    [
        (_garbage, "undecodable", "undecodable"),
        (_under_the_wallets_id, "not our envelope", "events do not fold"),
        (_of_another_stream, "wrong stream", "wrong stream"),
    ],
    ids=["garbage", "foreign-msg-id", "wrong-stream"],
)
async def test_the_wallet_survives_a_foreign_message_without_changing_a_balance(
    nats_url: str, inject: Inject, problem: str, after_restart: str
) -> None:
    wallet: WalletServer | None = await wallet_service(nats_url)
    assert wallet is not None
    nc = await nats.connect(nats_url)
    try:
        await deposit(wallet, "ann", 700)
        await deposit(wallet, "bob", 300)
        before = await _balances(wallet)
        assert await _writes(wallet) == "SERVING"
        js = nc.jetstream()
        events = JetStreamEventStore(js, stream=WALLET_EVENTS.name)
        await inject(js, events)
        last = await _last_sequence(js)
        # The running wallet: its next write finds the message and is refused.
        assert await _refused(wallet) == {"stream": "wallet", "sequence": str(last), "problem": problem}
        assert await _balances(wallet) == before
        await _until_writes_refused(wallet)
        await wallet.stop()
        wallet = None
        # A restart starts, folds everything before the message, and stays quarantined.
        wallet = await wallet_service(nats_url)
        assert await _balances(wallet) == before
        meta = await _refused(wallet)
        assert meta == {"stream": "wallet", "sequence": str(last), "problem": after_restart}
        assert await _writes(wallet) == "NOT_SERVING"
        assert await _last_sequence(js) == last  # nothing was written past it
        code, out, err = await _ledger_audit(nats_url)
        assert code == 1, (out, err)
        assert f"{after_restart} at stream sequence {last} (version " in out
        assert "Traceback" not in out + err
    finally:
        await nc.close()
        if wallet is not None:
            await wallet.stop()
