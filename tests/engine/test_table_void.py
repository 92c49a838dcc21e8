"""Voiding the live hand (``VoidHand`` -> ``HandVoided``): decided and folded by the table engine.

Given a table in a hand / when the dealer voids it / then every chip committed in the hand goes
back to whoever committed it, and the table is between hands again.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine import hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import STANDARD_DECK
from openpoker.engine.hand_events import Act, ActionKind, HandStarted, SeatAmount
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from openpoker.engine.table_audit import audit
from openpoker.engine.table_events import (
    HandVoided,
    Leave,
    LeaveRequested,
    OpenTable,
    PlayerLeft,
    SitDown,
    StartHand,
    VoidHand,
)
from tests.engine.players import choose

NL = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)


class Table:
    """A table log: every command decided (checked not to touch the state), then folded."""

    def __init__(self, rules: Rules = NL) -> None:
        self.log: list[tbl.TableLogEvent] = tbl.decide(None, OpenTable(table_id="t1", rules=rules))
        self.s = tbl.fold(self.log)
        self.hands = 0

    def run(self, command: tbl.Command) -> list[tbl.TableLogEvent]:
        before = self.s.snapshot()
        events = tbl.decide(self.s, command)
        assert self.s.snapshot() == before, "decide changed the state"
        for e in events:
            tbl.evolve(self.s, e)
        self.log.extend(events)
        return events

    def sit(self, seat: int, buy_in: int = 200) -> None:
        self.run(SitDown(seat=seat, player=f"p{seat}", buy_in=buy_in))

    def start(self) -> str:
        self.hands += 1
        hand_id = f"h{self.hands}"
        self.run(StartHand(hand_id=hand_id, deck=STANDARD_DECK))
        return hand_id

    def act(self, action: ActionKind, amount: int = 0) -> list[tbl.TableLogEvent]:
        assert self.s.hand is not None
        seat = hand.to_act(self.s.hand)
        assert seat is not None
        return self.run(Act(seat=seat, action=action, amount=amount))

    def stacks(self) -> dict[int, int]:
        return {i.seat: i.stack for i in tbl.seats(self.s) if i.player is not None}


def three_players_in_a_hand() -> tuple[Table, str]:
    t = Table()
    for seat in range(3):
        t.sit(seat)
    hand_id = t.start()  # seat 0 button, 1 small blind, 2 big blind; seat 0 to act
    t.act(ActionKind.BET_OR_RAISE, 10)
    return t, hand_id


def test_voiding_is_refused_without_a_live_hand_or_for_another_hand() -> None:
    with pytest.raises(tbl.TableNotOpen):
        tbl.decide(None, VoidHand(hand_id="h1", reason="x"))
    t = Table()
    t.sit(0)
    t.sit(1)
    with pytest.raises(tbl.NoHandInProgress):
        tbl.decide(t.s, VoidHand(hand_id="h1", reason="x"))
    hand_id = t.start()
    with pytest.raises(tbl.HandNotLive) as refused:
        tbl.decide(t.s, VoidHand(hand_id="h0", reason="x"))
    assert refused.value.reason == "HAND_NOT_LIVE"
    assert refused.value.fields == {"hand_id": "h0", "live_hand_id": hand_id}
    t.act(ActionKind.FOLD)  # the hand ends
    with pytest.raises(tbl.NoHandInProgress):
        tbl.decide(t.s, VoidHand(hand_id=hand_id, reason="x"))


def test_a_voided_hand_gives_every_seat_its_starting_stack_back() -> None:
    t, hand_id = three_players_in_a_hand()
    t.act(ActionKind.CALL)
    assert t.stacks() == {0: 190, 1: 190, 2: 198}
    played = t.s.hands_played
    events = t.run(VoidHand(hand_id=hand_id, reason="rng away"))
    # Internal order: clockwise from the first seat left of the button (seat 0).
    returned = (
        SeatAmount(seat=1, amount=200),
        SeatAmount(seat=2, amount=200),
        SeatAmount(seat=0, amount=200),
    )
    assert events == [HandVoided(hand_id=hand_id, reason="rng away", returned=returned)]
    assert t.s.hand is None
    assert t.stacks() == {0: 200, 1: 200, 2: 200}
    assert t.s.hands_played == played  # not a hand played: nobody won, nothing raked
    assert t.s.rake == 0
    assert tbl.can_start_hand(t.s)
    assert t.start() == "h2"
    assert audit(t.log) == []


def test_a_player_who_asked_to_leave_goes_with_the_returned_stack() -> None:
    t, hand_id = three_players_in_a_hand()
    assert t.run(Leave(seat=2)) == [LeaveRequested(seat=2)]  # big blind, 2 in, not to act
    events = t.run(VoidHand(hand_id=hand_id, reason="stuck"))
    assert [type(e) for e in events] == [HandVoided, PlayerLeft]
    assert events[1] == PlayerLeft(seat=2, player="p2", chips=200)
    assert 2 not in t.s.seats
    assert t.stacks() == {0: 200, 1: 200}
    assert audit(t.log) == []


def test_what_a_player_who_left_the_hand_committed_is_refunded() -> None:
    t, hand_id = three_players_in_a_hand()
    t.act(ActionKind.FOLD)  # seat 1 folds its small blind
    assert t.run(Leave(seat=1)) == [PlayerLeft(seat=1, player="p1", chips=199)]
    assert tbl.void_refunds(t.s) == (tbl.Refund(seat=1, player="p1", chips=1),)
    taken_off = t.s.taken_off
    events = t.run(VoidHand(hand_id=hand_id, reason="stuck"))
    assert isinstance(events[0], HandVoided)
    assert {r.seat for r in events[0].returned} == {0, 2}  # seat 1 is gone: refunded instead
    assert t.s.taken_off == taken_off + 1
    assert tbl.void_refunds(t.s) == ()
    assert t.stacks() == {0: 200, 2: 200}
    assert audit(t.log) == []


def live(t: Table) -> hand.HandState | None:
    return t.s.hand


def play_out(t: Table) -> None:
    """Everyone checks or calls to the end of the hand."""
    while (hs := live(t)) is not None:
        seat = hand.to_act(hs)
        assert seat is not None
        legal = hand.legal_actions(hs, seat)
        assert legal is not None
        t.act(ActionKind.CALL if legal.to_call > 0 else ActionKind.CHECK)


def play_some(t: Table, rng: random.Random, actions: int, leave: float) -> None:
    """Up to ``actions`` random decisions, players leaving now and then."""
    for _ in range(actions):
        hs = live(t)
        if hs is None:
            return
        staying = [s for s in hs.index_of if s in t.s.seats and not t.s.seats[s].leaving]
        if staying and rng.random() < leave:
            t.run(Leave(seat=rng.choice(staying)))
            continue
        seat = hand.to_act(hs)
        assert seat is not None
        legal = hand.legal_actions(hs, seat)
        assert legal is not None
        action, amount = choose(rng, legal)
        t.run(Act(seat=seat, action=action, amount=amount))


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 6),
    actions=st.integers(0, 12),
    leave=st.floats(0, 0.5),
)
def test_every_chip_committed_in_a_voided_hand_returns(
    seed: int, players: int, actions: int, leave: float
) -> None:
    rng = random.Random(seed)
    t = Table()
    for seat in range(players):
        t.sit(seat, buy_in=rng.randint(80, 200))
    for _ in range(rng.randint(0, 2)):  # hands played out first: the button moves, stacks differ
        if tbl.can_start_hand(t.s):
            t.start()
            play_out(t)
    if not tbl.can_start_hand(t.s):
        return
    hand_id = t.start()
    started = next(e for e in reversed(t.log) if isinstance(e, HandStarted))
    start = {s.seat: s.stack for s in started.seats}
    mark = len(t.log)
    play_some(t, rng, actions, leave)
    if live(t) is None:
        return  # played to its end (or all-in from the posts alone)
    bought_in, taken_off = t.s.bought_in, t.s.taken_off
    refunds = {r.seat: r.chips for r in tbl.void_refunds(t.s)}
    events = t.run(VoidHand(hand_id=hand_id, reason="void"))
    left = {e.seat: e.chips for e in t.log[mark:] if isinstance(e, PlayerLeft)}
    for seat, stack in start.items():
        # Still seated: the starting stack; gone: what they took plus the refund.
        back = t.s.seats[seat].stack if seat in t.s.seats else left[seat] + refunds.get(seat, 0)
        assert back == stack, (seat, events)
    assert live(t) is None
    assert t.s.bought_in == bought_in
    gone = sum(e.chips for e in events if isinstance(e, PlayerLeft))
    assert t.s.taken_off == taken_off + sum(refunds.values()) + gone
    assert tbl.chips_on_table(t.s) + t.s.taken_off + t.s.rake == t.s.bought_in
    assert audit(t.log) == []
