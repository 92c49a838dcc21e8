"""The dealer's fakes over a real nats-server, for the dealer's integration tests.

``JetStreamWorld`` holds the fake table, rng and wallet of the unit tests (``fakes``), except
that every envelope the fake table writes is appended to ``TABLE_EVENTS`` in order (one pump
task), so a dealer sees the tables only through the stream, as in production. ``worlds``
connects, makes the streams the dealer needs and stops the pump on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext

from openpoker.eventstore.envelope import Envelope
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, ensure_stream
from openpoker.eventstore.subjects import table_subject
from openpoker.services.dealer.audit import JetStreamAudit
from tests.services.dealer.fakes import FakeRng, FakeTable, FakeWallet

W = TypeVar("W", bound="JetStreamWorld")


class JetStreamWorld:
    def __init__(self, nc: Client, js: JetStreamContext) -> None:
        self.nc = nc
        self.js = js
        self.store = JetStreamEventStore(js, stream=TABLE_EVENTS.name)
        self.queue: asyncio.Queue[tuple[str, Envelope]] = asyncio.Queue()
        self.table = FakeTable(lambda tid, env, _seq: self.queue.put_nowait((tid, env)))
        self.rng = FakeRng(self.table)
        self.wallet = FakeWallet()
        self.last: dict[str, int] = {}  # subject -> the last sequence appended
        self.pump_task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        while True:
            table_id, env = await self.queue.get()
            subject = table_subject(table_id)
            result = await self.store.append(subject, env, expected_sequence=self.last.get(subject, 0))
            self.last[subject] = result.sequence

    async def close(self) -> None:
        self.pump_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.pump_task


@contextlib.asynccontextmanager
async def worlds(nats_url: str, make: Callable[[Client, JetStreamContext], W]) -> AsyncIterator[W]:
    async with await nats.connect(nats_url) as nc:
        js = nc.jetstream()
        await ensure_stream(js, TABLE_EVENTS)
        await JetStreamAudit(js).ensure()
        world = make(nc, js)
        try:
            yield world
        finally:
            await world.close()
