"""WatchTable on the table's owner, fed from its model (``services.table.watchers``): the same
messages as the log path gives, one per version, and a seamless hand-over to the log path when
the local feed breaks off (the table forgotten, a client that does not read)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table import mapping
from openpoker.services.table.watchers import LocalWatchers
from openpoker.tablelog.model import ActionEntry, TableModel
from tests.services.table.helpers import (
    Running,
    act,
    create,
    join,
    start_hand,
    to_act,
)


@pytest.fixture
def cash() -> dict[str, int]:
    return {"ann": 10_000, "bob": 10_000}


class CountingFollows:
    """Counts the log-path subscriptions (``follow``) the app opens."""

    def __init__(self, svc: Running) -> None:
        self.count = 0
        events = svc.app.store.events
        original = events.follow

        def follow(subject: str, *, after_sequence: int) -> AsyncGenerator[object, None]:
            self.count += 1
            return original(subject, after_sequence=after_sequence)

        events.follow = follow  # type: ignore[method-assign,assignment]


async def seated(svc: Running) -> int:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    return int((await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version)


async def play_hands(svc: Running, count: int, first: int = 1) -> int:
    """Plays ``count`` check/call hands (with a raise-call in each); returns the last version."""
    version = 0
    for n in range(first, first + count):
        reply = await start_hand(svc.stub, f"h{n}")
        view: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
        raised = False
        while view.status == pb.TABLE_STATUS_IN_HAND:
            legal = view.current_hand.to_act
            if not raised and pb.ACTION_TYPE_RAISE in legal.actions:
                view = (
                    await act(svc.stub, to_act(view), pb.ACTION_TYPE_RAISE, amount=legal.min_raise_to)
                ).table
                raised = True
                continue
            action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
            view = (await act(svc.stub, to_act(view), action)).table
        version = max(int(view.version), int(reply.version))
    return version


async def take(call: object, count: int) -> list[pb.WatchTableResponse]:
    out: list[pb.WatchTableResponse] = []
    async for message in call:  # type: ignore[attr-defined]
        out.append(message)
        if len(out) == count:
            break
    return out


def render_for(viewer: str | None) -> Callable[[TableModel, list[ActionEntry]], pb.WatchTableResponse]:
    def render(model: TableModel, entries: list[ActionEntry]) -> pb.WatchTableResponse:
        out = pb.WatchTableResponse(
            version=model.version, new_actions=[mapping.action_record(e) for e in entries]
        )
        mapping.table_view(model, viewer, into=out.table)
        return out

    return render


async def test_owner_feeds_watchers_from_its_model_with_the_log_paths_messages(svc: Running) -> None:
    start = await seated(svc)
    follows = CountingFollows(svc)
    local = svc.stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann"))
    first = await take(local, 1)
    assert first[0].version == start
    assert len(svc.app.watchers.of("t1")) == 1
    last = await play_hands(svc, 3)
    got = await take(local, last - start)
    local.cancel()
    assert [m.version for m in got] == list(range(start + 1, last + 1))  # one per version
    assert follows.count == 0  # no subscription to the log for the owner's watcher
    # The log path (a resume from the first version) gives the very same messages.
    logged = svc.stub.WatchTable(
        pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann", from_version=start)
    )
    from_log = await take(logged, last - start)
    logged.cancel()
    assert follows.count == 1
    assert from_log == got
    raises = [a for m in got for a in m.new_actions if a.action == pb.ACTION_TYPE_RAISE]
    assert len(raises) == 3  # the actions came with the versions that added them


async def test_a_forgotten_table_hands_the_watch_over_to_the_log_without_gap(svc: Running) -> None:
    start = await seated(svc)
    watching = svc.stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="bob"))
    assert [m.version for m in await take(watching, 1)] == [start]
    middle = await play_hands(svc, 1)
    svc.app.forget("t1")  # as when the lease is lost: the cached model is dropped
    last = await play_hands(svc, 1, first=2)
    got = await take(watching, last - start)
    watching.cancel()
    assert [m.version for m in got] == list(range(start + 1, last + 1))
    assert middle < last
    assert not svc.app.watchers.of("t1")


async def test_a_client_that_does_not_read_is_served_from_the_log_past_the_limit(svc: Running) -> None:
    svc.app.watchers = LocalWatchers(limit=3)
    start = await seated(svc)
    views = svc.app.watch("t1", 0, render_for("ann"))
    async with contextlib.aclosing(views):
        first = await anext(views)
        assert first.version == start
        last = await play_hands(svc, 2)  # many more than 3 versions while nobody reads
        got = [await asyncio.wait_for(anext(views), 5) for _ in range(last - start)]
    assert [m.version for m in got] == list(range(start + 1, last + 1))
    assert not svc.app.watchers.of("t1")


async def test_watchers_get_their_own_redacted_views(svc: Running) -> None:
    start = await seated(svc)
    ann = svc.stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann"))
    bob = svc.stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="bob"))
    spectator = svc.stub.WatchTable(pb.WatchTableRequest(name="tables/t1"))
    for call in (ann, bob, spectator):
        await take(call, 1)
    assert len(svc.app.watchers.of("t1")) == 3
    reply = await start_hand(svc.stub, "h1")
    seen = {}
    for name, call in (("ann", ann), ("bob", bob), ("", spectator)):
        (message,) = await take(call, reply.version - start)
        call.cancel()
        seen[name] = {s.player_id: list(s.hole_cards) for s in message.table.seats if s.player_id}
    assert all(seen["ann"]["ann"])
    assert seen["ann"]["bob"] == ["", ""]
    assert all(seen["bob"]["bob"])
    assert seen["bob"]["ann"] == ["", ""]
    assert seen[""]["ann"] == ["", ""]
    assert seen[""]["bob"] == ["", ""]


async def test_a_watch_from_the_log_starts_at_the_newest_snapshot(svc: Running) -> None:
    await seated(svc)
    last = await play_hands(svc, 3)
    await svc.app.drain()  # the hand-boundary snapshots are written in the background
    reads: list[int] = []
    events = svc.app.store.events
    original = events.read

    async def read(subject: str, *, after_sequence: int = 0, from_version: int = 1) -> Any:
        reads.append(after_sequence)
        return await original(subject, after_sequence=after_sequence, from_version=from_version)

    events.read = read  # type: ignore[method-assign]
    from_log = svc.app.queries.watch_log("t1", 0, render_for("ann"))
    async with contextlib.aclosing(from_log):
        first = await anext(from_log)
    assert reads
    assert min(reads) > 0  # the snapshot, then only the log after it: never the whole log
    local = svc.app.watch("t1", 0, render_for("ann"))
    async with contextlib.aclosing(local):
        assert await anext(local) == first
    assert first.version == last


async def test_watchers_of_one_viewer_share_one_rendering_per_version(svc: Running) -> None:
    start = await seated(svc)
    calls: Counter[str | None] = Counter()

    def counting(viewer: str | None) -> Callable[[TableModel, list[ActionEntry]], pb.WatchTableResponse]:
        inner = render_for(viewer)

        def render(model: TableModel, entries: list[ActionEntry]) -> pb.WatchTableResponse:
            calls[viewer] += 1
            return inner(model, entries)

        return render

    viewers: list[str | None] = ["ann", "ann", None, None, None]
    watches = [svc.app.watch("t1", 0, counting(v), key=v) for v in viewers]
    try:
        for watch in watches:
            assert (await anext(watch)).version == start
        calls.clear()
        reply = await start_hand(svc.stub, "h1")
        versions = reply.version - start
        got = [[await asyncio.wait_for(anext(w), 5) for _ in range(versions)] for w in watches]
    finally:
        for watch in watches:
            await watch.aclose()
    assert calls == {"ann": versions, None: versions}  # once per version and viewer
    for n in range(versions):
        assert got[0][n] is got[1][n]
        assert got[2][n] is got[3][n] is got[4][n]
        assert got[0][n] != got[2][n]  # ann sees her cards, a spectator does not


async def test_a_watch_goes_to_the_log_when_the_lease_cannot_be_checked(
    svc: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = await seated(svc)

    async def away(partition: int) -> int:
        raise RuntimeError("the lease bucket is unreachable")

    monkeypatch.setattr(svc.app.ownership, "epoch", away)
    views = svc.app.watch("t1", 0, render_for("ann"))
    async with contextlib.aclosing(views):
        assert (await anext(views)).version == start  # served from the log
        assert not svc.app.watchers.of("t1")
