"""``SetShowPreferences`` and ``ShowHand`` through the table service (in-process, plaintext rig):
a player's showdown choices on their own seat only, idempotent by request id; the winner by folds
shows on command (every viewer, GetHand and the hand history see the cards) or at once by their
choice; a loser's, a second and a late show are refused with CANNOT_SHOW_HAND; a player-role
caller naming another player is refused with NOT_YOUR_SEAT."""

from __future__ import annotations

import grpc
import pokerkit
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table.handlers import DOMAIN, TableServicer
from openpoker.shell import identity
from openpoker.shell.client import rich_error
from openpoker.shell.errors import to_status
from openpoker.shell.identity import Kind, Principal
from openpoker.shell.tokens import Role
from openpoker.tablelog import model as table_model
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import (
    DEALER,
    FakeWallet,
    Running,
    act,
    create,
    join,
    rid,
    serve,
    start_hand,
)

TABLE = "tables/t1"
PLAYERS = ("ann", "bob", "cat")


async def _three() -> Running:
    svc = await serve(MemoryTableEvents(), FakeWallet(cash=dict.fromkeys(PLAYERS, 10_000)))
    await create(svc.stub)
    for i, player in enumerate(PLAYERS):
        await join(svc.stub, player, i + 1)
    return svc


async def _view(svc: Running, viewer: str = "") -> pb.Table:
    table: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name=TABLE, viewer_player_id=viewer))).table
    return table


def _seat(table: pb.Table, player: str) -> pb.Seat:
    return next(s for s in table.seats if s.player_id == player)


def prefs(player: str, request_id: str = "", **choices: bool) -> pb.SetShowPreferencesRequest:
    return pb.SetShowPreferencesRequest(
        request_id=request_id or rid(), table=TABLE, player_id=player, **choices
    )


def show(player: str, request_id: str = "", hand_id: str = "") -> pb.ShowHandRequest:
    return pb.ShowHandRequest(request_id=request_id or rid(), table=TABLE, player_id=player, hand_id=hand_id)


async def _refused(call: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        await call  # type: ignore[misc]
    rich = rich_error(err.value)
    return rich.code, rich.reason


async def _raise_and_fold(svc: Running, hand_id: str) -> tuple[str, list[str]]:
    """The first to act raises, everyone else folds: (winner, their hole cards)."""
    await start_hand(svc.stub, hand_id)
    view = await _view(svc)
    winner = next(s.player_id for s in view.seats if s.seat == view.current_hand.to_act.seat)
    cards = list(_seat(await _view(svc, winner), winner).hole_cards)
    view = (await act(svc.stub, winner, pb.ACTION_TYPE_RAISE, 6)).table
    while view.status == pb.TABLE_STATUS_IN_HAND:
        player = next(s.player_id for s in view.seats if s.seat == view.current_hand.to_act.seat)
        view = (await act(svc.stub, player, pb.ACTION_TYPE_FOLD)).table
    return winner, cards


async def test_a_player_sets_their_choices_and_only_they_see_them() -> None:
    svc = await _three()
    try:
        assert not any(s.HasField("show_preferences") for s in (await _view(svc)).seats)
        first = await svc.stub.SetShowPreferences(prefs("ann", "r-1", auto_muck=False))
        mine = _seat(first.table, "ann").show_preferences
        assert (mine.auto_muck, mine.show_uncontested) == (False, False)
        assert not _seat(first.table, "bob").HasField("show_preferences")
        again = await svc.stub.SetShowPreferences(prefs("ann", "r-1", auto_muck=False))
        assert again.version == first.version  # the same request id: nothing appended twice
        later = await svc.stub.SetShowPreferences(prefs("ann", show_uncontested=True))
        mine = _seat(later.table, "ann").show_preferences
        assert (mine.auto_muck, mine.show_uncontested) == (False, True)  # auto_muck unset: kept
        same = await svc.stub.SetShowPreferences(prefs("ann", show_uncontested=True))
        assert same.version == later.version  # already so: nothing appended
        bob = _seat(await _view(svc, "bob"), "bob").show_preferences
        assert (bob.auto_muck, bob.show_uncontested) == (True, False)
        assert not _seat(await _view(svc), "ann").HasField("show_preferences")  # spectators
        assert await _refused(svc.stub.SetShowPreferences(prefs("dan", auto_muck=False))) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "SEAT_NOT_OWNED",
        )
    finally:
        await svc.stop()


async def test_a_player_caller_cannot_set_another_players_choices() -> None:
    svc = await _three()
    try:
        servicer = TableServicer(svc.app)
        identity.bind(Principal(kind=Kind.USER, name="bob", role=Role.PLAYER))
        try:
            with pytest.raises(identity.NotYourSeat) as err:
                await servicer.SetShowPreferences(prefs("ann", auto_muck=False), None)  # type: ignore[arg-type]
            with pytest.raises(identity.NotYourSeat) as shown:
                await servicer.ShowHand(show("ann"), None)  # type: ignore[arg-type]
        finally:
            identity.bind(None)
        for exc in (err.value, shown.value):
            mapped = to_status(exc, domain=DOMAIN)
            assert (mapped.code, mapped.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
        assert _seat(await _view(svc, "ann"), "ann").show_preferences.auto_muck  # unchanged
    finally:
        await svc.stop()


async def test_the_winner_by_folds_shows_and_every_view_and_the_history_see_it() -> None:
    svc = await _three()
    try:
        winner, cards = await _raise_and_fold(svc, "h1")
        loser = next(p for p in PLAYERS if p != winner)
        assert not any(s.hole_cards for s in (await _view(svc)).seats)  # unseen unless shown
        assert await _refused(svc.stub.ShowHand(show(loser))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "CANNOT_SHOW_HAND",
        )
        assert await _refused(svc.stub.ShowHand(show(winner, hand_id="h0"))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "CANNOT_SHOW_HAND",
        )
        shown = await svc.stub.ShowHand(show(winner, "s-1", hand_id="h1"))
        assert list(shown.cards) == cards
        retried = await svc.stub.ShowHand(show(winner, "s-1", hand_id="h1"))
        assert retried.version == shown.version
        for viewer in ("", *PLAYERS):
            view = await _view(svc, viewer)
            assert list(_seat(view, winner).hole_cards) == cards
            assert view.last_hand_id == "h1"  # the hand those cards are from
        hand = (await svc.stub.GetHand(pb.GetHandRequest(name=f"{TABLE}/hands/h1"))).hand
        assert hand.outcome == pb.HAND_OUTCOME_WON_UNCONTESTED
        assert list(_seat_of_hand(hand, winner).hole_cards) == cards
        assert hand.actions[-1].action == pb.ACTION_TYPE_SHOW
        history = await svc.stub.GetHandHistory(
            pb.GetHandHistoryRequest(name=f"{TABLE}/hands/h1"), metadata=(("x-player-id", loser),)
        )
        assert list(_seat_of_hand(history.hand, winner).hole_cards) == cards
        text = history.text
        assert text.rindex(f' sm {"".join(cards)}"') > text.rindex(' f"')  # an sm after the folds
        request = pb.GetHandHistoryRequest(name=f"{TABLE}/hands/h1")
        full = pokerkit.HandHistory.loads((await svc.stub.GetHandHistory(request, metadata=DEALER)).text)
        *_, last = full  # pokerkit replays every action, the show after the folds included
        assert list(last.stacks) == list(full.finishing_stacks or ())
        assert await _refused(svc.stub.ShowHand(show(winner))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "CANNOT_SHOW_HAND",
        )
        await start_hand(svc.stub, "h2")
        assert await _refused(svc.stub.ShowHand(show(winner, hand_id="h1"))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "CANNOT_SHOW_HAND",
        )
    finally:
        await svc.stop()


def _seat_of_hand(hand: pb.Hand, player: str) -> pb.Seat:
    return next(s for s in hand.seats if s.player_id == player)


async def test_show_uncontested_on_shows_at_once() -> None:
    svc = await _three()
    try:
        for player in PLAYERS:
            await svc.stub.SetShowPreferences(prefs(player, show_uncontested=True))
        winner, cards = await _raise_and_fold(svc, "h1")
        assert list(_seat(await _view(svc), winner).hole_cards) == cards
        hand = (await svc.stub.GetHand(pb.GetHandRequest(name=f"{TABLE}/hands/h1"))).hand
        assert list(_seat_of_hand(hand, winner).hole_cards) == cards
        assert await _refused(svc.stub.ShowHand(show(winner))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "CANNOT_SHOW_HAND",
        )
    finally:
        await svc.stop()


@pytest.mark.parametrize("later_hands", [3, 6])
async def test_a_show_stays_in_the_hand_once_it_is_read_back_from_the_log(
    later_hands: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Few hands kept in memory: 3 later hands put h1 out of the recent logs (read from the log
    # by its record), 6 out of the model's index too (found through the hand index).
    monkeypatch.setattr(table_model, "RECENT_HANDS", 2)
    monkeypatch.setattr(table_model, "HANDS_KEPT", 4)
    svc = await _three()
    try:
        winner, cards = await _raise_and_fold(svc, "h1")
        # Something else is written between the hand's end and the show.
        await svc.stub.SetShowPreferences(prefs(winner, auto_muck=False))
        await svc.stub.ShowHand(show(winner, hand_id="h1"))
        for n in range(2, 2 + later_hands):
            await _raise_and_fold(svc, f"h{n}")
        assert "h1" not in svc.app.writer.tables["t1"].recent
        if later_hands == 6:
            assert "h1" not in svc.app.writer.tables["t1"].hands
        hand = (await svc.stub.GetHand(pb.GetHandRequest(name=f"{TABLE}/hands/h1"))).hand
        assert list(_seat_of_hand(hand, winner).hole_cards) == cards
        assert hand.actions[-1].action == pb.ACTION_TYPE_SHOW
        # The next hand's log has no show of its own (h2 was won by folds too, not shown).
        h2 = (await svc.stub.GetHand(pb.GetHandRequest(name=f"{TABLE}/hands/h2"))).hand
        assert h2.actions[-1].action != pb.ACTION_TYPE_SHOW
    finally:
        await svc.stop()
