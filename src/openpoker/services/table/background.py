"""The table application's background tasks: snapshots, hand index entries, cash-outs and
refunds retried, and money flows that outlive their caller. Held here so that ``cancel`` can
stop them at shutdown and ``drain`` wait for them (tests, shutdown)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def settled(task: asyncio.Task[Any]) -> None:
    """Done callback of a task whose caller may have gone: its error was answered (or nobody is
    left to answer); read it so it is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


class Background:
    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(
        self, coro: Coroutine[Any, Any, T], *, context: contextvars.Context | None = None
    ) -> asyncio.Task[T]:
        """Run ``coro`` as a task of its own (in ``context``, else a copy of the caller's)."""
        task = asyncio.get_running_loop().create_task(coro, context=context)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def cancel(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for task in list(self.tasks):
            with contextlib.suppress(BaseException):
                await task

    async def drain(self) -> None:
        """Wait until no task is left, those started meanwhile included."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
