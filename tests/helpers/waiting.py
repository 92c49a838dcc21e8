"""Waiting for something another task or process does: a liveness guard, not a timing test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(condition: Callable[[], bool], *, what: str = "condition", within: float = 10.0) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``within`` seconds. The budget is
    generous on purpose: a test asserts that the condition comes to hold, never how soon."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.005)
