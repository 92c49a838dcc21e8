"""Each player's showdown choices (seed 000; HOUSE_RULES.md "Pots and showdown", "Time and
disconnection"): auto-muck a hand that cannot win, and show a hand won uncontested, on their
command until the next hand starts or at once by their choice.

Given a table / when a command / then its events or a typed error (``Table.run`` checks that
``decide`` leaves the state alone and the log re-folds, ``check_log`` the codec round trip).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from openpoker.engine import codec, hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import parse_cards
from openpoker.engine.errors import CannotShowHand
from openpoker.engine.hand_events import (
    ActionKind,
    CardsMucked,
    CardsShown,
    Folded,
    HandEnded,
    PotAwarded,
    UncalledBetReturned,
)
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import Rules
from openpoker.engine.seating import SeatEmpty
from openpoker.engine.table_events import (
    Leave,
    PlayerLeft,
    SetShowPreferences,
    ShowPreferencesSet,
    ShowUncontestedHand,
    UncontestedHandShown,
)
from tests.engine.handkit import blinds, setup
from tests.engine.test_table import NL, Table, stacked

# Button 0, small blind 1, big blind 2. Cards go out from seat 1: seat 1 holds As Ad, seat 2
# 2c 7d, seat 0 3c 8h; the board Kh Qs 9d 5s 4c. Only seat 1's aces win.
DECK = stacked("As2c3cAd7d8hKhQs9d5s4c")
ACES, SEVEN_HIGH, EIGHT_HIGH = parse_cards("AsAd"), parse_cards("2c7d"), parse_cards("3c8h")


def _three(rules: Rules = NL) -> Table:
    t = Table(rules)
    for seat in (0, 1, 2):
        t.sit(seat)
    return t


def _check_down(t: Table) -> list[tbl.TableLogEvent]:
    """Call or check every decision to the end of the hand: the showdown's events."""
    events: list[tbl.TableLogEvent] = []
    while t.s.hand is not None:
        seat = t.to_act()
        assert seat is not None
        legal = hand.legal_actions(t.s.hand, seat)
        assert legal is not None
        events += t.act(ActionKind.CHECK if legal.can_check else ActionKind.CALL)
    return events


def _prefs(t: Table, seat: int, *, auto_muck: bool, show: bool) -> list[tbl.TableLogEvent]:
    return t.run(SetShowPreferences(seat=seat, auto_muck=auto_muck, show_uncontested=show))


def _showdown(events: list[tbl.TableLogEvent]) -> list[tuple[int, str]]:
    return [
        (e.seat, "show" if isinstance(e, CardsShown) else "muck")
        for e in events
        if isinstance(e, CardsShown | CardsMucked)
    ]


def test_new_players_auto_muck_and_do_not_show_uncontested_by_default() -> None:
    t = _three()
    assert [(s.auto_muck, s.show_uncontested) for s in tbl.seats(t.s)[:3]] == [(True, False)] * 3
    events = t.start(DECK)
    assert not any(isinstance(e, ShowPreferencesSet) for e in events)
    assert _showdown(_check_down(t)) == [(1, "show"), (2, "muck"), (0, "muck")]
    t.check_log()


def test_auto_muck_off_shows_a_losing_hand_while_auto_muck_on_mucks_it() -> None:
    """Chosen during the hand: it counts from that hand's showdown."""
    t = _three()
    t.start(DECK)
    assert _prefs(t, 0, auto_muck=False, show=False) == [
        ShowPreferencesSet(seat=0, player="p0", auto_muck=False, show_uncontested=False)
    ]
    events = _check_down(t)
    assert _showdown(events) == [(1, "show"), (2, "muck"), (0, "show")]
    shown = {e.seat: e.cards for e in events if isinstance(e, CardsShown)}
    assert shown == {1: ACES, 0: EIGHT_HIGH}
    assert [s.auto_muck for s in tbl.seats(t.s)[:3]] == [False, True, True]
    t.check_log()


def test_a_table_without_auto_muck_makes_it_every_new_players_default() -> None:
    t = _three(replace(NL, auto_muck=False))
    assert [s.auto_muck for s in tbl.seats(t.s)[:3]] == [False] * 3
    t.start(DECK)
    assert _showdown(_check_down(t)) == [(1, "show"), (2, "show"), (0, "show")]
    _prefs(t, 1, auto_muck=True, show=False)  # now seat 1 mucks what cannot win
    # Button 1, cards from seat 2: seat 2 holds 2c 7d, seat 0 the aces, seat 1 3c 8h; seat 2
    # shows first (nobody bet), then seat 0, then seat 1.
    t.start(stacked("2cAs3c7dAd8hKhQs9d5s4c"))
    assert _showdown(_check_down(t)) == [(2, "show"), (0, "show"), (1, "muck")]
    t.check_log()


def test_preferences_unchanged_record_nothing_and_an_empty_seat_has_none() -> None:
    t = _three()
    assert _prefs(t, 1, auto_muck=True, show=False) == []
    with pytest.raises(SeatEmpty):
        _prefs(t, 4, auto_muck=False, show=True)


def _won_by_seat_0(t: Table) -> list[tbl.TableLogEvent]:
    """Seat 0 (first to act) raises; both blinds fold: seat 0 wins without a showdown."""
    t.start(DECK)
    events = t.act(ActionKind.BET_OR_RAISE, 6)
    events += t.act(ActionKind.FOLD)
    events += t.act(ActionKind.FOLD)
    assert t.s.hand is None
    return events


def test_the_winner_by_folds_shows_on_command_and_every_view_sees_the_cards() -> None:
    t = _three()
    events = _won_by_seat_0(t)
    assert not any(isinstance(e, UncontestedHandShown) for e in events)
    assert all(s.shown == () for s in tbl.seats(t.s))  # unseen unless they choose to show
    shown = t.run(ShowUncontestedHand(seat=0, hand_id="h1"))
    assert shown == [UncontestedHandShown(hand_id="h1", seat=0, player="p0", cards=EIGHT_HIGH)]
    for viewer in (None, "p0", "p1", "p2"):
        assert [s.shown for s in tbl.view(t.s, viewer).seats[:3]] == [EIGHT_HIGH, (), ()]
    t.check_log()


def test_a_second_show_a_loser_and_another_hand_are_refused() -> None:
    t = _three()
    _won_by_seat_0(t)
    with pytest.raises(CannotShowHand) as loser:
        t.run(ShowUncontestedHand(seat=1))
    assert loser.value.reason == "CANNOT_SHOW_HAND"
    assert loser.value.seat == 1
    with pytest.raises(CannotShowHand, match="not the last hand"):
        t.run(ShowUncontestedHand(seat=0, hand_id="h0"))
    t.run(ShowUncontestedHand(seat=0))
    with pytest.raises(CannotShowHand, match="shown already"):
        t.run(ShowUncontestedHand(seat=0))
    t.start(DECK)
    assert all(s.shown == () for s in tbl.seats(t.s))  # the next hand hides them again
    with pytest.raises(CannotShowHand, match="next hand has started"):
        t.run(ShowUncontestedHand(seat=0))
    t.fold_to_big_blind()  # seat 0, the big blind, wins hand 2: hand 1 is gone for good
    with pytest.raises(CannotShowHand, match="not the last hand"):
        t.run(ShowUncontestedHand(seat=0, hand_id="h1"))
    with pytest.raises(CannotShowHand, match="only the winner"):
        t.run(ShowUncontestedHand(seat=1, hand_id="h2"))


def test_a_hand_that_went_to_showdown_has_nothing_to_show() -> None:
    t = _three()
    t.start(DECK)
    _check_down(t)
    with pytest.raises(CannotShowHand, match="not won uncontested"):
        t.run(ShowUncontestedHand(seat=1))


def test_show_uncontested_on_shows_at_once_after_the_hand_ends() -> None:
    t = _three()
    _prefs(t, 0, auto_muck=True, show=True)
    events = _won_by_seat_0(t)
    end = next(k for k, e in enumerate(events) if isinstance(e, HandEnded))
    assert events[end + 1] == UncontestedHandShown(hand_id="h1", seat=0, player="p0", cards=EIGHT_HIGH)
    assert tbl.seats(t.s)[0].shown == EIGHT_HIGH
    with pytest.raises(CannotShowHand, match="shown already"):
        t.run(ShowUncontestedHand(seat=0))
    t.check_log()


def test_show_uncontested_comes_right_after_the_end_before_a_leaving_player_goes() -> None:
    t = _three()
    _prefs(t, 0, auto_muck=True, show=True)
    t.start(DECK)
    t.act(ActionKind.BET_OR_RAISE, 6)
    t.run(Leave(seat=2))  # not their turn: folded when it comes
    events = t.act(ActionKind.FOLD)  # seat 1 folds, then seat 2 is folded for leaving
    assert [type(e) for e in events] == [
        Folded,
        Folded,
        UncalledBetReturned,
        PotAwarded,
        HandEnded,
        UncontestedHandShown,
        PlayerLeft,
    ]
    t.check_log()


def test_snapshots_keep_the_choices_and_the_show_and_read_old_documents() -> None:
    t = _three()
    _prefs(t, 2, auto_muck=False, show=True)
    _won_by_seat_0(t)
    t.run(ShowUncontestedHand(seat=0))
    doc = json.loads(json.dumps(tbl.to_snapshot(t.s)))
    assert tbl.from_snapshot("t1", doc).snapshot() == t.s.snapshot()
    old = {k: v for k, v in doc.items() if k not in ("won_uncontested", "won_shown")}
    old["seats"] = [s[:8] for s in doc["seats"]]  # the layout before the players' choices
    restored = tbl.from_snapshot("t1", old)
    assert [(o.auto_muck, o.show_uncontested) for o in restored.seats.values()] == [(True, False)] * 3
    assert restored.won_uncontested is None


def test_logs_without_choices_fold_as_before() -> None:
    """A log written before the choices existed has neither event; its showdown events are
    recorded, so it folds to the same hands, and every player has the table's default."""
    t = _three()
    t.start(DECK)
    _check_down(t)
    encoded = [codec.encode(e) for e in t.log]
    assert not any(d["type"] in ("ShowPreferencesSet", "UncontestedHandShown") for d in encoded)
    again = tbl.fold(codec.decode(d) for d in encoded)
    assert again.snapshot() == t.s.snapshot()
    assert all(o.auto_muck for o in again.seats.values())


@pytest.mark.parametrize(("auto_muck", "big_blind_shows"), [((), True), ((2,), False), (None, False)])
def test_a_showdown_at_the_deal_follows_the_setups_auto_muck(
    auto_muck: tuple[int, ...] | None, big_blind_shows: bool
) -> None:
    """The button (a new player's live big blind) and the small blind are all-in for 1 from
    their posts and always show (one pot: the big blind's extra chip comes back); the big blind
    still has chips, so its losing hand is shown only when its auto-muck is off (``None``: as
    the rules say, on)."""
    dealt = replace(
        setup(
            NL,
            {0: 1, 1: 1, 2: 100},
            button=0,
            posts=[*blinds(1, 2, 1, 2), (0, PostKind.LIVE_BIG_BLIND, 2)],
            hole={0: "AsAd", 1: "KcKd", 2: "2c7d"},
            board="QhJs9d5s4h",
        ),
        auto_muck=auto_muck,
    )
    events = hand.start(dealt)
    order = _showdown(list(events))
    assert order[0] == (1, "show")  # the small blind's kings first: the big blind cannot win
    assert dict(order) == {0: "show", 1: "show", 2: "show" if big_blind_shows else "muck"}
