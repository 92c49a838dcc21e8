"""Durable buy-in intents (issue 19): a top-up that races a hand's start, or a join whose seat is
taken meanwhile, is refused by the table after the wallet moved the chips. Whatever step the
process is killed at, a new instance over the same log and wallet finishes the intent: every
seat's stack equals its escrow, the player's cash plus escrow is what it was, and no intent is
left open.

A kill is simulated by holding the flow at one step (it never goes on) and stopping the app,
which cancels the held flow; a second app (another owner, a higher epoch) then loads the table.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table.ownership import StaticOwnership
from openpoker.tablelog import snapshot
from openpoker.tablelog.events import BuyInCancelled, BuyInIntended, BuyInRefunded
from openpoker.tablelog.model import LogEvent, TableModel
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import FakeWallet, Running, create, join, rid, serve, start_hand

# The steps of a refused buy-in, in order; the flow is killed at one of them.
LOG_STEPS = ("before_seat", "before_cancel", "before_refunded")
STEPS = (
    "none",
    "before_buy_in",  # the intent is in the log, the wallet not asked yet
    "after_buy_in",  # the wallet moved the chips; its answer never arrives
    "before_seat",  # the table changed meanwhile; the request's append not sent yet
    "before_cancel",  # the table refused; the cancel not appended yet
    "before_refund",  # the cancel is in the log; the refund not sent
    "after_refund",  # the wallet refunded; its answer never arrives
    "before_refunded",  # the refund answered; not recorded in the log yet
)


class GatedWallet(FakeWallet):
    """A ``FakeWallet`` that, once armed for ``player``: holds the buy-in after moving the chips
    until ``release`` (the race happens meanwhile), and never returns from ``kill_at`` (once)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.player = ""
        self.kill_at = ""
        self.moved = asyncio.Event()
        self.release = asyncio.Event()
        self.killed = asyncio.Event()

    async def hold(self, step: str) -> None:
        if self.kill_at == step:
            self.kill_at = ""  # once: the instance that recovers uses this wallet too
            self.killed.set()
            await asyncio.Event().wait()  # the process is gone: nothing after this runs

    async def buy_in(self, *, request_id: str, table_id: str, player: str, amount: int) -> bool:
        if player != self.player:
            return await super().buy_in(
                request_id=request_id, table_id=table_id, player=player, amount=amount
            )
        await self.hold("before_buy_in")
        seen = await super().buy_in(request_id=request_id, table_id=table_id, player=player, amount=amount)
        self.moved.set()
        await self.release.wait()
        await self.hold("after_buy_in")
        return seen

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None:
        if player == self.player and request_id.endswith(":refund"):
            await self.hold("before_refund")
            await super().cash_out(request_id=request_id, table_id=table_id, player=player, amount=amount)
            await self.hold("after_refund")
            return
        await super().cash_out(
            request_id=request_id, table_id=table_id, player=player, amount=amount, after_hand=after_hand
        )


def kill_in_log(svc: Running, wallet: GatedWallet, step: str) -> None:
    """Hold the appends of ``step``: the request's own (``before_seat``), its cancel or its
    refund's record."""
    execute = svc.app.writer.execute
    suffix = {"before_seat": "", "before_cancel": ":cancel", "before_refunded": ":refunded"}[step]

    async def held(*args: Any, **kwargs: Any) -> Any:
        request_id = str(kwargs["request_id"])
        mine = request_id.endswith(suffix) if suffix else not request_id.count(":")
        if mine and wallet.kill_at == step and wallet.release.is_set():
            await wallet.hold(step)
        return await execute(*args, **kwargs)

    svc.app.writer.execute = held  # type: ignore[method-assign]


async def load(svc: Running) -> TableModel:
    """Load the table for writing (what any first command does) and let its followups finish."""
    async with svc.app.writer.lock("t1"):
        await svc.app.writer.owned("t1")
    await svc.app.drain()
    async with svc.app.writer.lock("t1"):
        model, _ = await svc.app.writer.owned("t1")
    return model


def stacks(model: TableModel) -> dict[str, int]:
    assert model.state is not None
    return {occ.player: occ.stack for occ in model.state.seats.values()}


async def race(
    wallet: GatedWallet, step: str, *, request: Callable[[Running], Awaitable[Any]], meanwhile: Any
) -> Running:
    """Run the race up to ``step`` on a first instance, kill it there, and return a second
    instance (a new owner) that has loaded the table over the same log and wallet."""
    events = MemoryTableEvents()
    first = await serve(events, wallet)
    await create(first.stub)
    await join(first.stub, "bob", 4)
    await meanwhile.setup(first)
    wallet.player, wallet.kill_at = "ann", step
    if step in LOG_STEPS:
        kill_in_log(first, wallet, step)
    attempt = asyncio.ensure_future(request(first))
    if step == "before_buy_in":
        await wallet.killed.wait()
        wallet.release.set()  # the wallet answers the next instance at once
    else:
        await wallet.moved.wait()
        await meanwhile.race(first)  # the table changes under the request
        wallet.release.set()
        if step == "none":
            with contextlib.suppress(Exception):
                await attempt
        else:
            await wallet.killed.wait()
    await first.stop()  # the kill: every flow of the first instance stops where it is
    with contextlib.suppress(BaseException):
        await attempt
    second = await serve(events, wallet, StaticOwnership(name="table-2", epoch=2))
    await load(second)
    return second


class TopUpRace:
    """ann sits with 100 and tops up 100 while the dealer starts a hand: refused."""

    async def setup(self, svc: Running) -> None:
        await join(svc.stub, "ann", 1, buy_in=100)

    async def race(self, svc: Running) -> None:
        await start_hand(svc.stub, "h1")


class JoinRace:
    """ann joins seat 1 with 200 while cat takes that seat: refused."""

    async def setup(self, svc: Running) -> None:
        pass

    async def race(self, svc: Running) -> None:
        await join(svc.stub, "cat", 1)


async def top_up(svc: Running) -> Any:
    return await svc.stub.TopUp(
        pb.TopUpRequest(request_id=rid(), table="tables/t1", player_id="ann", amount=100)
    )


async def join_ann(svc: Running) -> Any:
    return await join(svc.stub, "ann", 1)


@pytest.mark.parametrize("step", STEPS)
async def test_a_top_up_refused_after_the_wallet_moved_survives_a_kill_at_every_step(step: str) -> None:
    wallet = GatedWallet(cash={"ann": 1000, "bob": 1000})
    second = await race(wallet, step, request=top_up, meanwhile=TopUpRace())
    try:
        # The dealer voids the hand it started (no dealer here): every stack as it began.
        if (await load(second)).current_hand is not None:
            await second.app.commands.void_hand(request_id=rid(), table_id="t1", hand_id="h1", reason="test")
        model = await load(second)
        assert stacks(model) == {"ann": 100, "bob": 200}
        assert {p: wallet.escrow[("t1", p)] for p in ("ann", "bob")} == stacks(model)
        assert wallet.cash["ann"] == 900
        assert (model.intents, model.owed) == ({}, {})
    finally:
        await second.stop()


@pytest.mark.parametrize("step", STEPS)
async def test_a_join_refused_after_the_wallet_moved_survives_a_kill_at_every_step(step: str) -> None:
    wallet = GatedWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000})
    second = await race(wallet, step, request=join_ann, meanwhile=JoinRace())
    try:
        model = await load(second)
        seated = {"bob": 200} if step == "before_buy_in" else {"cat": 200, "bob": 200}  # cat raced
        assert stacks(model) == seated
        assert {p: wallet.escrow[("t1", p)] for p in seated} == seated
        assert wallet.cash["ann"] + wallet.escrow.get(("t1", "ann"), 0) == 1000
        assert wallet.escrow.get(("t1", "ann"), 0) == 0
        assert (model.intents, model.owed) == ({}, {})
    finally:
        await second.stop()


async def test_a_join_killed_before_its_append_is_refunded_not_seated() -> None:
    """Killed after the wallet moved the chips and nothing refused it: the next owner does not
    seat the request (its caller was told nothing), it refunds it; a retry is refused."""
    wallet = GatedWallet(cash={"ann": 1000, "bob": 1000})
    events = MemoryTableEvents()
    first = await serve(events, wallet)
    await create(first.stub)
    wallet.player, wallet.kill_at = "ann", "after_buy_in"
    request = pb.JoinTableRequest(request_id=rid(), table="tables/t1", player_id="ann", seat=1, buy_in=200)
    attempt = asyncio.ensure_future(first.stub.JoinTable(request))
    await wallet.moved.wait()
    wallet.release.set()
    await wallet.killed.wait()
    await first.stop()
    with contextlib.suppress(BaseException):
        await attempt
    second = await serve(events, wallet, StaticOwnership(name="table-2", epoch=2))
    try:
        model = await load(second)
        assert stacks(model) == {}
        assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (1000, 0)
        retry = second.stub.JoinTable(request)
        with pytest.raises(Exception, match=r"already used"):
            await retry
        assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (1000, 0)
    finally:
        await second.stop()


async def test_the_intent_closes_with_the_seat_and_takes_one_envelope_more() -> None:
    wallet = FakeWallet(cash={"ann": 1000})
    svc = await serve(MemoryTableEvents(), wallet)
    try:
        await create(svc.stub)
        before = (await load(svc)).version
        await join(svc.stub, "ann", 1)
        model = await load(svc)
        assert model.version == before + 2  # the intent, then the seat
        assert (model.intents, model.owed) == ({}, {})
    finally:
        await svc.stop()


async def test_open_and_owed_intents_survive_a_snapshot() -> None:
    svc = await serve(MemoryTableEvents(), FakeWallet())
    try:
        await create(svc.stub)
        model = await load(svc)
    finally:
        await svc.stop()
    at = model.created_at
    assert at is not None
    steps: tuple[list[LogEvent], ...] = (
        [BuyInIntended(request_id="r1", player="ann", amount=100, kind="top-up")],
        [BuyInIntended(request_id="r2", player="bob", amount=50, kind="buy-in")],
        [BuyInCancelled(request_id="r2")],
        [BuyInIntended(request_id="r3", player="cat", amount=70, kind="buy-in")],
        [BuyInCancelled(request_id="r3"), BuyInRefunded(request_id="r3", chips=70)],
        [BuyInIntended(request_id="r4", player="dan", amount=20, kind="buy-in")],
    )
    for events in steps:
        v = model.version + 1
        model.apply(events, version=v, sequence=v, envelope_hash=b"", command_id=f"c{v}", recorded_at=at)
    model.apply([], version=model.version + 1, sequence=0, envelope_hash=b"", command_id="r4", recorded_at=at)
    assert (set(model.intents), set(model.owed)) == ({"r1"}, {"r2"})  # r4 closed by its own envelope
    restored = snapshot.decode(snapshot.encode(model))
    assert (restored.intents, restored.owed) == (model.intents, model.owed)


async def test_a_retry_while_the_first_attempt_is_under_way_gets_its_answer() -> None:
    """The retry waits for the attempt under way (or finds its request in the log): one buy-in."""
    wallet = GatedWallet(cash={"ann": 1000})
    svc = await serve(MemoryTableEvents(), wallet)
    try:
        await create(svc.stub)
        wallet.player = "ann"
        request = pb.JoinTableRequest(
            request_id=rid(), table="tables/t1", player_id="ann", seat=1, buy_in=200
        )
        first = asyncio.ensure_future(svc.stub.JoinTable(request))
        await wallet.moved.wait()
        retry = asyncio.ensure_future(svc.stub.JoinTable(request))
        wallet.release.set()
        answers = await asyncio.gather(first, retry)
        assert answers[0] == answers[1]
        assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (800, 200)
        assert [c[0] for c in wallet.calls if c[2] == "ann"] == ["buy_in"]
    finally:
        await svc.stop()
