"""Fixtures the integration tests share (``nats_server``/``nats_url`` are in ``tests/conftest.py``).

``wallet`` is a real wallet service on a free port over the test's nats-server, where each
player ``funded`` names (ann and bob unless a module overrides it) has 1,000 in cash; always
stopped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openpoker.services.wallet.server import WalletServer
from tests.integration.table_system import funded_wallet


@pytest.fixture
def funded() -> tuple[str, ...]:
    return ("ann", "bob")


@pytest.fixture
async def wallet(nats_url: str, funded: tuple[str, ...]) -> AsyncIterator[WalletServer]:
    async with funded_wallet(nats_url, funded) as running:
        yield running
