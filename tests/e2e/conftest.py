"""The whole system as real processes: nats-server and the rng, wallet, table and dealer
services on free loopback ports and a temporary data folder (``pokerctl.local.LocalSystem``),
started once per test module and always stopped by it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from openpoker.pokerctl.local import LocalSystem

LEASE_TTL = "POKER_TABLE_LEASE_TTL"


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    data_dir: Path = tmp_path_factory.mktemp("e2e")
    # A restarted table service is a new instance: it owns its tables again once the crashed
    # one's partition leases expire. Short leases keep the restart tests short.
    saved = os.environ.get(LEASE_TTL)
    os.environ[LEASE_TTL] = "2"
    local = LocalSystem(data_dir=data_dir, free_ports=True)
    try:
        asyncio.run(local.start())
        yield local
    finally:
        asyncio.run(local.stop())
        if saved is None:
            os.environ.pop(LEASE_TTL, None)
        else:
            os.environ[LEASE_TTL] = saved
