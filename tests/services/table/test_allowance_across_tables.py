"""The all-in allowance is the player's across every table (seed 000: "a total of no more than 2
All-ins due to disconnection within any 24-hour period"), through the table service with the
in-memory rig: the site-wide record (``tablelog.allowances``) is read before each decision that
may protect, reserved with compare-and-set, settled after the append, and cleared by the
operator's reset."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.table_events import DecisionTimedOut
from openpoker.shell.client import rich_error
from openpoker.tablelog.allowances import MemoryAllowanceRecords, Record, decode
from openpoker.tablelog.store import MemoryTableEvents, decode_events
from tests.services.table.helpers import (
    DEALER,
    OPERATOR,
    FakeWallet,
    Running,
    act,
    create,
    join,
    rid,
    serve,
    start_hand,
    to_act,
)

TABLES = ("t1", "t2", "t3")


@pytest.fixture
async def rig() -> AsyncIterator[tuple[Running, MemoryTableEvents]]:
    events = MemoryTableEvents()
    running = await serve(events, FakeWallet(cash={"ann": 10_000, "bob": 10_000}))
    for t in TABLES:
        await create(running.stub, t)
        await join(running.stub, "ann", 1, table=f"tables/{t}")
        await join(running.stub, "bob", 2, table=f"tables/{t}")
        gone = pb.ReportConnectionRequest(
            request_id=rid(), table=f"tables/{t}", player_id="ann", connected=False
        )
        await running.stub.ReportConnection(gone, metadata=DEALER)
    yield running, events
    await running.stop()


async def _view(svc: Running, table: str) -> pb.Table:
    view: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name=f"tables/{table}"))).table
    return view


async def _ann_to_act(svc: Running, table: str, hand_id: str) -> pb.TimeOutSeatRequest:
    """A hand at ``table`` in which ann (disconnected, a blind in) is to act: her time-out."""
    name = f"tables/{table}"
    await start_hand(svc.stub, hand_id, table=name)
    view = await _view(svc, table)
    if to_act(view) == "bob":
        view = (await act(svc.stub, "bob", pb.ACTION_TYPE_CALL, table=name)).table
    assert to_act(view) == "ann"
    seat = next(s.seat for s in view.seats if s.player_id == "ann")
    return pb.TimeOutSeatRequest(
        request_id=rid(), table=name, hand_id=hand_id, seat=seat, expected_version=view.version
    )


async def _bob_plays_it_down(svc: Running, table: str) -> None:
    name = f"tables/{table}"
    view = await _view(svc, table)
    while view.status == pb.TABLE_STATUS_IN_HAND and view.current_hand.to_act.seat:
        assert to_act(view) == "bob"
        check = pb.ACTION_TYPE_CHECK in view.current_hand.to_act.actions
        kind = pb.ACTION_TYPE_CHECK if check else pb.ACTION_TYPE_CALL
        view = (await act(svc.stub, "bob", kind, table=name)).table
    assert view.status != pb.TABLE_STATUS_IN_HAND


async def _times_out(svc: Running, table: str, hand_id: str) -> bool:
    """ann times out at ``table``; True if she was all-in protected."""
    request = await _ann_to_act(svc, table, hand_id)
    out = await svc.stub.TimeOutSeat(request, metadata=DEALER)
    await _bob_plays_it_down(svc, table)
    protected: bool = out.applied.all_in
    return protected


async def _facts(svc: Running, table: str) -> list[DecisionTimedOut]:
    """The time-outs in ``table``'s stored log."""
    store = svc.app.store
    stored = await store.events.read(store.subject(table), after_sequence=0)
    return [e for s in stored for e in decode_events(s.envelope) if isinstance(e, DecisionTimedOut)]


def _record(events: MemoryTableEvents) -> list[tuple[str, bool]]:
    """ann's site-wide record: (table, used) per protection, reserved ones included."""
    data = events.allowances.records.get("ann", (b"", 0))[0]
    return [(u.table, u.used) for u in decode(data).uses]


async def test_protected_once_at_two_tables_then_folded_at_a_third(
    rig: tuple[Running, MemoryTableEvents],
) -> None:
    svc, events = rig
    assert await _times_out(svc, "t1", "t1-h1")
    assert await _times_out(svc, "t2", "t2-h1")
    assert _record(events) == [("t1", True), ("t2", True)]
    assert not await _times_out(svc, "t3", "t3-h1")  # two used elsewhere: folded
    [fact] = await _facts(svc, "t3")
    assert (fact.uses_protection, fact.used_elsewhere) == (False, 2)  # the log says why
    assert [f.used_elsewhere for f in await _facts(svc, "t2")] == [1]
    assert _record(events) == [("t1", True), ("t2", True)]  # nothing reserved is left


async def test_the_operators_reset_protects_again_at_any_table(
    rig: tuple[Running, MemoryTableEvents],
) -> None:
    svc, events = rig
    assert await _times_out(svc, "t1", "t1-h1")
    assert await _times_out(svc, "t2", "t2-h1")
    # At one table: its use counts nowhere any more, the other's still does.
    one = await svc.stub.ResetAllInAllowance(
        pb.ResetAllInAllowanceRequest(request_id=rid(), table="tables/t1", player_id="ann"),
        metadata=OPERATOR,
    )
    assert one.cleared == 1
    assert _record(events) == [("t2", True)]
    assert await _times_out(svc, "t3", "t3-h1")  # one used at t2, one left
    assert not await _times_out(svc, "t1", "t1-h2")  # t2 and t3: used up again
    # At every table: the record emptied and each table it names reset.
    every = await svc.stub.ResetAllInAllowance(
        pb.ResetAllInAllowanceRequest(request_id=rid(), player_id="ann"), metadata=OPERATOR
    )
    assert (every.cleared, every.version) == (2, 0)
    assert _record(events) == []
    for t in ("t2", "t3"):
        assert svc.app.writer.tables[t].state is not None
        assert svc.app.writer.tables[t].state.protections.get("ann", []) == []  # type: ignore[union-attr]
    assert await _times_out(svc, "t2", "t2-h2")
    assert await _times_out(svc, "t1", "t1-h3")
    assert not await _times_out(svc, "t3", "t3-h2")


async def test_two_tables_timing_out_at_once_grant_only_what_is_left(
    rig: tuple[Running, MemoryTableEvents], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, events = rig
    assert await _times_out(svc, "t1", "t1-h1")  # one left
    first = await _ann_to_act(svc, "t2", "t2-h1")
    second = await _ann_to_act(svc, "t3", "t3-h1")
    # Both tables read the record before either writes: the same revision, one protection left.
    records = events.allowances
    read = records.get
    both_read = asyncio.Event()
    reads = 0

    async def get_together(player: str) -> tuple[Record, int]:
        nonlocal reads
        got = await read(player)
        reads += 1
        if reads == 2:
            both_read.set()
        if reads <= 2:
            await asyncio.wait_for(both_read.wait(), 10)
        return got

    monkeypatch.setattr(records, "get", get_together)
    outs = await asyncio.gather(
        svc.stub.TimeOutSeat(first, metadata=DEALER), svc.stub.TimeOutSeat(second, metadata=DEALER)
    )
    assert sorted(out.applied.all_in for out in outs) == [False, True]
    await _bob_plays_it_down(svc, "t2")
    await _bob_plays_it_down(svc, "t3")
    # The two first reads, the second of the table that lost the compare-and-set (it found the
    # other's reservation: none left), and each table's settling after its append.
    assert reads == 5
    used = _record(events)
    assert len(used) == 2
    assert all(u for _, u in used)


async def test_a_record_that_cannot_be_reached_counts_only_the_tables_own(
    rig: tuple[Running, MemoryTableEvents],
) -> None:
    svc, events = rig
    assert await _times_out(svc, "t1", "t1-h1")
    assert await _times_out(svc, "t2", "t2-h1")
    records = events.allowances
    assert isinstance(records, MemoryAllowanceRecords)
    records.unreachable = True
    # Chips in the pot are not lost to the house's outage: t3 knows no use of its own.
    assert await _times_out(svc, "t3", "t3-h1")
    [fact] = await _facts(svc, "t3")
    assert (fact.uses_protection, fact.used_elsewhere) == (True, 0)
    # A reset that cannot clear the record is refused (to be tried again), not half done.
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.ResetAllInAllowance(
            pb.ResetAllInAllowanceRequest(request_id=rid(), player_id="ann"), metadata=OPERATOR
        )
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.UNAVAILABLE, "ALLOWANCE_RECORD_UNAVAILABLE")
    records.unreachable = False
    assert not await _times_out(svc, "t3", "t3-h2")  # the record counts again: t1 and t2
