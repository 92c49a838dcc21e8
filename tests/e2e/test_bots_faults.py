"""Bots outlive faults (issue 19): the table service and the wallet are killed (SIGKILL) and
started again under running bots, which keep their seats and play on, no bot giving up and the
ledger sound; bots started while the wallet is down wait for it and then play; and a ``pokerctl
bots`` whose bots all give up (the wallet away past their patience) exits 1 saying so."""

from __future__ import annotations

import asyncio
import functools
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, MutableMapping
from typing import Any

import grpc
import pytest
import structlog
from structlog.testing import capture_logs

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl.bots import Behaviour, BotRun, create_table, table_config
from openpoker.pokerctl.cmd_bots import play_bots
from openpoker.pokerctl.cmd_demo import quiesce
from openpoker.pokerctl.cmd_ledger import LedgerAudit, audit_live
from openpoker.pokerctl.connect import CALLER
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import channel
from openpoker.shell.retry import transient
from tests.helpers.system import local_system
from tests.helpers.waiting import answer, until

# The whole system as processes, restarted under load: over 5 s on 2 shared cores.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

# A restarted table service owns its tables again once the crashed one's leases expire.
ENV = {"POKER_TABLE_LEASE_TTL": "2"}
BOTS = 3
STAFF = (("x-caller", CALLER),)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("bots-faults"), ENV) as local:
        yield local


@pytest.fixture
def logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """The log lines structlog emits (debug included) during the test."""
    wrapper = structlog.get_config()["wrapper_class"]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with capture_logs() as lines:
            yield lines
    finally:
        structlog.configure(wrapper_class=wrapper)


def kill(system: LocalSystem, name: str) -> None:
    """SIGKILL one service and leave it down (``system.restart`` brings it back)."""
    proc = system.processes[name].process
    proc.kill()
    proc.wait()


async def _create(system: LocalSystem, table_id: str) -> None:
    config = table_config("holdem", "nl", clock_ms=1000)
    await create_table(system.targets["table"], table_id, config)


async def _table(system: LocalSystem, table_id: str) -> tpb.Table | None:
    """The table as staff sees it; None while the table service is away."""
    async with channel(system.targets["table"]) as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        try:
            got = await stub.GetTable(
                tpb.GetTableRequest(name=f"tables/{table_id}"), timeout=5, metadata=STAFF
            )
        except grpc.RpcError as err:
            if transient(err):
                return None
            raise
        table: tpb.Table = got.table
        return table


async def _hands_at_least(system: LocalSystem, table_id: str, count: int) -> int | None:
    table = await _table(system, table_id)
    return table.hands_played if table is not None and table.hands_played >= count else None


async def _run_bots(system: LocalSystem, table_id: str, stop: asyncio.Event) -> asyncio.Task[BotRun]:
    return asyncio.get_running_loop().create_task(
        play_bots(
            table_target=system.targets["table"],
            wallet_target=system.targets["wallet"],
            names=[table_id],
            players=BOTS,
            behaviour=Behaviour(),  # sitting out, topping up, leaving and rejoining too
            seed=19,
            stop=stop,
        )
    )


@pytest.fixture
async def stop() -> AsyncIterator[asyncio.Event]:
    event = asyncio.Event()
    yield event
    event.set()


async def _audit(system: LocalSystem) -> LedgerAudit | None:
    audit = await audit_live(system.nats.url)
    return audit if audit.ok else None


def _seated(table: tpb.Table) -> set[str]:
    return {s.player_id for s in table.seats if s.player_id}


async def test_pokerctl_bots_exits_1_when_every_bot_gave_up(system: LocalSystem) -> None:
    await _create(system, "faults-0")
    kill(system, "wallet")
    try:
        done = await asyncio.to_thread(
            subprocess.run,
            [
                sys.executable,
                "-m",
                "openpoker.pokerctl",
                "bots",
                "--insecure",
                "--table",
                "faults-0",
                "--players",
                "2",
                "--patience",
                "1.5",
                "--table-target",
                system.targets["table"],
                "--wallet-target",
                system.targets["wallet"],
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        await system.restart("wallet")
    assert done.returncode == 1, done.stderr
    assert "bots: bot-faults-0-1 gave up: " in done.stderr
    assert "UNAVAILABLE" in done.stderr
    assert "every bot gave up (2)" in done.stderr
    assert "retry.again" not in done.stdout + done.stderr  # retries log at debug, not shown


async def test_bots_started_while_the_wallet_is_down_wait_then_play(
    system: LocalSystem, stop: asyncio.Event, logs: list[MutableMapping[str, Any]]
) -> None:
    table_id = "faults-1"
    await _create(system, table_id)
    kill(system, "wallet")
    try:
        task = await _run_bots(system, table_id, stop)

        def waiting() -> bool:
            tried = {
                e.get("player") for e in logs if e["event"] == "retry.again" and e["what"] == "wallet.Deposit"
            }
            return len(tried) == BOTS  # every bot has been refused by the fault and is trying again

        await until(waiting, what="every bot retrying its deposit", within=60)
        assert not task.done()
    finally:
        await system.restart("wallet")
    players = {f"bot-{table_id}-{i + 1}" for i in range(BOTS)}

    async def all_playing() -> bool | None:
        table = await _table(system, table_id)
        return True if table is not None and table.hands_played >= 2 and _seated(table) == players else None

    await answer(all_playing, what="every bot seated and hands played after the wallet came back")
    stop.set()
    run = await task
    assert run.ended() == []
    assert run.stats.deposits == BOTS  # one deposit each, however many tries it took
    await quiesce(system.targets["dealer"], [table_id])
    await answer(lambda: _audit(system), what="a sound ledger")


async def test_bots_outlive_kills_of_the_table_service_and_the_wallet(
    system: LocalSystem, stop: asyncio.Event
) -> None:
    table_id = "faults-2"
    await _create(system, table_id)
    task = await _run_bots(system, table_id, stop)
    players = {f"bot-{table_id}-{i + 1}" for i in range(BOTS)}
    start = await answer(lambda: _hands_at_least(system, table_id, 2), what="bots playing")
    for service in ("table", "wallet"):
        await system.restart(service, kill=True)
        start = await answer(
            functools.partial(_hands_at_least, system, table_id, start + 3),
            what=f"hands played after {service} was killed",
        )
        assert not task.done(), f"the bots stopped after {service} was killed"
    stop.set()
    run = await task
    assert run.ended() == []  # no bot gave up
    table = await answer(lambda: _table(system, table_id), what="the table")
    assert _seated(table) <= players  # the same bots, nobody else
    await quiesce(system.targets["dealer"], [table_id])
    audit = await answer(lambda: _audit(system), what="a sound ledger")
    assert not audit.escrow.drifts
