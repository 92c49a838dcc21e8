"""A foreign or corrupt message on one table's log quarantines that table only: reads fold the
good prefix, writes are refused with LOG_QUARANTINED (logged once as ``log.corrupt``), and other
tables keep working, in the running service and after a restart (eventstore.loading)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY
from structlog.testing import capture_logs

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.table_events import ChipsAdded
from openpoker.eventstore import RecordedEvent, seal
from openpoker.eventstore.subjects import table_subject
from openpoker.services.table.ownership import StaticOwnership
from openpoker.shell.client import rich_error
from openpoker.tablelog.store import MemoryTableEvents, to_recorded
from tests.helpers.forgery import next_draft
from tests.services.table.helpers import PARTITIONS, FakeWallet, create, join, serve

# Events no table folds: a forged message's.
FOREIGN_EVENTS = (RecordedEvent(type="PlayerJoined", payload=b'{"type":"PlayerJoined"}'),)


async def _forge(events: MemoryTableEvents, table_id: str, *, stream_id: str | None = None) -> int:
    """Chain a foreign envelope onto ``table_id``'s log; its stream sequence."""
    subject = table_subject(table_id, PARTITIONS)
    last = await events.last(subject)
    assert last is not None
    tip = last.envelope
    # Epoch 0: a message id the writer never uses (see the duplicate-ack test below).
    draft = next_draft(tip, FOREIGN_EVENTS, stream_id=stream_id or table_id, epoch=0)
    landed = await events.append(subject, seal(draft, tip.hash), expected_sequence=last.sequence)
    return landed.sequence


async def _seated(stub: object, table: str) -> set[str]:
    reply = await stub.GetTable(pb.GetTableRequest(name=table))  # type: ignore[attr-defined]
    return {s.player_id for s in reply.table.seats if s.player_id}


async def _drain(call: Any) -> None:
    """Read a stream to its end (a clean end returns)."""
    while await call.read() is not grpc.aio.EOF:
        pass


@pytest.mark.parametrize(("stream_id", "problem"), [(None, "events do not fold"), ("t9", "wrong stream")])
async def test_one_quarantined_table_refuses_writes_and_the_others_play_on(
    stream_id: str | None, problem: str
) -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000, "dan": 1000})
    svc = await serve(events, wallet, StaticOwnership("table-1", 1))
    try:
        await create(svc.stub, "t1")
        await create(svc.stub, "t2")
        await join(svc.stub, "ann", 1, table="tables/t1")
        sequence = await _forge(events, "t1", stream_id=stream_id)
        expected = {"stream": "t1", "sequence": str(sequence), "problem": problem}
        found = {"service": "table", "problem": problem}
        findings = REGISTRY.get_sample_value("openpoker_log_findings_total", found) or 0.0
        with capture_logs() as logs:
            for player in ("bob", "cat"):  # the second is refused from memory, not logged again
                with pytest.raises(grpc.RpcError) as caught:
                    await join(svc.stub, player, 3, table="tables/t1")
                err = rich_error(caught.value)
                assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
                assert dict(err.metadata) == expected
        assert [e["sequence"] for e in logs if e["event"] == "log.corrupt"] == [sequence]
        # The metric an operator alerts on, once per finding (shell.metrics).
        assert REGISTRY.get_sample_value("openpoker_log_findings_total", found) == findings + 1
        assert (
            REGISTRY.get_sample_value("openpoker_log_quarantined", {"service": "table", "stream": "t1"}) == 1
        )
        assert wallet.cash["bob"] == 1000  # the refused join moved no money
        await join(svc.stub, "bob", 1, table="tables/t2")
        assert await _seated(svc.stub, "tables/t2") == {"bob"}
    finally:
        await svc.stop()
    again = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        assert await _seated(again.stub, "tables/t1") == {"ann"}  # the good prefix
        with pytest.raises(grpc.RpcError) as caught:
            await join(again.stub, "dan", 4, table="tables/t1")
        assert dict(rich_error(caught.value).metadata) == expected
        await join(again.stub, "dan", 2, table="tables/t2")
        # A watch shows the good prefix, then ends with the finding instead of folding past it.
        for from_version in (0, 1):
            call = again.stub.WatchTable(pb.WatchTableRequest(name="tables/t1", from_version=from_version))
            if not from_version:
                assert {s.player_id for s in (await call.read()).table.seats if s.player_id} == {"ann"}
            with pytest.raises(grpc.RpcError) as caught:
                await _drain(call)
            assert rich_error(caught.value).reason == "LOG_QUARANTINED"
        assert await _seated(again.stub, "tables/t2") == {"bob", "dan"}
    finally:
        await again.stop()


async def test_a_foreign_envelope_under_the_tables_next_message_id_quarantines_it() -> None:
    """Published first under the id of the table's next write, a well-formed envelope that folds
    (chips for a seated player) makes that write a duplicate ack: it counts only if the stored
    message is the writer's own envelope, so the table is quarantined and nothing is folded."""
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000})
    svc = await serve(events, wallet, StaticOwnership("table-1", 1))
    try:
        await create(svc.stub, "t1")
        await create(svc.stub, "t2")
        await join(svc.stub, "ann", 1, table="tables/t1")
        subject = table_subject("t1", PARTITIONS)
        last = await events.last(subject)
        assert last is not None
        tip = last.envelope
        # Under the writer's epoch: its next message id.
        draft = next_draft(tip, (to_recorded(ChipsAdded(seat=0, amount=1_000_000)),), stream_id="t1")
        forged = seal(draft, tip.hash)
        landed = await events.append(subject, forged, expected_sequence=last.sequence)
        with capture_logs() as logs, pytest.raises(grpc.RpcError) as caught:
            await join(svc.stub, "bob", 2, table="tables/t1")
        err = rich_error(caught.value)
        assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
        assert dict(err.metadata) == {
            "stream": "t1",
            "sequence": str(landed.sequence),
            "problem": "not our envelope",
        }
        assert [e["problem"] for e in logs if e["event"] == "log.corrupt"] == ["not our envelope"]
        assert wallet.cash["bob"] == 1000  # the refused buy-in was refunded
        with pytest.raises(grpc.RpcError) as caught:  # refused from memory from now on
            await join(svc.stub, "cat", 3, table="tables/t1")
        assert rich_error(caught.value).reason == "LOG_QUARANTINED"
        assert await _seated(svc.stub, "tables/t1") == {"ann"}
        await join(svc.stub, "bob", 1, table="tables/t2")
        assert await _seated(svc.stub, "tables/t2") == {"bob"}
    finally:
        await svc.stop()
