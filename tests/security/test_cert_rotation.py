"""Server certificates rotate without a restart (``shell.tls.Rotation``): a running shell server
(in this process, then every service of a secure system as processes) on both listeners, its
certificate files replaced by newly issued ones (``shell.pki``), and what a new TLS connection is
shown, read by a plain ``ssl`` client."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import pki
from openpoker.shell.client import channel, health_status
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import RunningServer, start_server
from openpoker.shell.tls import TlsFiles
from tests.helpers.natscreds import nats_env
from tests.helpers.system import local_system


@dataclass
class Served:
    running: RunningServer
    local: pki.LocalPki
    data: Path


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    local = pki.ensure_local_pki(tmp_path)
    env = {
        "POKER_TLS_DIR": str(local.root),
        "POKER_TABLE_PORT": "0",
        "POKER_TABLE_CLIENT_PORT": "0",
        **nats_env(tmp_path / "nats"),
    }
    running = await start_server(ShellConfig.from_env("table", env), [])
    try:
        yield Served(running, local, tmp_path)
    finally:
        await running.stop(0)


def _handshake(port: int, files: TlsFiles) -> x509.Certificate:
    context = ssl.create_default_context(cafile=str(files.ca))
    context.set_alpn_protocols(["h2"])
    if files.cert is not None and files.key is not None:
        context.load_cert_chain(files.cert, files.key)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
        context.wrap_socket(sock, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


async def certificate_shown(port: int, files: TlsFiles) -> x509.Certificate:
    """The certificate a new TLS connection to ``port`` is shown (off the loop the server runs on)."""
    return await asyncio.to_thread(_handshake, port, files)


async def _check(chan: aio.Channel) -> str:
    stub: Any = health_pb2_grpc.HealthStub(chan)
    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def serial(path: Path) -> int:
    return x509.load_pem_x509_certificate(path.read_bytes()).serial_number


async def test_a_new_connection_sees_the_new_certificate_without_a_restart(served: Served) -> None:
    local, running = served.local, served.running
    person, staff = TlsFiles.from_pki(local, None), TlsFiles.from_pki(local, "pokerctl")
    before = serial(local.cert("table"))
    assert (await certificate_shown(running.client_port, person)).serial_number == before
    assert (await certificate_shown(running.port, staff)).serial_number == before
    open_channel = channel(running.client_address, person)
    try:
        assert await health_status(running.client_address, tls=person) == "SERVING"
        assert await _check(open_channel) == "SERVING"  # connected before the rotation

        pki.ensure_local_pki(served.data, hosts=["192.0.2.7"])  # every leaf issued anew, same CA
        after = serial(local.cert("table"))
        assert after != before

        for port, files in ((running.client_port, person), (running.port, staff)):
            shown = await certificate_shown(port, files)
            assert shown.serial_number == after
            san = shown.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            assert "192.0.2.7" in {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
        # gRPC calls on new connections, and on the connection opened before, go on working.
        assert await health_status(running.client_address, tls=person) == "SERVING"
        assert await health_status(running.address, tls=staff) == "SERVING"
        assert await _check(open_channel) == "SERVING"
    finally:
        await open_channel.close()


async def test_a_half_rotated_pair_keeps_the_old_certificate_until_the_key_follows(served: Served) -> None:
    local, running = served.local, served.running
    person = TlsFiles.from_pki(local, None)
    before = serial(local.cert("table"))
    # The dealer's certificate (localhost too, same CA) lands first, its key a moment later.
    shutil.copyfile(local.cert("dealer"), local.cert("table"))
    assert (await certificate_shown(running.client_port, person)).serial_number == before
    assert await health_status(running.client_address, tls=person) == "SERVING"
    shutil.copyfile(local.key("dealer"), local.key("table"))
    assert (await certificate_shown(running.client_port, person)).serial_number == serial(
        local.cert("dealer")
    )
    assert await health_status(running.client_address, tls=person) == "SERVING"


@pytest.fixture
def system(tmp_path: Path) -> Iterator[LocalSystem]:
    with local_system(tmp_path / "system", secure=True) as local:
        yield local


@pytest.mark.slow
@pytest.mark.integration
async def test_service_processes_serve_a_reissued_certificate_without_a_restart(system: LocalSystem) -> None:
    assert system.pki is not None
    local = system.pki
    person, staff = TlsFiles.from_pki(local, None), TlsFiles.from_pki(local, "pokerctl")
    pids = {name: proc.process.pid for name, proc in system.processes.items()}
    before = {name: serial(local.cert(name)) for name in system.processes}
    pki.ensure_local_pki(local.root.parent, hosts=["192.0.2.7"])  # every leaf issued anew, same CA
    for name, proc in system.processes.items():
        after = serial(local.cert(name))
        assert after != before[name]
        service_port = int(proc.address.rpartition(":")[2])
        assert (await certificate_shown(service_port, staff)).serial_number == after, name
        if proc.client_address:
            client_port = int(proc.client_address.rpartition(":")[2])
            assert (await certificate_shown(client_port, person)).serial_number == after, name
        assert await health_status(proc.address, tls=staff) == "SERVING"
    assert {name: proc.process.pid for name, proc in system.processes.items()} == pids
