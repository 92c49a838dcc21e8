"""The whole system as real processes: nats-server and the rng, wallet, table and dealer
services on free loopback ports and a temporary data folder (``pokerctl.local.LocalSystem``),
started once per test module and always stopped by it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from pokerctl.local import LocalSystem


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    data_dir: Path = tmp_path_factory.mktemp("e2e")
    local = LocalSystem(data_dir=data_dir, free_ports=True)
    asyncio.run(local.start())
    try:
        yield local
    finally:
        asyncio.run(local.stop())
