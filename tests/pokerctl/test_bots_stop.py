"""``BotRun.stop`` ends every bot even when one swallows a cancellation on its way (as
``asyncio.wait_for`` in Python 3.11 can, when the awaited result lands at the same moment)."""

from __future__ import annotations

import asyncio

from openpoker.pokerctl.bots import BotRun, BotStats


async def test_stop_cancels_again_a_bot_that_swallowed_the_first_cancellation() -> None:
    swallowed = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            swallowed.set()  # the cancellation lost on its way: the bot goes on
        await asyncio.sleep(3600)

    async def plain() -> None:
        await asyncio.sleep(3600)

    tasks = [asyncio.create_task(stubborn()), asyncio.create_task(plain())]
    await asyncio.sleep(0)
    run = BotRun(tasks=tasks, bots=[], channels=[], stats=BotStats())
    await asyncio.wait_for(run.stop(), timeout=30)  # a liveness guard: it used to wait for ever
    assert swallowed.is_set()
    assert all(t.cancelled() for t in tasks)
