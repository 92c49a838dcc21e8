"""Smoke test of ``pokerctl up --bots``: a real nats-server and every existing service as
processes, secure (the local PKI under the data folder); all answer SERVING on their mutual-TLS
port (pokerctl's staff certificate) and their client port (the CA alone), list their API through
reflection, the bots play hands; SIGTERM stops everything cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from openpoker.pokerctl import local
from openpoker.pokerctl.local import LocalSystem, StartError, existing_services
from openpoker.shell import childproc, pki
from openpoker.shell.client import channel, health_status, reflected_services
from openpoker.shell.tls import TlsFiles
from tests.helpers.processes import alive

LINE = re.compile(r"^(?P<name>\w+)\s+(?P<address>127\.0\.0\.1:\d+)\s+SERVING\s+pid (?P<pid>\d+)")
NATS_LINE = re.compile(r"^nats\s+nats://127\.0\.0\.1:\d+\s+pid (?P<pid>\d+)")
PKI_LINE = re.compile(r"^pki\s+(?P<root>\S+)")
CLIENT_LINE = re.compile(r"^client\s+(?P<name>\w+) (?P<address>127\.0\.0\.1:\d+)\s+TLS")
HANDS = re.compile(rb"hands played (?P<n>\d+)")


async def reflected_over_tls(target: str, tls: TlsFiles) -> set[str]:
    async with channel(target, tls) as chan:
        stub: Any = reflection_pb2_grpc.ServerReflectionStub(chan)  # type: ignore[arg-type]
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        names: set[str] = set()
        async for reply in stub.ServerReflectionInfo(iter([request]), timeout=5.0):
            names |= {s.name for s in reply.list_services_response.service}
        return names


@pytest.mark.slow  # every service as a process, up and down: over 5 s on 2 shared cores
async def test_up_starts_every_service_healthy_and_stops_cleanly(tmp_path: Path) -> None:
    up = [
        sys.executable,
        "-m",
        "openpoker.pokerctl",
        "up",
        "--data-dir",
        str(tmp_path / "data"),
        "--free-ports",
        "--bots",
    ]
    proc = await asyncio.create_subprocess_exec(
        *childproc.argv(up),  # dies with this test process, and its services with it
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        while not lines or lines[-1] != "ready; Ctrl-C to stop":
            raw = await asyncio.wait_for(proc.stdout.readline(), timeout=60)
            assert raw, f"pokerctl up ended early: {lines}"
            lines.append(raw.decode().rstrip())
        services = {m["name"]: (m["address"], int(m["pid"])) for m in map(LINE.match, lines) if m}
        nats_pids = [int(m["pid"]) for m in map(NATS_LINE.match, lines) if m]
        clients = {m["name"]: m["address"] for m in map(CLIENT_LINE.match, lines) if m}
        roots = [Path(m["root"]) for m in map(PKI_LINE.match, lines) if m]
        assert set(services) == set(existing_services())
        assert {"table", "dealer"} <= set(services)
        assert len(nats_pids) == 1
        assert set(clients) == set(services)
        assert roots == [(tmp_path / "data" / "pki").resolve()]
        local_pki = pki.LocalPki(root=roots[0])
        staff = TlsFiles.from_pki(local_pki, pki.CLIENT)  # DATA/pki/pokerctl.crt and .key
        ca_only = TlsFiles.from_pki(local_pki, None)
        for name, (address, _) in services.items():
            assert await health_status(address, tls=staff) == "SERVING"
            assert await health_status(clients[name], tls=ca_only) == "SERVING"
            names = await reflected_over_tls(address, staff)
            assert any(n.startswith(f"poker.{name}.v1.") for n in names), names
            assert "grpc.health.v1.Health" in names
            with pytest.raises(grpc.RpcError):  # no plaintext way in
                await reflected_services(address)
        assert (tmp_path / "data" / "nats" / "jetstream").is_dir()
        assert (tmp_path / "data" / "logs" / "table.log").is_file()
        # The bots play (players with tokens on the table's client port) and the live view of
        # holdem-1 follows: wait until it shows a hand played.
        seen = b""
        while not any(int(m["n"]) >= 1 for m in HANDS.finditer(seen)):
            chunk = await asyncio.wait_for(proc.stdout.read(4096), timeout=120)
            assert chunk, f"pokerctl up ended early: {seen[-2000:]!r}"
            seen = seen[-8192:] + chunk
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        rest = await asyncio.wait_for(proc.stdout.read(), timeout=60)
        code = await proc.wait()
    assert code == 0, rest.decode()
    stopped = next(line for line in rest.decode().splitlines() if line.startswith("stopped: "))
    exit_codes = dict(part.rsplit(" ", 1) for part in stopped.removeprefix("stopped: ").split(", "))
    assert exit_codes == dict.fromkeys([*services, "nats"], "0")  # every process exited cleanly
    for pid in [*nats_pids, *(pid for _, pid in services.values())]:
        assert not alive(pid), f"process {pid} left running"


@contextlib.contextmanager
def busy_port() -> Iterator[int]:
    """A loopback port another socket is listening on (so no service can bind it)."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield int(busy.getsockname()[1])


async def test_a_service_that_cannot_start_stops_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with busy_port() as port:
        monkeypatch.setenv("POKER_TABLE_PORT", str(port))
        system = LocalSystem(data_dir=tmp_path, services=("table",))
        with pytest.raises(StartError) as caught:
            await system.start()
    assert "table exited" in str(caught.value)
    assert "cannot listen" in str(caught.value)  # the service's own log tail explains why
    assert not system.nats.running
    assert system.processes == {}


async def test_with_free_ports_a_port_taken_before_the_service_binds_it_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``free_port`` only finds a port free at that moment; here another socket holds the first
    # one it returns by the time the service binds, as a parallel test worker could.
    with busy_port() as taken:
        ports = iter([taken])
        real = local.free_port
        monkeypatch.setattr(local, "free_port", lambda: next(ports, None) or real())
        system = LocalSystem(data_dir=tmp_path, services=("wallet",), free_ports=True)
        await system.start()
        try:
            address = system.processes["wallet"].address
            assert address != f"127.0.0.1:{taken}"
            assert await health_status(address) == "SERVING"
            assert "cannot listen" in (tmp_path / "logs" / "wallet.log").read_text()
        finally:
            await system.stop()
    assert system.processes == {}
