"""``shell.tls`` on a real grpc.aio server with both listeners: who gets in where, and as whom."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from openpoker.shell import pki
from openpoker.shell.tls import TlsFileError, TlsFiles, channel_credentials, server_credentials


class _Health(health_pb2_grpc.HealthServicer):
    def __init__(self) -> None:
        self.peers: list[list[bytes]] = []

    async def Check(
        self, request: health_pb2.HealthCheckRequest, context: aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthCheckResponse:
        self.peers.append(list(context.auth_context().get("peer_spiffe_id", [])))
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


@dataclass
class Server:
    local: pki.LocalPki
    servicer: _Health
    service_port: int
    client_port: int


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    local = pki.ensure_local_pki(tmp_path / "data")
    servicer = _Health()
    srv = aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, srv)
    own = TlsFiles.from_pki(local, "table")
    service_port = srv.add_secure_port("127.0.0.1:0", server_credentials(own, mutual=True))
    client_port = srv.add_secure_port("127.0.0.1:0", server_credentials(own, mutual=False))
    await srv.start()
    try:
        yield Server(local, servicer, service_port, client_port)
    finally:
        await srv.stop(None)


async def _check(port: int, creds: grpc.ChannelCredentials | None) -> grpc.StatusCode:
    target = f"localhost:{port}"
    channel = aio.secure_channel(target, creds) if creds is not None else aio.insecure_channel(target)
    async with channel:
        try:
            stub: Any = health_pb2_grpc.HealthStub(channel)
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.RpcError as err:
            code: grpc.StatusCode = err.code()
            return code
    return grpc.StatusCode.OK


async def test_a_service_certificate_gets_in_on_the_service_listener_as_itself(server: Server) -> None:
    creds = channel_credentials(TlsFiles.from_pki(server.local, "dealer"))
    assert await _check(server.service_port, creds) == grpc.StatusCode.OK
    assert server.servicer.peers == [[b"spiffe://openpoker/service/dealer"]]


async def test_the_client_listener_needs_only_the_ca(server: Server) -> None:
    assert await _check(server.client_port, channel_credentials(TlsFiles.from_pki(server.local, None))) == (
        grpc.StatusCode.OK
    )
    assert server.servicer.peers == [[]]  # nobody named by certificate there


async def test_no_certificate_on_the_service_listener_is_refused(server: Server) -> None:
    creds = channel_credentials(TlsFiles.from_pki(server.local, None))
    assert await _check(server.service_port, creds) == grpc.StatusCode.UNAVAILABLE
    assert server.servicer.peers == []


async def test_plaintext_is_refused_on_both_listeners(server: Server) -> None:
    assert await _check(server.service_port, None) == grpc.StatusCode.UNAVAILABLE
    assert await _check(server.client_port, None) == grpc.StatusCode.UNAVAILABLE
    assert server.servicer.peers == []


async def test_a_certificate_from_another_ca_is_refused(server: Server, tmp_path: Path) -> None:
    other = pki.ensure_local_pki(tmp_path / "elsewhere")
    # Their client certificate, trusting our CA so that only the client side is foreign.
    foreign = TlsFiles(ca=server.local.ca_cert, cert=other.cert("dealer"), key=other.key("dealer"))
    assert await _check(server.service_port, channel_credentials(foreign)) == grpc.StatusCode.UNAVAILABLE
    # A server of another CA is not trusted by our clients either.
    theirs = channel_credentials(TlsFiles.from_pki(other, "dealer"))
    assert await _check(server.client_port, theirs) == grpc.StatusCode.UNAVAILABLE
    assert server.servicer.peers == []


def test_a_key_readable_by_others_refuses_to_load(tmp_path: Path) -> None:
    local = pki.ensure_local_pki(tmp_path)
    os.chmod(local.key("table"), 0o644)
    with pytest.raises(TlsFileError, match="0600"):
        server_credentials(TlsFiles.from_pki(local, "table"), mutual=True)
    with pytest.raises(TlsFileError, match="No such file"):
        TlsFiles(ca=tmp_path / "missing.crt").read_ca()
