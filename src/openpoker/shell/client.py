"""Client side: channels, and decoding a rich error back into reason and metadata.

``health_status(target)`` and ``reflected_services(target)`` ask a running server (tests,
``pokerctl up``). ``rich_error(err)`` reads the ``grpc-status-details-bin`` trailer of a failed
call and returns its ``ErrorInfo`` as a ``RichError`` (code, message, reason, domain,
metadata); tests assert on ``reason`` and ``metadata`` and ``pokerctl`` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.rpc.error_details_pb2 import ErrorInfo
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from openpoker.shell.tls import TlsFiles, channel_credentials


@dataclass(frozen=True, slots=True, kw_only=True)
class RichError:
    code: grpc.StatusCode
    message: str
    reason: str = ""  # empty when the server sent no ErrorInfo (e.g. UNIMPLEMENTED, UNAVAILABLE)
    domain: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)


def rich_error(err: grpc.RpcError) -> RichError:
    """Decode a failed call (``grpc.aio.AioRpcError`` or a sync ``grpc.Call`` error)."""
    code: grpc.StatusCode = err.code()
    message: str = err.details() or ""
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    if status is not None:
        for detail in status.details:
            if detail.Is(ErrorInfo.DESCRIPTOR):
                info = ErrorInfo()
                detail.Unpack(info)
                return RichError(
                    code=code,
                    message=message,
                    reason=info.reason,
                    domain=info.domain,
                    metadata=dict(info.metadata),
                )
    return RichError(code=code, message=message)


_OPTIONS = (("grpc.max_receive_message_length", 1024 * 1024), ("grpc.enable_retries", 1))


def channel(target: str, tls: TlsFiles | None = None) -> aio.Channel:
    """A ``grpc.aio`` channel: TLS trusting ``tls.ca`` (with this end's certificate, if it has
    one, for a service listener), or plaintext to a ``POKER_INSECURE`` server when ``tls`` is
    None. A person's token goes in each call's ``authorization`` metadata (``bearer_metadata``)."""
    if tls is None:
        return aio.insecure_channel(target, options=list(_OPTIONS))
    return aio.secure_channel(target, channel_credentials(tls), options=list(_OPTIONS))


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The metadata that carries a bearer token."""
    return (("authorization", f"Bearer {token}"),)


async def health_status(
    target: str, service: str = "", *, deadline: float = 2.0, tls: TlsFiles | None = None
) -> str:
    """The health status name (``SERVING``, ``NOT_SERVING``, ...) of ``service`` at ``target``.

    Raises ``grpc.RpcError`` if the server does not answer (e.g. UNAVAILABLE while starting).
    """
    async with channel(target, tls) as chan:
        stub: Any = health_pb2_grpc.HealthStub(chan)
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=deadline)
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


async def reflected_services(target: str, *, deadline: float = 2.0) -> set[str]:
    """The service names the server lists through reflection (v1alpha)."""
    async with channel(target) as chan:
        stub: Any = reflection_pb2_grpc.ServerReflectionStub(chan)  # type: ignore[arg-type]
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        names: set[str] = set()
        async for reply in stub.ServerReflectionInfo(iter([request]), timeout=deadline):
            names |= {s.name for s in reply.list_services_response.service}
        return names
