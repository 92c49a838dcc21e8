"""Fixtures the table service tests share.

``cash`` is what each player holds in the fake wallet: ann and bob 1,000 each unless a module
overrides the fixture for its own players. ``wallet`` is that ``FakeWallet`` and ``svc`` the
service on a free port over an in-memory log with that wallet, always stopped; a test that asks
for both gets the same wallet the service uses. A module that needs another service
(reconciliation on, another ownership, a log it keeps) calls ``helpers.serve`` itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import FakeWallet, Running, serve


@pytest.fixture
def cash() -> dict[str, int]:
    return {"ann": 1000, "bob": 1000}


@pytest.fixture
def wallet(cash: dict[str, int]) -> FakeWallet:
    return FakeWallet(cash=cash)


@pytest.fixture
async def svc(wallet: FakeWallet) -> AsyncIterator[Running]:
    running = await serve(MemoryTableEvents(), wallet)
    try:
        yield running
    finally:
        await running.stop()
