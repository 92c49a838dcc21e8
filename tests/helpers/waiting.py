"""Waiting for something another task or process does: a liveness guard, not a timing test."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def until(condition: Callable[[], bool], *, what: str = "condition", within: float = 10.0) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``within`` seconds. The budget is
    generous on purpose: a test asserts that the condition comes to hold, never how soon."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.005)


async def answer(
    probe: Callable[[], Awaitable[T | None]], *, what: str = "an answer", within: float = 60.0
) -> T:
    """Await ``probe`` every 50 ms until it answers something (not None) and return that; fail
    after ``within`` seconds. A liveness guard, as ``until`` is."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while (got := await probe()) is None:
        if loop.time() > end:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.05)
    return got
