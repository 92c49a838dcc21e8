"""GetHandHistory (redaction by caller) and WatchTable (redacted views, resume after a version)."""

from __future__ import annotations

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.phh import DealHole, load_phh
from openpoker.eventstore import codec as envelope_codec
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import (
    Running,
    act,
    create,
    join,
    start_hand,
    to_act,
)

AUDITOR = (("x-caller", "auditor"),)


async def play(svc: Running, hand_id: str, *, fold_first: bool) -> pb.Table:
    await start_hand(svc.stub, hand_id)
    view: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    if fold_first:
        folded: pb.Table = (await act(svc.stub, to_act(view), pb.ACTION_TYPE_FOLD)).table
        return folded
    while view.status == pb.TABLE_STATUS_IN_HAND:
        legal = view.current_hand.to_act
        action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
        view = (await act(svc.stub, to_act(view), action)).table
    return view


async def history(
    svc: Running, hand: str, metadata: tuple[tuple[str, str], ...]
) -> pb.GetHandHistoryResponse:
    reply: pb.GetHandHistoryResponse = await svc.stub.GetHandHistory(
        pb.GetHandHistoryRequest(name=f"tables/t1/hands/{hand}", format=pb.HISTORY_FORMAT_PHH),
        metadata=metadata,
    )
    return reply


def holes(hand: pb.Hand) -> dict[str, list[str]]:
    return {s.player_id: list(s.hole_cards) for s in hand.seats}


async def test_history_shows_only_what_the_caller_may_see(svc: Running) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await play(svc, "h1", fold_first=True)  # nobody shows
    await play(svc, "h2", fold_first=False)  # both show at showdown
    ann = await history(svc, "h1", (("x-player-id", "ann"),))
    assert all(holes(ann.hand)["ann"])
    assert holes(ann.hand)["bob"] in ([], ["", ""])  # folded, or hidden: never the cards
    assert not ann.envelopes  # the raw log holds every card: auditors only
    parsed = load_phh(ann.text)
    dealt = [a for a in parsed.actions if isinstance(a, DealHole)]
    known = [all(c is not None for c in a.cards or ()) for a in dealt]
    assert sorted(known) == [False, True]
    spectator = await history(svc, "h1", ())
    assert all(c == "" for cards in holes(spectator.hand).values() for c in cards)
    events = svc.app.store.events
    assert isinstance(events, MemoryTableEvents)
    events.reveals[("t1", "h1")] = "ab" * 32  # the dealer's audit record of the reveal
    assert ann.hand.revealed_seed == ""
    assert (await history(svc, "h1", (("x-player-id", "ann"),))).hand.revealed_seed == ""  # a seed shows all
    audit = await history(svc, "h1", AUDITOR)
    assert audit.hand.revealed_seed == "ab" * 32
    assert all(len(cards) == 2 and all(cards) for cards in holes(audit.hand).values())
    versions = [e.version for e in audit.envelopes]
    assert versions == list(range(audit.hand.first_version, audit.hand.last_version + 1))
    env = envelope_codec.from_proto(audit.envelopes[0])
    assert env.stream_id == "t1"
    assert [e.type for e in env.events][:2] == ["HandScheduled", "HandStarted"]
    # A showdown hand: both players' cards are public once shown.
    shown = await history(svc, "h2", (("x-player-id", "ann"),))
    assert shown.hand.outcome == pb.HAND_OUTCOME_SHOWDOWN
    assert all(all(cards) and len(cards) == 2 for cards in holes(shown.hand).values())
    assert shown.hand.payouts


async def test_history_of_a_live_hand_is_refused(svc: Running) -> None:
    import grpc

    from openpoker.shell.client import rich_error

    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await start_hand(svc.stub, "h1")
    with pytest.raises(grpc.RpcError) as caught:
        await history(svc, "h1", AUDITOR)
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_NOT_FINISHED")


async def collect(svc: Running, request: pb.WatchTableRequest, count: int) -> list[pb.WatchTableResponse]:
    out: list[pb.WatchTableResponse] = []
    call = svc.stub.WatchTable(request)
    async for message in call:
        out.append(message)
        if len(out) == count:
            call.cancel()
            break
    return out


async def test_watch_streams_redacted_views_and_resumes(svc: Running) -> None:
    import asyncio

    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    start = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version
    watching = asyncio.create_task(
        collect(svc, pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann"), 4)
    )
    await asyncio.sleep(0.05)
    view = (await start_hand(svc.stub, "h1")).version
    first = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    r1 = await act(svc.stub, to_act(first), pb.ACTION_TYPE_CALL)
    r2 = await act(svc.stub, to_act(r1.table), pb.ACTION_TYPE_CHECK)
    messages = await asyncio.wait_for(watching, 10)
    assert [m.version for m in messages] == [start, view, r1.version, r2.version]
    for m in messages[1:]:
        cards = {s.player_id: list(s.hole_cards) for s in m.table.seats if s.player_id}
        assert all(cards["ann"])
        assert cards["bob"] == ["", ""]
    assert [a.action for a in messages[2].new_actions] == [pb.ACTION_TYPE_CALL]
    assert [a.action for a in messages[3].new_actions] == [pb.ACTION_TYPE_CHECK]
    assert messages[3].new_actions[0].street == pb.STREET_PREFLOP
    # Resume after the first action: the next message is the one after it.
    resumed = await asyncio.wait_for(
        collect(
            svc, pb.WatchTableRequest(name="tables/t1", viewer_player_id="bob", from_version=r1.version), 1
        ),
        10,
    )
    assert resumed[0].version == r2.version
    bob_cards = {s.player_id: list(s.hole_cards) for s in resumed[0].table.seats if s.player_id}
    assert all(bob_cards["bob"])
    assert bob_cards["ann"] == ["", ""]
