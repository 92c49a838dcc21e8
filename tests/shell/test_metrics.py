"""The metrics endpoint (``shell.metrics``): off unless its port is set, on loopback by default,
serving what the services count in the Prometheus text format, and gone when the server stops."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from prometheus_client import REGISTRY

from openpoker.shell import metrics
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import RunningServer, start_server


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return str(reply.read().decode())


def _endpoint(server: RunningServer) -> metrics.MetricsServer | None:
    return server.metrics


def test_settings_default_to_no_endpoint_on_loopback() -> None:
    config = ShellConfig.from_env("table", {"POKER_INSECURE": "true"})
    assert (config.metrics_host, config.metrics_port) == ("127.0.0.1", 0)
    config = ShellConfig.from_env("wallet", {"POKER_INSECURE": "true", "POKER_WALLET_METRICS_PORT": "9101"})
    assert config.metrics_port == 9101


async def test_the_endpoint_serves_what_the_service_counted_until_the_server_stops() -> None:
    config = ShellConfig.from_env("table", {"POKER_INSECURE": "true", "POKER_TABLE_PORT": "0"})
    server = await start_server(config, [])
    try:
        assert server.metrics is None  # no port set: no endpoint
        server.metrics = metrics.serve("127.0.0.1", 0)  # any free port (0 in the settings means none)
        refused = REGISTRY.get_sample_value("openpoker_snapshots_refused_total", {"service": "table"}) or 0.0
        metrics.quarantined("table", "t-metrics", "rejected")
        metrics.snapshot_refused("table")
        assert (
            REGISTRY.get_sample_value("openpoker_snapshots_refused_total", {"service": "table"})
            == refused + 1
        )
        text = _scrape(server.metrics.port)
        assert 'openpoker_log_quarantined{service="table",stream="t-metrics"} 1.0' in text
        assert 'openpoker_log_findings_total{problem="rejected",service="table"}' in text
        assert 'openpoker_snapshots_refused_total{service="table"}' in text
        assert "process_cpu_seconds_total" in text  # the client library's process figures
        port = server.metrics.port
    finally:
        await server.stop(0)
    assert _endpoint(server) is None
    with pytest.raises(urllib.error.URLError):
        _scrape(port)


async def test_the_endpoint_listens_where_the_settings_say(unused_tcp_port: int) -> None:
    config = ShellConfig.from_env(
        "dealer",
        {
            "POKER_INSECURE": "true",
            "POKER_DEALER_PORT": "0",
            "POKER_DEALER_METRICS_PORT": str(unused_tcp_port),
        },
    )
    server = await start_server(config, [])
    try:
        assert server.metrics is not None
        assert server.metrics.port == unused_tcp_port
        assert "openpoker_log_quarantined" in _scrape(unused_tcp_port)
    finally:
        await server.stop(0)
