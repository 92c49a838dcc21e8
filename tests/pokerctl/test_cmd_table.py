"""``pokerctl table reset-allowance`` against an in-process table service (plaintext rig): one
table, or every table ``ListTables`` lists across pages; a refusal per table; the credentials it
asks for on a secure system."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.pokerctl import cmd_table
from openpoker.pokerctl.__main__ import build_parser
from openpoker.pokerctl.connect import Connection, MissingCredentials
from openpoker.shell.tls import TlsFiles
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import DEALER, FakeWallet, Running, create, join, rid, serve, start_hand


@pytest.fixture
async def svc() -> AsyncIterator[Running]:
    running = await serve(MemoryTableEvents(), FakeWallet(cash={"ann": 1000, "bob": 1000}))
    try:
        yield running
    finally:
        await running.stop()


def _conn(svc: Running) -> Connection:
    return Connection.plaintext({"table": svc.server.address})


async def _protect_ann_once(svc: Running, table: str) -> None:
    """ann, disconnected with her blind in at ``table``, times out: one protection used."""
    name = f"tables/{table}"
    await join(svc.stub, "ann", 1, table=name)
    await join(svc.stub, "bob", 2, table=name)
    gone = pb.ReportConnectionRequest(request_id=rid(), table=name, player_id="ann", connected=False)
    await svc.stub.ReportConnection(gone, metadata=DEALER)
    await start_hand(svc.stub, f"{table}-h1", table=name)
    view = (await svc.stub.GetTable(pb.GetTableRequest(name=name))).table
    seat = view.current_hand.to_act.seat
    if next(s.player_id for s in view.seats if s.seat == seat) == "bob":
        called = pb.ActRequest(request_id=rid(), table=name, player_id="bob", action=pb.ACTION_TYPE_CALL)
        view = (await svc.stub.Act(called)).table
    out = await svc.stub.TimeOutSeat(
        pb.TimeOutSeatRequest(
            request_id=rid(),
            table=name,
            hand_id=f"{table}-h1",
            seat=view.current_hand.to_act.seat,
            expected_version=view.version,
        ),
        metadata=DEALER,
    )
    assert out.applied.all_in  # protected: one of her two used


async def test_every_table_across_pages(svc: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("openpoker.shell.paging.DEFAULT_PAGE_SIZE", 2)
    for table in ("t1", "t2", "t3"):
        await create(svc.stub, table)
    await _protect_ann_once(svc, "t2")
    t2 = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t2"))).table.version
    lines = await cmd_table.reset_allowance(_conn(svc), player="ann", request_id="r-1")
    assert lines == [
        {"table": "*", "player": "ann", "cleared": 1, "version": 0},  # the site-wide record
        {"table": "t1", "player": "ann", "cleared": 0, "version": 1},
        {"table": "t2", "player": "ann", "cleared": 1, "version": t2 + 1},
        {"table": "t3", "player": "ann", "cleared": 0, "version": 1},
    ]
    again = await cmd_table.reset_allowance(_conn(svc), player="ann", request_id="r-1")
    assert again == lines  # the same request id: the first answers, nothing appended twice


async def test_one_table_and_a_refusal(svc: Running) -> None:
    await create(svc.stub, "t1")
    await _protect_ann_once(svc, "t1")
    [done] = await cmd_table.reset_allowance(_conn(svc), player="ann", tables=["tables/t1"])
    assert done["cleared"] == 1
    [missing] = await cmd_table.reset_allowance(_conn(svc), player="ann", tables=["nowhere"])
    assert missing == {
        "table": "nowhere",
        "player": "ann",
        "error": {"code": "NOT_FOUND", "reason": "TABLE_NOT_FOUND"},
    }


def test_a_secure_system_needs_a_certificate_or_a_token(tmp_path: Path) -> None:
    ca = TlsFiles(ca=tmp_path / "ca.crt")
    with pytest.raises(MissingCredentials):
        cmd_table.operator_of(Connection(ca=ca, staff=ca))


def test_the_command_parses() -> None:
    args = build_parser().parse_args(["table", "reset-allowance", "--player", "ann", "--insecure"])
    assert (args.player, args.table, args.func) == ("ann", "", cmd_table.run_reset)
