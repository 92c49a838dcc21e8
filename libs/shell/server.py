"""The ``grpc.aio`` server every service runs: interceptor, health, reflection, clean stop.

Usage (inside an async main)::

    spec = ServiceSpec(
        name=table_pb2.DESCRIPTOR.services_by_name["TableService"].full_name,
        register=table_pb2_grpc.add_TableServiceServicer_to_server,
        servicer=TableServicer(...),
    )
    running = await start_server(config, [spec])   # config: shell.config.ShellConfig
    ...                                           # running.port is the bound port (port 0 ok)
    await running.stop()                          # NOT_SERVING, then finish in-flight RPCs

Health: ``grpc.health.v1.Health`` answers SERVING for ``""`` and for every registered service
name, and NOT_SERVING once ``stop`` begins (so load balancers drain first). Reflection (v1alpha,
the only version grpcio-reflection ships) lists every registered service plus health.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from grpc import aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from shell.config import ShellConfig
from shell.interceptor import ShellInterceptor
from shell.logs import get_logger

# Poker messages are small; a low limit stops oversized requests before parsing (grpc.md §3.5).
MAX_MESSAGE_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceSpec:
    """One gRPC service to serve: its full name, the generated ``add_*_to_server`` and servicer."""

    name: str
    register: Callable[[Any, aio.Server], None]
    servicer: object


@dataclass(slots=True, kw_only=True)
class RunningServer:
    """A started server; ``port`` is the bound port (useful with port 0)."""

    server: aio.Server
    health: health.aio.HealthServicer
    host: str
    port: int
    service_names: tuple[str, ...]
    grace_seconds: float

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def stop(self, grace: float | None = None) -> None:
        """Report NOT_SERVING, refuse new RPCs, let in-flight ones finish within ``grace``."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self.grace_seconds if grace is None else grace)

    async def wait(self) -> None:
        await self.server.wait_for_termination()


def domain_for(service: str) -> str:
    """The ``ErrorInfo.domain`` of a service: ``poker.<service>``."""
    return f"poker.{service}"


async def start_server(
    config: ShellConfig,
    services: Sequence[ServiceSpec],
    *,
    interceptors: Sequence[aio.ServerInterceptor] = (),
    options: Sequence[tuple[str, Any]] = (),
) -> RunningServer:
    """Build, bind and start the server; raise ``RuntimeError`` if the port cannot be bound."""
    server = aio.server(
        interceptors=[*interceptors, ShellInterceptor(domain=domain_for(config.service))],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            # One process per port: fail loudly instead of sharing a port with a stale instance.
            ("grpc.so_reuseport", 0),
            *options,
        ],
    )
    for spec in services:
        spec.register(spec.servicer, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = tuple(spec.name for spec in services)
    reflection.enable_server_reflection(
        (*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server,
    )
    try:
        port = server.add_insecure_port(config.address)
    except RuntimeError as exc:
        raise RuntimeError(f"cannot listen on {config.address}: {exc}") from exc
    await server.start()
    for name in ("", *names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    get_logger().info("listening", address=f"{config.host}:{port}", services=list(names))
    return RunningServer(
        server=server,
        health=health_servicer,
        host=config.host,
        port=port,
        service_names=names,
        grace_seconds=config.grace_seconds,
    )
