"""The table aggregate: seats, hand after hand, time-outs and disconnections, as a pure decider.

Theory of operation
-------------------
A table is the fold of its log (``TableLogEvent``): ``TableOpened`` first (the rules, recorded
once), then seat events, and for every hand ``HandScheduled`` (the ``HandPlan`` from
``engine.blinds``: button, blinds, who is dealt in, owed blinds collected, forgiven or
incurred) followed by the hand engine's own events, unwrapped, from ``HandStarted`` to
``HandEnded``. The table's time and connection facts sit between them where they happened.
Hand events are recognised by type (``engine.hand_events.HandEvent``) and passed to
``engine.hand.evolve``; everything else is a table event.

``decide(state, command)`` validates a command and returns the events it causes, raising a typed
``RuleViolation`` and changing nothing when it is illegal. Commands are the table's own
(``engine.table_events``) and the hand engine's (``Act``, ``ProtectAllIn``, ``Show``, ``Muck``),
which are decided by ``engine.hand.decide``. The follow-on facts of a command are part of its
events: a player who asked to leave during the hand is folded when their turn comes and leaves
as soon as they are out of it; when the hand ends, players left with no chips are sat out.
To find those, ``decide`` evolves a private copy of the hand state, never the state it was given.

Time and connection (seeds 000, 001, 004; HOUSE_RULES.md "Time and disconnection"): the engine
has no clock. ``TimeOut(seat, at_ms)`` arrives from the shell when the player's clock ran out:
a player who has put chips in this hand is all-in protected, otherwise folded; a disconnected
player is protected at most ``rules.time.disconnect_protections_per_window`` times per rolling
``protection_window_ms`` (computed from the ``at_ms`` of the time-outs that used protection),
counting those used here and those the shell says the player used at other tables
(``TimeOut.used_elsewhere``, recorded in ``DecisionTimedOut``: seed 000's allowance is the
member's), and folded after that, unless an operator resets the allowance
(``ResetAllInAllowance``, seed 000's "All-in Limits reset"), which forgets the protections used
at this table (the shell clears its site-wide record alongside). ``Reconnect``
during one's turn grants ``reconnect_extra_ms``; the query ``decision_time_ms`` tells the shell
how long the current decision may take.

Showdown choices (seed 000; HOUSE_RULES.md): each seated player chooses to auto-muck a hand that
cannot win (``SetShowPreferences`` -> ``ShowPreferencesSet``; new players start with
``rules.auto_muck``), applied to the hand engine's state (``hand.set_auto_muck``) from the hand's
start and at once during it, and to show a hand won uncontested. The winner of a hand everyone
else folded (``won_uncontested``) may show it until the next ``HandScheduled``, once
(``ShowUncontestedHand`` -> ``UncontestedHandShown``, a table event after ``HandEnded``); with
``show_uncontested`` on, the show follows ``HandEnded`` in the same decision.

Voiding (``VoidHand`` from the dealer, for a hand that cannot be finished): ``HandVoided``
gives each seat still at the table its stack from the start of the hand back and ends the hand
without a winner, a rake or a count in ``hands_played``; players who asked to leave during it
go at once with that stack. Players who already left the hand took only what was in front of
them: ``void_refunds`` says what they had committed, which the shell pays back to them.

``evolve`` mutates the private ``TableState`` it is given (and returns it); ``fold`` builds a
fresh one. Queries (``seats``, ``owed_posts``, ``next_hand``, ``view``, ...) are pure.

This module folds a table's log and snapshots its state, and is where callers find the whole
table engine; the parts live in ``engine.table_state`` (the state), ``engine.table_decide``
(decide and the follow-on facts), ``engine.table_queries`` (queries and the view),
``engine.table_events`` (commands and events) and ``engine.errors`` (the table's errors).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, assert_never

from openpoker.engine import codec, hand
from openpoker.engine.cards import Card, parse_card
from openpoker.engine.errors import (
    DuplicateHandId,
    HandNotLive,
    NoHandInProgress,
    SeatStateUnchanged,
    TableAlreadyOpen,
    TableNotOpen,
)
from openpoker.engine.hand_events import (
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    ForcedBetPosted,
    HandEnded,
    HandEvent,
    HandStarted,
    HoleCardsDealt,
    PotAwarded,
    SeatAmount,
    ShowdownStarted,
    UncalledBetReturned,
)
from openpoker.engine.seating import Debt, HandInProgress, SeatStatus
from openpoker.engine.table_decide import decide
from openpoker.engine.table_events import (
    AllInAllowanceReset,
    ChipsAdded,
    Command,
    DecisionTimedOut,
    HandScheduled,
    HandVoided,
    LeaveRequested,
    PlayerDisconnected,
    PlayerLeft,
    PlayerReconnected,
    PlayerSatIn,
    PlayerSatOut,
    PlayerSeated,
    ResetAllInAllowance,
    SetShowPreferences,
    ShowPreferencesSet,
    ShowUncontestedHand,
    TableEvent,
    TableLogEvent,
    TableOpened,
    UncontestedHandShown,
)
from openpoker.engine.table_queries import (
    Refund,
    SeatInfo,
    TableView,
    can_start_hand,
    chips_on_table,
    decision_time_ms,
    next_hand,
    next_setup,
    owed_posts,
    protection_at_stake,
    protections_used,
    seats,
    view,
    void_refunds,
)
from openpoker.engine.table_state import SeatState, TableState

__all__ = [
    "HAND_EVENT_TYPES",
    "HAND_IDS_KEPT",
    "AllInAllowanceReset",
    "Command",
    "DuplicateHandId",
    "HandNotLive",
    "NoHandInProgress",
    "Refund",
    "ResetAllInAllowance",
    "SeatInfo",
    "SeatState",
    "SeatStateUnchanged",
    "SetShowPreferences",
    "ShowPreferencesSet",
    "ShowUncontestedHand",
    "SnapshotLayoutUnknown",
    "TableAlreadyOpen",
    "TableLogEvent",
    "TableNotOpen",
    "TableState",
    "TableView",
    "UncontestedHandShown",
    "can_start_hand",
    "chips_on_table",
    "decide",
    "decision_time_ms",
    "evolve",
    "fold",
    "from_snapshot",
    "next_hand",
    "next_setup",
    "owed_posts",
    "protection_at_stake",
    "protections_used",
    "seats",
    "to_snapshot",
    "view",
    "void_refunds",
]

# The hand engine's event classes: a log entry of one of these belongs to the current hand.
HAND_EVENT_TYPES = (
    HandStarted,
    ForcedBetPosted,
    HoleCardsDealt,
    Folded,
    Checked,
    Called,
    BetPlaced,
    AllInProtected,
    UncalledBetReturned,
    BoardDealt,
    ShowdownStarted,
    CardsShown,
    CardsMucked,
    PotAwarded,
    HandEnded,
)

# Hand ids a table remembers, the latest ones in scheduling order, to refuse a reused one
# (``DuplicateHandId``). Keeping every id ever used would make a long-lived table's state and
# snapshot grow without bound (229 KB of ids at 20,000 hands). A reused id is
# a dealer re-sending a recent StartHand under a new request id (a retry under the same request
# id is answered before the engine); 100 hands is an hour or more of play at one table, and
# costs at most about 6.6 KB in a snapshot with the longest ids the dealer makes (63
# characters). The table service refuses older ids itself, from its own index of recent hands
# and the log (``services.table.hand_index``). Read at run time, so tests can lower it; a fold and a
# snapshot restored from it must use the same value to stay equal.
HAND_IDS_KEPT = 100


# -- snapshots ---------------------------------------------------------------------------------


def to_snapshot(state: TableState) -> dict[str, Any]:
    """A JSON-compatible document of ``state`` between hands, for ``from_snapshot``.

    Snapshots are a cache for starting faster (the log stays the evidence): engine values are
    stored with ``engine.codec``, seats as ``[seat, player, stack, status, debt, arrival,
    leaving, disconnected, auto_muck, show_uncontested]`` lists, sets and maps as sorted lists
    and objects, the last hand's uncontested winner as ``[hand_id, seat, player, cards]``. The
    table id is not in the document (the caller keeps it beside). Raises ``HandInProgress`` during a hand:
    a live hand is rebuilt by folding its events, never snapshotted.
    """
    if state.hand is not None:
        raise HandInProgress(command="snapshot")
    return {
        "rules": codec.encode(state.rules),
        "seats": [
            [
                seat,
                o.player,
                o.stack,
                o.status.value,
                o.debt.value,
                o.arrival,
                o.leaving,
                o.disconnected,
                o.auto_muck,
                o.show_uncontested,
            ]
            for seat, o in sorted(state.seats.items())
        ],
        "arrivals": state.arrivals,
        "last": None if state.last is None else codec.encode(state.last),
        "plan": None if state.plan is None else codec.encode(state.plan),
        "hand_events": [codec.encode(e) for e in state.hand_events],
        "recent_hand_ids": list(state.hand_order),
        "hands_played": state.hands_played,
        "protections": {k: list(v) for k, v in state.protections.items()},
        "left_debts": {k: v.value for k, v in state.left_debts.items()},
        "bought_in": state.bought_in,
        "taken_off": state.taken_off,
        "rake": state.rake,
        "won_uncontested": _won_document(state.won_uncontested),
        "won_shown": state.won_shown,
    }


def _won_document(won: tuple[str, int, str, tuple[Card, ...]] | None) -> list[object] | None:
    if won is None:
        return None
    hand_id, seat, player, cards = won
    return [hand_id, seat, player, [str(c) for c in cards]]


class SnapshotLayoutUnknown(ValueError):
    """A snapshot document of the first layout whose latest hand ids cannot be told."""


def from_snapshot(table_id: str, doc: Mapping[str, Any], *, hand_order: Sequence[str] = ()) -> TableState:
    """The ``TableState`` that ``to_snapshot`` wrote ``doc`` from (``snapshot()`` equal).

    ``doc`` is trusted to come from ``to_snapshot`` (possibly through JSON); a document missing
    a key or holding a value of the wrong kind raises ``KeyError``, ``ValueError`` or
    ``codec.CodecError``.

    A document of the first layout (``"hand_ids"``, every id the table had
    used, sorted) does not say which ids are the latest: ``hand_order`` must then give the
    table's latest hand ids in scheduling order (at least ``HAND_IDS_KEPT`` of them, or all),
    as the table service's index of recent hands does; without it, or when it disagrees with
    the document, ``SnapshotLayoutUnknown`` (the caller folds the log instead).
    """
    s = TableState(table_id=table_id, rules=codec.decode(doc["rules"]))
    for row in doc["seats"]:
        seat, player, stack, status, debt, arrival, leaving, disconnected = row[:8]
        occ = SeatState(
            player=player, stack=stack, status=SeatStatus(status), debt=Debt(debt), arrival=arrival
        )
        occ.leaving, occ.disconnected = bool(leaving), bool(disconnected)
        # A seat of a document written before the players' showdown choices has the defaults.
        if len(row) > 8:
            occ.auto_muck, occ.show_uncontested = bool(row[8]), bool(row[9])
        else:
            occ.auto_muck, occ.show_uncontested = s.rules.auto_muck, False
        s.seats[seat] = occ
    s.arrivals = doc["arrivals"]
    s.last = None if doc["last"] is None else codec.decode(doc["last"])
    s.plan = None if doc["plan"] is None else codec.decode(doc["plan"])
    s.hand_events = [codec.decode(e) for e in doc["hand_events"]]
    if "recent_hand_ids" in doc:
        recent = list(doc["recent_hand_ids"])[-max(1, HAND_IDS_KEPT) :]
    else:
        recent = _latest_of_old_layout(doc["hand_ids"], hand_order)
    s.hand_order = deque(recent)
    s.hand_ids = set(recent)
    s.hands_played = doc["hands_played"]
    s.protections = {k: list(v) for k, v in doc["protections"].items()}
    s.left_debts = {k: Debt(v) for k, v in doc["left_debts"].items()}
    s.bought_in, s.taken_off, s.rake = doc["bought_in"], doc["taken_off"], doc["rake"]
    won = doc.get("won_uncontested")
    if won is not None:
        hand_id, seat, player, cards = won
        s.won_uncontested = (hand_id, seat, player, tuple(parse_card(c) for c in cards))
    s.won_shown = bool(doc.get("won_shown", False))
    return s


def _latest_of_old_layout(every: Sequence[str], hand_order: Sequence[str]) -> list[str]:
    """The ids a fold would remember, from a first-layout document's set of every id used and
    the caller's latest ids in scheduling order."""
    used = set(every)
    kept = max(1, HAND_IDS_KEPT)
    latest = list(hand_order[-kept:])
    if len(latest) < min(kept, len(used)) or not used.issuperset(latest) or len(set(latest)) < len(latest):
        raise SnapshotLayoutUnknown(
            f"{len(used)} hand ids without their order; {len(latest)} latest given, {kept} needed"
        )
    return latest


# -- evolve ------------------------------------------------------------------------------------


def fold(events: Iterable[TableLogEvent]) -> TableState:
    """The table after ``events`` (the first must be ``TableOpened``)."""
    it = iter(events)
    first = next(it, None)
    if not isinstance(first, TableOpened):
        raise TableNotOpen()
    state = TableState(table_id=first.table_id, rules=first.rules)
    for event in it:
        evolve(state, event)
    return state


def evolve(state: TableState, event: TableLogEvent) -> TableState:
    """Apply one fact to ``state`` (in place) and return it."""
    if isinstance(event, HAND_EVENT_TYPES):
        _evolve_hand(state, event)
    else:
        _evolve_table(state, event)
    return state


def _evolve_table(s: TableState, event: TableEvent) -> None:
    match event:
        case PlayerSeated(seat=seat, player=player, buy_in=buy_in, wait_for_big_blind=wait, debt=debt):
            status = SeatStatus.WAITING_FOR_BIG_BLIND if wait else SeatStatus.SITTING_IN
            s.seats[seat] = SeatState(
                player=player,
                stack=buy_in,
                status=status,
                debt=debt,
                arrival=s.arrivals,
                auto_muck=s.rules.auto_muck,
            )
            s.arrivals += 1
            s.left_debts.pop(player, None)
            s.bought_in += buy_in
        case ChipsAdded(seat=seat, amount=amount):
            s.seats[seat].stack += amount
            s.bought_in += amount
        case PlayerSatOut(seat=seat):
            s.seats[seat].status = SeatStatus.SITTING_OUT
        case PlayerSatIn(seat=seat, wait_for_big_blind=wait):
            occ = s.seats[seat]
            waits = wait and occ.debt is not Debt.NONE
            occ.status = SeatStatus.WAITING_FOR_BIG_BLIND if waits else SeatStatus.SITTING_IN
        case LeaveRequested(seat=seat):
            s.seats[seat].leaving = True
        case PlayerLeft(seat=seat, player=player, chips=chips):
            occ = s.seats.pop(seat)
            if occ.debt in (Debt.SMALL_BLIND, Debt.BIG_BLIND):
                s.left_debts[player] = occ.debt
            s.taken_off += chips
        case HandScheduled(hand_id=hand_id, plan=plan):
            for change in (*plan.collected, *plan.forgiven):
                s.seats[change.seat].debt = Debt.NONE
            for seat in plan.dealt:
                s.seats[seat].status = SeatStatus.SITTING_IN
            for change in plan.missed:
                s.seats[change.seat].debt = change.debt
            s.last = plan.positions
            s.plan = plan
            _remember_hand_id(s, hand_id)
            s.hand_events = []
            s.won_uncontested, s.won_shown = None, False  # no show of the last hand from now
        case PlayerDisconnected(seat=seat):
            s.seats[seat].disconnected = True
        case PlayerReconnected(seat=seat, extra_ms=extra):
            s.seats[seat].disconnected = False
            if extra:
                s.turn_extra = (seat, len(s.hand_events), extra)
        case DecisionTimedOut(player=player, at_ms=at_ms, uses_protection=uses):
            if uses:
                window = s.rules.time.protection_window_ms
                kept = [t for t in s.protections.get(player, []) if at_ms - t < window]
                s.protections[player] = [*kept, at_ms]
        case HandVoided(returned=returned):
            _void(s, returned)
        case AllInAllowanceReset(player=player):
            s.protections.pop(player, None)
        case ShowPreferencesSet(seat=seat, auto_muck=auto_muck, show_uncontested=show):
            occ = s.seats[seat]
            occ.auto_muck, occ.show_uncontested = auto_muck, show
            if s.hand is not None and seat in s.hand.index_of:
                hand.set_auto_muck(s.hand, _auto_muck_seats(s))  # from this hand's showdown on
        case UncontestedHandShown():
            s.won_shown = True
        case TableOpened():
            pass  # only first (see ``fold``)
        case _:
            assert_never(event)


def _remember_hand_id(s: TableState, hand_id: str) -> None:
    """Remember ``hand_id``, forgetting the oldest beyond ``HAND_IDS_KEPT``: a pure function of
    the ``HandScheduled`` facts in log order, so every fold of a log remembers the same ids."""
    s.hand_ids.add(hand_id)
    s.hand_order.append(hand_id)
    while len(s.hand_order) > max(1, HAND_IDS_KEPT):
        s.hand_ids.discard(s.hand_order.popleft())


def _won_uncontested(hs: hand.HandState) -> tuple[str, int, str, tuple[Card, ...]] | None:
    """The winner of a hand everyone else folded: (hand id, seat, player, hole cards)."""
    left = [i for i in hs.order_range if not hs.folded[i]]
    if len(left) != 1:
        return None
    (i,) = left
    return hs.hand_id, hs.seats[i], hs.players[i], hs.hole[i]


def _void(s: TableState, returned: Sequence[SeatAmount]) -> None:
    assert s.hand is not None, "HandVoided outside a hand"
    s.taken_off += sum(r.chips for r in void_refunds(s))  # paid back to them by the shell
    for entry in returned:
        occ = s.seats.get(entry.seat)
        if occ is not None:
            occ.stack = entry.amount
    s.hand = None
    s.turn_extra = None


def _auto_muck_seats(s: TableState) -> tuple[int, ...]:
    return tuple(seat for seat, o in s.seats.items() if o.auto_muck)


def _evolve_hand(s: TableState, event: HandEvent) -> None:
    if isinstance(event, HandStarted):
        s.hand = hand.fold([event])
        hand.set_auto_muck(s.hand, _auto_muck_seats(s))
        s.hand_events = [event]
        return
    assert s.hand is not None, "hand event outside a hand"
    hand.evolve(s.hand, event)
    s.hand_events.append(event)
    if isinstance(event, HandEnded):
        s.won_uncontested = _won_uncontested(s.hand)
        for entry in event.stacks:
            occ = s.seats.get(entry.seat)
            if occ is not None:
                occ.stack = entry.amount
        s.rake += event.rake
        s.hands_played += 1
        s.hand = None
        s.turn_extra = None
