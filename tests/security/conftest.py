"""``calls``: stubs of every service of the module's secure ``system`` (tests/helpers/secure.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openpoker.pokerctl.local import LocalSystem
from tests.helpers.secure import Calls


@pytest.fixture
async def calls(system: LocalSystem) -> AsyncIterator[Calls]:
    c = Calls(system)
    try:
        yield c
    finally:
        await c.close()
