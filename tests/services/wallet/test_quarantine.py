"""A foreign or corrupt message on the wallet's log quarantines the wallet: it keeps every
balance folded before the message, serves reads and refuses every write (LOG_QUARANTINED),
instead of crashing on load or taking the message (eventstore.loading)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import REGISTRY
from structlog.testing import capture_logs

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.eventstore import Envelope, RecordedEvent, seal
from openpoker.eventstore.loading import Problem
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.ledger.codec import encode_state
from openpoker.ledger.store import SUBJECT, WalletStore
from openpoker.services.wallet.app import WalletApp
from tests.helpers.forgery import next_draft

from .conftest import CASHIER, Rig, start_rig
from .test_service import deposit, failure

# Events no ledger folds: the kind of forged message that made a restart end in a KeyError.
FOREIGN_EVENTS = (RecordedEvent(type="TransfersCommitted", payload=b'{"type":"TransfersCommitted"}'),)


async def _forged(
    rig: Rig, *, stream_id: str = "wallet", events: tuple[RecordedEvent, ...] = FOREIGN_EVENTS
) -> Envelope:
    """An envelope chained onto the wallet's last one with the wallet's next message id."""
    last = await rig.events.last(SUBJECT)
    assert last is not None
    tip = last.envelope
    return seal(next_draft(tip, events, stream_id=stream_id), tip.hash)


async def _balances(rig: Rig) -> dict[str, int]:
    out = {}
    for account in ("cash/alice", "cash/bob"):
        reply = await rig.stub.GetBalance(pb.GetBalanceRequest(account=account), metadata=CASHIER)
        out[account] = reply.balance.balance
    return out


@pytest.fixture
async def funded() -> AsyncIterator[Rig]:
    rig = await start_rig(InMemoryEventStore())
    try:
        await deposit(rig, "alice", 700)
        await deposit(rig, "bob", 300)
        yield rig
    finally:
        await rig.close()


async def _assert_quarantined(rig: Rig, problem: Problem, sequence: int) -> None:
    code, reason, meta = await failure(lambda: deposit(rig, "alice", 5, rid="after"))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
    assert meta == {"stream": "wallet", "sequence": str(sequence), "problem": str(problem)}
    assert rig.app.quarantined is not None
    assert rig.app.quarantined.problem is problem
    assert (
        REGISTRY.get_sample_value("openpoker_log_quarantined", {"service": "wallet", "stream": "wallet"}) == 1
    )


async def test_a_foreign_message_under_the_wallets_next_id_is_never_taken_for_its_write(funded: Rig) -> None:
    rig = funded
    before = await _balances(rig)
    forged = await _forged(rig)
    last = await rig.events.last(SUBJECT)
    assert last is not None
    # Published first, with the id the wallet's next write will carry: its write is a "duplicate".
    landed = await rig.events.append(SUBJECT, forged, expected_sequence=last.sequence)
    with capture_logs() as logs:
        code, reason, meta = await failure(lambda: deposit(rig, "alice", 50, rid="d-next"))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
    assert meta == {"stream": "wallet", "sequence": str(landed.sequence), "problem": "not our envelope"}
    corrupt = [e for e in logs if e["event"] == "log.corrupt"]
    assert len(corrupt) == 1
    assert corrupt[0]["sequence"] == landed.sequence
    assert await _balances(rig) == before
    await _assert_quarantined(rig, Problem.NOT_OURS, landed.sequence)
    # A restart: the forged events do not fold, so it starts quarantined with the same state.
    again = WalletApp(WalletStore(rig.events), currency="CHIPS")
    await again.start()
    assert encode_state(again.state) == encode_state(rig.app.state)
    assert again.quarantined is not None
    assert again.quarantined.problem is Problem.EVENTS_DO_NOT_FOLD


async def test_a_rechained_envelope_of_another_stream_quarantines_on_reload(funded: Rig) -> None:
    rig = funded
    before = await _balances(rig)
    last = await rig.events.last(SUBJECT)
    assert last is not None
    forged = await _forged(rig, stream_id="t1")
    landed = await rig.events.append(SUBJECT, forged, expected_sequence=last.sequence)
    # The wallet's write conflicts (the subject moved), it reloads and finds the message.
    await _assert_quarantined(rig, Problem.WRONG_STREAM, landed.sequence)
    assert await _balances(rig) == before


async def test_a_well_formed_log_is_not_quarantined(funded: Rig) -> None:
    await deposit(funded, "alice", 1, rid="more")
    assert funded.app.quarantined is None
