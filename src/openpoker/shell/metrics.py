"""A service process's metrics (``prometheus_client``), served for Prometheus to scrape.

``POKER_METRICS_PORT`` (unset or 0: no endpoint) serves ``/metrics`` in the Prometheus text
format on ``POKER_METRICS_HOST`` (default ``127.0.0.1``: like NATS monitoring, nothing leaves the
host unless the operator says so). Besides the client library's process figures (CPU, memory,
open files), the services report what an operator must act on:

* ``openpoker_log_quarantined{service, stream}``: 1 while a log (a table id, or ``wallet``) holds
  a foreign or corrupt message the service refuses to write past (``eventstore.loading``); it
  stays 1 until an operator repairs the log and restarts the service.
* ``openpoker_log_findings_total{service, problem}``: such findings, by problem
  (``eventstore.loading.Problem``: ``rejected`` for a bad signature, ``chain broken``...).
* ``openpoker_snapshots_refused_total{service}``: snapshots not signed by their writer, ignored
  (the log was folded from its start instead).

Label values are bounded: a stream label appears only for a quarantined log.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Gauge, start_http_server

LOG_QUARANTINED = Gauge(
    "openpoker_log_quarantined",
    "1 while the log holds a foreign or corrupt message the service will not write past",
    ["service", "stream"],
)
LOG_FINDINGS = Counter(
    "openpoker_log_findings",
    "Foreign or corrupt messages found in a log as it was loaded or followed",
    ["service", "problem"],
)
SNAPSHOTS_REFUSED = Counter(
    "openpoker_snapshots_refused",
    "Snapshots not signed by their stream's writer, ignored for the log",
    ["service"],
)


def quarantined(service: str, stream: str, problem: str) -> None:
    """Record that ``service`` quarantined ``stream`` for ``problem``."""
    LOG_QUARANTINED.labels(service=service, stream=stream).set(1)
    LOG_FINDINGS.labels(service=service, problem=problem).inc()


def snapshot_refused(service: str) -> None:
    SNAPSHOTS_REFUSED.labels(service=service).inc()


@dataclass
class MetricsServer:
    """The running ``/metrics`` endpoint (a thread of the client library's WSGI server)."""

    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve(host: str, port: int) -> MetricsServer:
    """Serve ``/metrics`` on ``host:port`` (0: any free port) until ``stop``."""
    server, thread = start_http_server(port, addr=host)
    return MetricsServer(server=server, thread=thread)
