"""Fixtures shared by every test package.

``nats_server`` starts a real ``nats-server`` with JetStream on a free 127.0.0.1 port and a
temporary store folder, and always stops it (even when the test fails); ``nats_url`` is its URL.
Both are function-scoped: every test gets an empty server, so tests never see each other's
streams. Starting one takes a few tens of milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.natsproc import NatsServer


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(data_dir=tmp_path / "nats")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nats_url(nats_server: NatsServer) -> str:
    return nats_server.url
