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
* ``openpoker_dealer_tables_paused{reason}``: tables where the dealer starts no hands, by why:
  ``operator`` (PauseTable), or the refusal that kept the table's hands from opening when the
  dealer paused it itself (``services.dealer.pausing``).
* ``openpoker_dealer_hand_open_failures_total{reason}``: hands that could not open (the wallet
  refused the reservation, the table refused ``StartHand``...), by the refusal's reason.

Label values are bounded: a stream label appears only for a quarantined log, and a reason is a
service's stable refusal reason.
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
DEALER_TABLES_PAUSED = Gauge(
    "openpoker_dealer_tables_paused",
    "Tables where the dealer starts no hands, by why (operator, or the refusal that paused it)",
    ["reason"],
)
DEALER_HAND_OPEN_FAILURES = Counter(
    "openpoker_dealer_hand_open_failures",
    "Hands the dealer could not open (reservation or start refused), by the refusal's reason",
    ["reason"],
)


def quarantined(service: str, stream: str, problem: str) -> None:
    """Record that ``service`` quarantined ``stream`` for ``problem``."""
    LOG_QUARANTINED.labels(service=service, stream=stream).set(1)
    LOG_FINDINGS.labels(service=service, problem=problem).inc()


def snapshot_refused(service: str) -> None:
    SNAPSHOTS_REFUSED.labels(service=service).inc()


def dealer_paused(reason: str, *, paused: bool) -> None:
    """A table paused (or resumed) for ``reason``."""
    gauge = DEALER_TABLES_PAUSED.labels(reason=reason)
    if paused:
        gauge.inc()
    else:
        gauge.dec()


def dealer_open_failed(reason: str) -> None:
    DEALER_HAND_OPEN_FAILURES.labels(reason=reason).inc()


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
