"""A table driver's wake-up: an event anyone may set (the feed, an operator, a presence report)
and at most one timer of the driver's own."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass(slots=True)
class Wakeup:
    event: asyncio.Event = field(default_factory=asyncio.Event)
    timer: asyncio.TimerHandle | None = None  # the wake-up ``arm`` keeps (None: none due)
    timer_for: object = None  # what ``timer`` was armed for (a clock and its deadline)

    def set(self) -> None:
        self.event.set()

    async def sleep(self, delay: float | None, wake_for: object = None) -> None:
        """Until ``set`` or ``delay`` seconds (None: until ``set``)."""
        if delay is not None and delay <= 0:
            await asyncio.sleep(0)  # let the feed and the other tables run
            return
        self.arm(delay, wake_for)
        await self.event.wait()
        self.event.clear()

    def arm(self, delay: float | None, wake_for: object = None) -> None:
        """One wake-up timer per table, kept while it is for the same clock and deadline
        (``wake_for``): a decision's clock is asked for again on every envelope of the hand, and
        a new ``asyncio.timeout`` (a timer handle, a context, a cancellation) per wake-up was
        the largest part of the driver's work outside its calls. Any other wait re-arms. (A
        plain timer, not ``wait_for``: ``wait_for`` can swallow a cancellation that arrives as
        the wake-up does, Python 3.11, leaving a driver that never stops.)"""
        timer = self.timer
        if timer is not None:
            if delay is not None and wake_for is not None and wake_for == self.timer_for:
                return
            timer.cancel()
            self.timer = None
        self.timer_for = None
        if delay is None:
            return
        loop = asyncio.get_running_loop()
        self.timer = loop.call_at(loop.time() + delay, self._ring)
        self.timer_for = wake_for

    def _ring(self) -> None:
        self.timer = None
        self.timer_for = None
        self.event.set()
