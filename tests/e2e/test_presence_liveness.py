"""Presence across table-service instances, end to end (real nats-server, the services as
processes): a table-service instance killed with SIGKILL publishes nothing, yet the dealer
reports its watchers disconnected once its heartbeats stop for the TTL; and a player watching
on two instances stays connected when their stream on one of them ends."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.engine.table_events import PlayerDisconnected, PlayerReconnected
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem, free_port
from openpoker.presence import PresenceReport, subject
from openpoker.shell import childproc
from openpoker.shell.client import channel, health_status
from tests.e2e.helpers import Clients
from tests.e2e.test_disconnect import log_until, of, watch
from tests.helpers.secure import Meta, ca_only
from tests.helpers.system import local_system

# The whole system as processes for this module: over 5 s a test on 2 shared cores, so `make
# test-fast` leaves the module out (docs/testing.md).
pytestmark = pytest.mark.slow

HEARTBEAT = "0.25"  # seconds between an instance's reports
TTL = 3.0  # seconds the dealer waits for the next one (margin for a loaded machine)
ENV = {
    "POKER_TABLE_LEASE_TTL": "2",
    "POKER_TABLE_PRESENCE_HEARTBEAT": HEARTBEAT,
    "POKER_DEALER_PRESENCE_TTL": str(TTL),
}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """This module's own system: short leases, heartbeats and TTL (the processes read them)."""
    with local_system(tmp_path_factory.mktemp("presence"), ENV, secure=True) as local:
        yield local


def now_ms() -> int:
    return int(dt.datetime.now(dt.UTC).timestamp() * 1000)


@contextlib.asynccontextmanager
async def second_table_service(system: LocalSystem, log: Path) -> AsyncIterator[Any]:
    """Another table-service process on the same NATS and the system's PKI and deck keys (it
    owns no table: it serves watchers); yields a TableService stub on its client port, where
    players watch with their tokens."""
    assert system.pki is not None
    port, client_port = free_port(), free_port()
    env = {
        **os.environ,
        "POKER_NATS_URL": system.nats.url,
        **(creds.env() if (creds := system.nats_credentials("table")) else {}),
        "POKER_TLS_DIR": str(system.pki.root),
        "POKER_DECK_KEYS": str(system.data_dir / "secrets" / "deck-keys.json"),
        "POKER_SIGNING_KEY": str(system.data_dir / "secrets" / "signing" / "table.key"),
        "POKER_SIGNING_KEYS": str(system.data_dir / "pki" / "signing-keys.json"),
        "POKER_TABLE_PORT": str(port),
        "POKER_TABLE_CLIENT_PORT": str(client_port),
        "POKER_TABLE_WALLET": system.targets["wallet"],
        "POKER_TABLE_INSTANCE": "table-second",
        "POKER_LOG_FORMAT": "json",
    }
    env.pop("POKER_INSECURE", None)
    with log.open("ab") as out:
        proc = childproc.popen(
            [sys.executable, "-m", "openpoker.services.table"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    address = f"127.0.0.1:{port}"
    try:
        for _ in range(300):
            assert proc.poll() is None, f"the second table service exited; see {log}"
            with contextlib.suppress(grpc.RpcError):
                if await health_status(address, deadline=1.0, tls=system.tls) == "SERVING":
                    break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"the second table service did not start; see {log}")
        async with channel(f"127.0.0.1:{client_port}", ca_only(system)) as chan:
            yield tgrpc.TableServiceStub(chan)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.to_thread(proc.wait, 15)
        except subprocess.TimeoutExpired:
            proc.kill()
            await asyncio.to_thread(proc.wait)


async def watch_on(stub: Any, table_id: str, player: str, meta: Meta) -> Any:
    """Open ``player``'s watch stream on ``stub``'s instance (``meta``: their token) and wait for
    its first view."""
    call = stub.WatchTable(
        tpb.WatchTableRequest(name=f"tables/{table_id}", viewer_player_id=player), metadata=meta
    )
    async for _ in call:
        break
    return call


class Reports:
    """What the table-service instances publish about one table (the test listens as the
    dealer does)."""

    def __init__(self) -> None:
        self.seen: list[PresenceReport] = []
        self._nc: Any = None

    async def start(self, system: LocalSystem, table_id: str) -> None:
        self._nc = await system.connect_nats("dealer")  # presence is for the dealer to hear

        async def on(msg: Any) -> None:
            self.seen.append(PresenceReport.decode(msg.subject, msg.data))

        await self._nc.subscribe(subject(table_id), cb=on)

    async def until(self, instance: str, players: set[str]) -> None:
        """Wait for a report of ``instance`` naming exactly ``players`` (a liveness guard)."""
        for _ in range(600):
            if any(r.instance == instance and r.players == players for r in self.seen):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"no report of {instance} naming {sorted(players)}")

    async def other_than(self, instance: str, players: set[str]) -> str:
        """Wait for a report of an instance other than ``instance`` naming exactly ``players``;
        returns that instance's name."""
        for _ in range(600):
            for r in self.seen:
                if r.instance != instance and r.players == players:
                    return r.instance
            await asyncio.sleep(0.05)
        raise AssertionError(f"no report of an instance other than {instance} naming {sorted(players)}")

    async def close(self) -> None:
        if self._nc is not None:
            await self._nc.close()


async def test_a_killed_table_service_disconnects_its_watchers_after_the_ttl(system: LocalSystem) -> None:
    table_id = "pl-killed"
    config = table_config("holdem", "nl", clock_ms=60_000)
    async with Clients(system) as c:
        await c.create(table_id, config)
        buy_in = buy_in_for(config)
        await c.seat(table_id, "ann", buy_in)
        await c.seat(table_id, "bob", buy_in)
        # Disconnect and reconnect ann once: the log then proves the dealer has heard this
        # instance report her connected.
        (await watch(c, table_id, "ann")).cancel()
        await log_until(system, table_id, lambda ev: of(PlayerDisconnected, "ann", ev), what="ann away")
        stream = await watch(c, table_id, "ann")
        try:
            await log_until(system, table_id, lambda ev: of(PlayerReconnected, "ann", ev), what="ann back")
            killed_at = now_ms()
            # SIGKILL: no stream ends cleanly, nothing is published; a new instance takes over.
            await system.restart("table", kill=True)
            events = await log_until(
                system,
                table_id,
                lambda ev: len(of(PlayerDisconnected, "ann", ev)) == 2,
                what="ann disconnected after the crash",
            )
        finally:
            stream.cancel()
    second = of(PlayerDisconnected, "ann", events)[1]
    # Decided by the dealer from the silence (the crashed instance said nothing): after the kill.
    assert second.at_ms >= killed_at
    assert not of(PlayerDisconnected, "bob", events)  # bob never watched: nothing observed


async def test_a_player_watching_on_two_instances_stays_connected_when_one_stream_ends(
    system: LocalSystem, tmp_path: Path
) -> None:
    table_id = "pl-two"
    config = table_config("holdem", "nl", clock_ms=60_000)
    first = system.processes["table"]
    reports = Reports()
    streams: list[Any] = []
    try:
        await reports.start(system, table_id)
        async with Clients(system) as c, second_table_service(system, tmp_path / "table-2.log") as other:
            await c.create(table_id, config)
            buy_in = buy_in_for(config)
            await c.seat(table_id, "ann", buy_in)
            await c.seat(table_id, "bob", buy_in)
            on_first = await watch(c, table_id, "ann")
            streams.append(on_first)
            # ann watches on both instances, bob on the second only.
            ann_two = await watch_on(other, table_id, "ann", c.player("ann"))
            bob_two = await watch_on(other, table_id, "bob", c.player("bob"))
            streams += [ann_two, bob_two]
            await reports.until("table-second", {"ann", "bob"})
            first_name = await reports.other_than("table-second", {"ann"})
            # Both streams on the second instance end, ann's first: its reports drop her, then bob.
            ann_two.cancel()
            await reports.until("table-second", {"bob"})
            bob_two.cancel()
            events = await log_until(
                system, table_id, lambda ev: of(PlayerDisconnected, "bob", ev), what="bob disconnected"
            )
            assert not of(PlayerDisconnected, "ann", events)
            # Two TTLs of the first instance's heartbeats: ann stays connected.
            heard = len(reports.seen)
            await asyncio.sleep(2 * TTL)
            assert any(r.instance == first_name for r in reports.seen[heard:])
            events = await log_until(system, table_id, lambda ev: True, what="the log")
            assert not of(PlayerDisconnected, "ann", events)
            # Her last stream ends: now she is disconnected (the test can see it when it happens).
            on_first.cancel()
            events = await log_until(
                system, table_id, lambda ev: of(PlayerDisconnected, "ann", ev), what="ann disconnected"
            )
            assert len(of(PlayerDisconnected, "ann", events)) == 1
            assert first.process.poll() is None
    finally:
        for call in streams:
            call.cancel()
        await reports.close()
