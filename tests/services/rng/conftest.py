"""The ``rig`` fixture: a real rng server over in-memory stores (see ``rig.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.services.rng.rig import Rig, start_rig


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    async for r in start_rig():
        yield r
