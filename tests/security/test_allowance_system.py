"""An operator resets a player's all-in allowance on a running system with TLS on
(``LocalSystem(secure=True)``: real nats-server, every service a process, people with tokens on
the client ports, ``pokerctl`` with its staff certificate).

ann closes her watch stream (her connection) at a heads-up table with a short clock: the dealer
times her out, she is all-in protected twice, then folded. With dealing paused, a player token
(ann's own) and no token are refused and the table's version does not move; an operator token
resets (2 cleared), and once dealing resumes her next time-out is protected again. ``pokerctl
table reset-allowance`` does the same with the data folder. The allowance is hers across tables:
once she used it up again at her table (the uses in KV ``poker-allowances``), her first time-out
at a second table is folded.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.engine.table_events import AllInAllowanceReset, DecisionTimedOut, TimeOutOutcome
from openpoker.eventstore.subjects import table_subject
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.services.dealer.tracker import decode_event
from openpoker.shell.client import rich_error
from openpoker.shell.tokens import Role
from openpoker.tablelog import allowances
from openpoker.tablelog.allowances import ALLOWANCES_BUCKET
from openpoker.tablelog.store import JetStreamTableEvents
from tests.helpers.secure import Calls, token
from tests.helpers.system import local_system
from tests.helpers.waiting import answer

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TABLE = "allowance-dc"
NAME = f"tables/{TABLE}"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("allowance"), secure=True) as local:
        yield local


def rid() -> str:
    return str(uuid.uuid4())


async def table_log(system: LocalSystem, table: str = TABLE) -> list[object]:
    """Every engine event in the table's log, read from JetStream as an auditor would."""
    nc = await system.connect_nats()
    try:
        stored = await JetStreamTableEvents(nc.jetstream(), stream="TABLE_EVENTS").read(table_subject(table))
    finally:
        await nc.close()
    return [e for s in stored for r in s.envelope.events if (e := decode_event(r)) is not None]


def ann_time_outs(events: list[object]) -> list[DecisionTimedOut]:
    return [e for e in events if isinstance(e, DecisionTimedOut) and e.player == "ann"]


async def view(calls: Calls) -> tpb.Table:
    got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=NAME), timeout=5)
    table: tpb.Table = got.table
    return table


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        await call
    rich = rich_error(err.value)
    return rich.code, rich.reason


async def _ann_disconnected_at(system: LocalSystem, calls: Calls, table: str) -> None:
    """ann and bob seated heads-up at a new ``table`` (each with their own token), with a short
    clock; ann's connection there closed."""
    config = table_config("holdem", "nl", clock_ms=150)
    await calls.staff_table.CreateTable(
        tpb.CreateTableRequest(request_id=rid(), table_id=table, config=config), timeout=5
    )
    for player in ("ann", "bob"):
        await calls.staff_wallet.Deposit(
            wpb.DepositRequest(request_id=rid(), player=player, amount=10_000), timeout=5
        )
        join = tpb.JoinTableRequest(
            request_id=rid(),
            table=f"tables/{table}",
            player_id=player,
            buy_in=buy_in_for(config),
            post_choice=tpb.POST_CHOICE_POST_NOW,
        )
        await calls.table.JoinTable(join, timeout=5, metadata=token(system, player))
    stream = calls.table.WatchTable(
        tpb.WatchTableRequest(name=f"tables/{table}", viewer_player_id="ann"), metadata=token(system, "ann")
    )
    async for _ in stream:  # her first view: she is connected
        break
    stream.cancel()  # ann's client goes away


async def _ann_used_her_allowance(system: LocalSystem, calls: Calls) -> None:
    """ann disconnected at the table until her third time-out, which is folded."""
    await _ann_disconnected_at(system, calls, TABLE)

    async def folded() -> list[DecisionTimedOut] | None:
        outs = ann_time_outs(await table_log(system))
        return outs if len(outs) >= 3 else None

    outs = (await answer(folded, what="three time-outs of ann"))[:3]
    # Heads-up, ann has a blind in whenever she is to act: only the allowance decides.
    assert [(e.outcome, e.uses_protection) for e in outs] == [
        (TimeOutOutcome.PROTECTED, True),
        (TimeOutOutcome.PROTECTED, True),
        (TimeOutOutcome.FOLDED, False),
    ]


async def _paused(calls: Calls, operator: Any) -> int:
    """Dealing paused and the hand in flight finished: the table's version, now still."""
    pause = dpb.PauseTableRequest(request_id=rid(), table=NAME)
    assert (await calls.dealer.PauseTable(pause, timeout=5, metadata=operator)).paused

    async def between_hands() -> int | None:
        table = await view(calls)
        return None if table.status == tpb.TABLE_STATUS_IN_HAND else int(table.version)

    return await answer(between_hands, what="the hand in flight to finish")


async def test_only_an_operator_resets_a_players_allowance(system: LocalSystem, calls: Calls) -> None:
    await _ann_used_her_allowance(system, calls)
    operator = token(system, "olga", Role.OPERATOR)
    version = await _paused(calls, operator)

    reset = tpb.ResetAllInAllowanceRequest(request_id=rid(), table=NAME, player_id="ann")
    for role in (Role.PLAYER, Role.CASHIER, Role.AUDITOR, Role.SPECTATOR):
        got = await refused(
            calls.table.ResetAllInAllowance(reset, timeout=5, metadata=token(system, "ann", role))
        )
        assert got == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    got = await refused(calls.table.ResetAllInAllowance(reset, timeout=5))
    assert got == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    assert (await view(calls)).version == version  # nothing appended
    assert not [e for e in await table_log(system) if isinstance(e, AllInAllowanceReset)]

    done = await calls.table.ResetAllInAllowance(reset, timeout=5, metadata=operator)
    assert (done.cleared, done.version) == (2, version + 1)
    again = await calls.table.ResetAllInAllowance(reset, timeout=5, metadata=operator)
    assert (again.cleared, again.version) == (2, version + 1)  # the same request id: its answer
    assert (await view(calls)).version == version + 1

    # Dealing again: ann, still disconnected, is protected at her next time-out.
    resume = dpb.ResumeTableRequest(request_id=rid(), table=NAME)
    assert not (await calls.dealer.ResumeTable(resume, timeout=5, metadata=operator)).paused

    async def after_reset() -> DecisionTimedOut | None:
        events = await table_log(system)
        mark = next(i for i, e in enumerate(events) if isinstance(e, AllInAllowanceReset))
        later = ann_time_outs(events[mark:])
        return later[0] if later else None

    first = await answer(after_reset, what="ann's next time-out")
    assert (first.outcome, first.uses_protection) == (TimeOutOutcome.PROTECTED, True)


def test_pokerctl_resets_with_the_data_folder(
    system: LocalSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    """After test_only_an_operator_resets_a_players_allowance (file order): ann's one
    protection since that reset is cleared from the site-wide record (line ``*``) and at her
    table, and every other table answers 0."""
    argv = ["table", "reset-allowance", "--player", "ann", "--data-dir", str(system.data_dir)]
    argv += ["--table-target", system.targets["table"]]
    assert main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [everywhere] = [line for line in lines if line["table"] == "*"]
    assert everywhere["cleared"] >= 1
    assert everywhere["version"] == 0
    [mine] = [line for line in lines if line["table"] == TABLE]
    assert mine["cleared"] >= 1
    assert all(line["cleared"] == 0 for line in lines if line["table"] not in (TABLE, "*"))
    # A player's own token is refused at every table: exit 1, each refusal on its line.
    ann = token(system, "ann")[0][1].removeprefix("Bearer ")
    argv = ["table", "reset-allowance", "--player", "ann", "--table", TABLE, "--token", ann]
    argv += ["--ca", str(system.data_dir / "pki" / "ca.crt"), "--table-target", system.targets["table"]]
    argv += ["--table-client-target", system.client_targets["table"]]
    assert main(argv) == 1
    [line] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert line["error"] == {"code": "PERMISSION_DENIED", "reason": "CALLER_NOT_ALLOWED"}


async def test_the_allowance_is_counted_across_tables(system: LocalSystem, calls: Calls) -> None:
    """After the resets above (file order), ann, still disconnected, uses her two protections at
    her table; the table service records them in KV ``poker-allowances`` (read here as
    ``pokerctl``); at a second table her first time-out is folded: two used elsewhere."""

    async def used_up_again() -> list[DecisionTimedOut] | None:
        events = await table_log(system)
        last_reset = max(i for i, e in enumerate(events) if isinstance(e, AllInAllowanceReset))
        outs = ann_time_outs(events[last_reset:])
        return outs[:3] if len(outs) >= 3 else None

    outs = await answer(used_up_again, what="ann's allowance used up again")
    assert [(e.outcome, e.uses_protection) for e in outs] == [
        (TimeOutOutcome.PROTECTED, True),
        (TimeOutOutcome.PROTECTED, True),
        (TimeOutOutcome.FOLDED, False),
    ]
    nc = await system.connect_nats()  # pokerctl's identity: it may read the bucket
    try:
        kv = await nc.jetstream().key_value(ALLOWANCES_BUCKET)
        record = allowances.decode((await kv.get(allowances.key_of("ann"))).value or b"")
    finally:
        await nc.close()
    assert sorted((u.table, u.used) for u in record.uses) == [(TABLE, True), (TABLE, True)]

    other = "allowance-dc2"
    await _ann_disconnected_at(system, calls, other)

    async def first_elsewhere() -> DecisionTimedOut | None:
        outs = ann_time_outs(await table_log(system, other))
        return outs[0] if outs else None

    first = await answer(first_elsewhere, what="ann's first time-out at the second table")
    assert (first.outcome, first.uses_protection, first.used_elsewhere) == (
        TimeOutOutcome.FOLDED,
        False,
        2,
    )
