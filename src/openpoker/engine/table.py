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
and folded after that. ``Reconnect`` during one's turn grants ``reconnect_extra_ms``; the
query ``decision_time_ms`` tells the shell how long the current decision may take.

Voiding (``VoidHand`` from the dealer, for a hand that cannot be finished): ``HandVoided``
gives each seat still at the table its stack from the start of the hand back and ends the hand
without a winner, a rake or a count in ``hands_played``; players who asked to leave during it
go at once with that stack. Players who already left the hand took only what was in front of
them: ``void_refunds`` says what they had committed, which the shell pays back to them.

``evolve`` mutates the private ``TableState`` it is given (and returns it); ``fold`` builds a
fresh one. Queries (``seats``, ``owed_posts``, ``next_hand``, ``view``, ...) are pure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, assert_never

from openpoker.engine import codec, hand
from openpoker.engine.blinds import HandPlan, NotEnoughPlayers, Positions, plan_hand
from openpoker.engine.cards import Card
from openpoker.engine.errors import EngineError, FoldNotAllowed, NotYourTurn, RuleViolation
from openpoker.engine.hand_events import (
    Act,
    ActionKind,
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    ForcedBetPosted,
    HandCommand,
    HandEnded,
    HandEvent,
    HandStarted,
    HoleCardsDealt,
    Muck,
    PotAwarded,
    ProtectAllIn,
    SeatAmount,
    Show,
    ShowdownStarted,
    UncalledBetReturned,
)
from openpoker.engine.hand_setup import HandSetup, PostKind, SeatSetup
from openpoker.engine.rules import Rules
from openpoker.engine.seating import (
    AlreadySeated,
    Debt,
    HandInProgress,
    NoChips,
    NoSuchSeat,
    Occupant,
    SeatEmpty,
    SeatStatus,
    SeatTaken,
    SeatView,
    check_buy_in,
    check_top_up,
)
from openpoker.engine.table_events import (
    ChipsAdded,
    DecisionTimedOut,
    Disconnect,
    HandScheduled,
    HandVoided,
    Leave,
    LeaveRequested,
    OpenTable,
    PlayerDisconnected,
    PlayerLeft,
    PlayerReconnected,
    PlayerSatIn,
    PlayerSatOut,
    PlayerSeated,
    Reconnect,
    SitDown,
    SitIn,
    SitOut,
    SitOutReason,
    StartHand,
    TableCommand,
    TableEvent,
    TableOpened,
    TimeOut,
    TimeOutOutcome,
    TopUp,
    VoidHand,
)

TableLogEvent: TypeAlias = TableEvent | HandEvent
Command: TypeAlias = TableCommand | HandCommand

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
_HAND_COMMAND_TYPES = (Act, ProtectAllIn, Show, Muck)

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


# -- errors ------------------------------------------------------------------------------------


class TableNotOpen(EngineError):
    reason = "TABLE_NOT_OPEN"
    kind = "precondition"

    def __init__(self) -> None:
        super().__init__("the table is not open")


class TableAlreadyOpen(RuleViolation):
    reason = "TABLE_ALREADY_OPEN"

    def __init__(self, *, table_id: str) -> None:
        super().__init__(f"table {table_id} is already open", table_id=table_id)


class NoHandInProgress(RuleViolation):
    reason = "NO_HAND_IN_PROGRESS"

    def __init__(self) -> None:
        super().__init__("no hand is in progress")


class HandNotLive(RuleViolation):
    """A command for a hand that is not the one being played."""

    reason = "HAND_NOT_LIVE"

    def __init__(self, *, hand_id: str, live_hand_id: str) -> None:
        super().__init__(
            f"hand {hand_id} is not the live hand ({live_hand_id or 'none'})",
            hand_id=hand_id,
            live_hand_id=live_hand_id,
        )
        self.hand_id = hand_id
        self.live_hand_id = live_hand_id


class SeatStateUnchanged(RuleViolation):
    """Sitting out twice, sitting in while in, disconnecting twice: refused, never ignored."""

    reason = "SEAT_STATE_UNCHANGED"

    def __init__(self, *, seat: int, state: str) -> None:
        super().__init__(f"seat {seat} is already {state}", seat=seat, state=state)
        self.seat = seat
        self.state = state


class DuplicateHandId(RuleViolation):
    """A hand id the table already used. The engine knows the latest ``HAND_IDS_KEPT``; the
    table service raises it too for older ones, which it finds in its index and the log."""

    reason = "DUPLICATE_HAND_ID"

    def __init__(self, *, hand_id: str) -> None:
        super().__init__(f"hand {hand_id} was already played here", hand_id=hand_id)


# -- state -------------------------------------------------------------------------------------


# Module level, not only ``__slots__``: a class compiled by mypyc has no ``__slots__`` at run time.
_SEAT_SLOTS: Final = ("arrival", "debt", "disconnected", "leaving", "player", "stack", "status")


class _Seat:
    """A seated player (private, mutable, written only by ``evolve``)."""

    __slots__ = _SEAT_SLOTS

    def __init__(self, *, player: str, stack: int, status: SeatStatus, debt: Debt, arrival: int) -> None:
        self.player = player
        self.stack = stack  # chips behind between hands (during a hand: at its start)
        self.status = status
        self.debt = debt
        self.arrival = arrival
        self.leaving = False
        self.disconnected = False

    def snapshot(self) -> tuple[object, ...]:
        return tuple(getattr(self, k) for k in _SEAT_SLOTS)


class TableState:
    """Private mutable state of a table; only ``evolve`` writes it. Read it through queries."""

    def __init__(self, *, table_id: str, rules: Rules) -> None:
        self.table_id = table_id
        self.rules = rules
        self.seats: dict[int, _Seat] = {}
        self.arrivals = 0
        self.last: Positions | None = None  # positions of the last hand scheduled
        self.plan: HandPlan | None = None  # plan of the hand in progress (or last hand)
        self.hand: hand.HandState | None = None  # None between hands
        self.hand_events: list[HandEvent] = []  # the current hand's events (for look-ahead)
        # The latest ``HAND_IDS_KEPT`` hand ids: a set to look up, a deque for their order.
        self.hand_ids: set[str] = set()
        self.hand_order: deque[str] = deque()  # oldest first
        self.hands_played = 0
        self.protections: dict[str, list[int]] = {}  # player -> at_ms of protections used
        self.turn_extra: tuple[int, int, int] | None = None  # (seat, hand event count, extra ms)
        self.left_debts: dict[str, Debt] = {}  # missed blinds owed by players who left
        self.bought_in = 0
        self.taken_off = 0
        self.rake = 0

    def snapshot(self) -> tuple[object, ...]:
        """Every field as plain values: two states with equal snapshots are the same table."""
        return (
            self.table_id,
            self.rules,
            tuple(sorted((k, v.snapshot()) for k, v in self.seats.items())),
            self.arrivals,
            self.last,
            self.plan,
            None if self.hand is None else self.hand.snapshot(),
            tuple(self.hand_events),
            tuple(self.hand_order),  # in order: the order decides which id goes next
            self.hands_played,
            tuple(sorted((k, tuple(v)) for k, v in self.protections.items())),
            self.turn_extra,
            tuple(sorted(self.left_debts.items())),
            self.bought_in,
            self.taken_off,
            self.rake,
        )


# -- snapshots ---------------------------------------------------------------------------------


def to_snapshot(state: TableState) -> dict[str, Any]:
    """A JSON-compatible document of ``state`` between hands, for ``from_snapshot``.

    Snapshots are a cache for starting faster (the log stays the evidence): engine values are
    stored with ``engine.codec``, seats as ``[seat, player, stack, status, debt, arrival,
    leaving, disconnected]`` lists, sets and maps as sorted lists and objects. The table id is
    not in the document (the caller keeps it beside). Raises ``HandInProgress`` during a hand:
    a live hand is rebuilt by folding its events, never snapshotted.
    """
    if state.hand is not None:
        raise HandInProgress(command="snapshot")
    return {
        "rules": codec.encode(state.rules),
        "seats": [
            [seat, o.player, o.stack, o.status.value, o.debt.value, o.arrival, o.leaving, o.disconnected]
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
    }


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
    for seat, player, stack, status, debt, arrival, leaving, disconnected in doc["seats"]:
        occ = _Seat(player=player, stack=stack, status=SeatStatus(status), debt=Debt(debt), arrival=arrival)
        occ.leaving, occ.disconnected = bool(leaving), bool(disconnected)
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
            s.seats[seat] = _Seat(player=player, stack=buy_in, status=status, debt=debt, arrival=s.arrivals)
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


def _void(s: TableState, returned: Sequence[SeatAmount]) -> None:
    assert s.hand is not None, "HandVoided outside a hand"
    s.taken_off += sum(r.chips for r in void_refunds(s))  # paid back to them by the shell
    for entry in returned:
        occ = s.seats.get(entry.seat)
        if occ is not None:
            occ.stack = entry.amount
    s.hand = None
    s.turn_extra = None


def _evolve_hand(s: TableState, event: HandEvent) -> None:
    if isinstance(event, HandStarted):
        s.hand = hand.fold([event])
        s.hand_events = [event]
        return
    assert s.hand is not None, "hand event outside a hand"
    hand.evolve(s.hand, event)
    s.hand_events.append(event)
    if isinstance(event, HandEnded):
        for entry in event.stacks:
            occ = s.seats.get(entry.seat)
            if occ is not None:
                occ.stack = entry.amount
        s.rake += event.rake
        s.hands_played += 1
        s.hand = None
        s.turn_extra = None


# -- decide ------------------------------------------------------------------------------------


def decide(state: TableState | None, command: Command) -> list[TableLogEvent]:
    """The events ``command`` causes (``state`` is not changed); raises a ``RuleViolation``."""
    if isinstance(command, OpenTable):
        if state is not None:
            raise TableAlreadyOpen(table_id=state.table_id)
        return [TableOpened(table_id=command.table_id, rules=command.rules)]
    if state is None:
        raise TableNotOpen()
    if isinstance(command, _HAND_COMMAND_TYPES):
        hs = _running(state)
        return _with_follow_on(state, hand.decide(hs, command))
    match command:
        case SitDown():
            return _sit_down(state, command)
        case TopUp(seat=seat, amount=amount):
            occ = _occupant(state, seat)
            if state.hand is not None:
                raise HandInProgress(command="top-up")
            check_top_up(state.rules, stack=occ.stack, amount=amount)
            return [ChipsAdded(seat=seat, amount=amount)]
        case SitOut(seat=seat):
            occ = _occupant(state, seat)
            if occ.status is SeatStatus.SITTING_OUT:
                raise SeatStateUnchanged(seat=seat, state="sitting out")
            return [PlayerSatOut(seat=seat, reason=SitOutReason.REQUESTED)]
        case SitIn(seat=seat, wait_for_big_blind=wait):
            occ = _occupant(state, seat)
            if occ.stack == 0:
                raise NoChips(seat=seat)
            wanted = (
                SeatStatus.WAITING_FOR_BIG_BLIND
                if wait and occ.debt is not Debt.NONE
                else SeatStatus.SITTING_IN
            )
            if occ.status is wanted:
                raise SeatStateUnchanged(seat=seat, state=wanted.value)
            return [PlayerSatIn(seat=seat, wait_for_big_blind=wait)]
        case Leave(seat=seat):
            return _leave(state, seat)
        case StartHand():
            return _start_hand(state, command)
        case Disconnect(seat=seat, at_ms=at_ms):
            occ = _occupant(state, seat)
            if occ.disconnected:
                raise SeatStateUnchanged(seat=seat, state="disconnected")
            return [PlayerDisconnected(seat=seat, player=occ.player, at_ms=at_ms)]
        case Reconnect(seat=seat, at_ms=at_ms):
            occ = _occupant(state, seat)
            if not occ.disconnected:
                raise SeatStateUnchanged(seat=seat, state="connected")
            on_turn = state.hand is not None and hand.to_act(state.hand) == seat
            extra = state.rules.time.reconnect_extra_ms if on_turn else 0
            return [PlayerReconnected(seat=seat, player=occ.player, at_ms=at_ms, extra_ms=extra)]
        case TimeOut():
            return _time_out(state, command)
        case VoidHand():
            return _void_hand(state, command)
        case _:
            raise AssertionError(f"unknown command {command!r}")  # pragma: no cover


def _running(state: TableState) -> hand.HandState:
    if state.hand is None:
        raise NoHandInProgress()
    return state.hand


def _occupant(state: TableState, seat: int) -> _Seat:
    if not 0 <= seat < state.rules.seats:
        raise NoSuchSeat(seat=seat, seats=state.rules.seats)
    occ = state.seats.get(seat)
    if occ is None:
        raise SeatEmpty(seat=seat)
    return occ


def _sit_down(state: TableState, c: SitDown) -> list[TableLogEvent]:
    if not 0 <= c.seat < state.rules.seats:
        raise NoSuchSeat(seat=c.seat, seats=state.rules.seats)
    if c.seat in state.seats or (state.hand is not None and c.seat in state.hand.index_of):
        raise SeatTaken(seat=c.seat)  # a seat still dealt in the current hand is not free yet
    for seat, occ in state.seats.items():
        if occ.player == c.player:
            raise AlreadySeated(player=c.player, seat=seat)
    check_buy_in(state.rules, c.buy_in)
    # A player who left owing a missed big blind owes it again: leaving never clears a debt.
    debt = Debt.BIG_BLIND if state.left_debts.get(c.player) is Debt.BIG_BLIND else Debt.NEW_PLAYER
    return [
        PlayerSeated(
            seat=c.seat, player=c.player, buy_in=c.buy_in, wait_for_big_blind=c.wait_for_big_blind, debt=debt
        )
    ]


def _in_hand(hs: hand.HandState, seat: int) -> bool:
    """Dealt in, not folded, and the hand not over."""
    i = hs.index_of.get(seat)
    return i is not None and not hs.folded[i] and not hand.is_over(hs)


def _leave(state: TableState, seat: int) -> list[TableLogEvent]:
    occ = _occupant(state, seat)
    hs = state.hand
    if hs is None or seat not in hs.index_of:
        return [PlayerLeft(seat=seat, player=occ.player, chips=occ.stack)]
    if not _in_hand(hs, seat):
        return [PlayerLeft(seat=seat, player=occ.player, chips=hs.stack[hs.index_of[seat]])]
    if occ.leaving:
        raise SeatStateUnchanged(seat=seat, state="leaving")
    request = LeaveRequested(seat=seat)
    # Folded at once when it is their turn, else when it comes (see ``_with_follow_on``).
    return _with_follow_on(state, [], pending=[request], leaving={seat})


def _time_out(state: TableState, c: TimeOut) -> list[TableLogEvent]:
    hs = _running(state)
    occ = _occupant(state, c.seat)
    current = hand.to_act(hs)
    if current != c.seat:
        raise NotYourTurn(seat=c.seat, to_act=current)
    i = hs.index_of[c.seat]
    put_in = hs.stack[i] < hs.start_stacks[i]  # chips put in this hand (posts included)
    uses = False
    if not put_in:
        outcome = TimeOutOutcome.FOLDED
    elif not occ.disconnected:
        outcome = TimeOutOutcome.PROTECTED
    elif protections_used(state, occ.player, c.at_ms) < state.rules.time.disconnect_protections_per_window:
        outcome, uses = TimeOutOutcome.PROTECTED, True
    else:
        outcome = TimeOutOutcome.FOLDED
    fact = DecisionTimedOut(
        seat=c.seat,
        player=occ.player,
        at_ms=c.at_ms,
        disconnected=occ.disconnected,
        outcome=outcome,
        uses_protection=uses,
    )
    command: HandCommand = (
        ProtectAllIn(seat=c.seat)
        if outcome is TimeOutOutcome.PROTECTED
        else Act(seat=c.seat, action=ActionKind.FOLD)
    )
    return _with_follow_on(state, _force(hs, command), pending=[fact])


def _void_hand(state: TableState, c: VoidHand) -> list[TableLogEvent]:
    hs = _running(state)
    if hs.hand_id != c.hand_id:
        raise HandNotLive(hand_id=c.hand_id, live_hand_id=hs.hand_id)
    returned = tuple(
        SeatAmount(seat=seat, amount=hs.start_stacks[i])
        for i, seat in enumerate(hs.seats)
        if seat in state.seats
    )
    out: list[TableLogEvent] = [HandVoided(hand_id=c.hand_id, reason=c.reason, returned=returned)]
    stacks = {r.seat: r.amount for r in returned}
    # Players who asked to leave during the hand go now, with their returned stack.
    for seat, occ in sorted(state.seats.items()):
        if occ.leaving:
            out.append(PlayerLeft(seat=seat, player=occ.player, chips=stacks.get(seat, occ.stack)))
    return out


def _force(hs: hand.HandState, command: HandCommand) -> list[HandEvent]:
    """A fold the table makes for a player: a check where the rules refuse a free fold."""
    try:
        return hand.decide(hs, command)
    except FoldNotAllowed:
        assert isinstance(command, Act)
        return hand.decide(hs, Act(seat=command.seat, action=ActionKind.CHECK))


def _with_follow_on(
    state: TableState,
    hand_events: Sequence[HandEvent],
    *,
    pending: Sequence[TableEvent] = (),
    leaving: set[int] | None = None,
) -> list[TableLogEvent]:
    """``pending`` table facts, then ``hand_events``, then what follows automatically.

    A leaving player still in the hand is folded when it is their turn and leaves when they are
    out of it; when the hand ends, players with no chips are sat out.
    """
    assert state.hand is not None
    hs = state.hand.copy()
    out: list[TableLogEvent] = [*pending, *hand_events]
    for e in hand_events:
        hand.evolve(hs, e)
    going = {seat for seat, occ in state.seats.items() if occ.leaving} | (leaving or set())
    while True:
        for seat in sorted(going):
            if not _in_hand(hs, seat):
                i = hs.index_of[seat]
                out.append(PlayerLeft(seat=seat, player=state.seats[seat].player, chips=hs.stack[i]))
                going.discard(seat)
        current = hand.to_act(hs)
        if current is None or current not in going:
            break
        forced = _force(hs, Act(seat=current, action=ActionKind.FOLD))
        out.extend(forced)
        for e in forced:
            hand.evolve(hs, e)
    if hand.is_over(hs):
        for seat in sorted(state.seats):
            k = hs.index_of.get(seat)
            if k is not None and seat not in going and hs.stack[k] == 0 and not _left(out, seat):
                out.append(PlayerSatOut(seat=seat, reason=SitOutReason.NO_CHIPS))
    return out


def _left(events: Sequence[TableLogEvent], seat: int) -> bool:
    return any(isinstance(e, PlayerLeft) and e.seat == seat for e in events)


def _occupants(state: TableState) -> list[Occupant]:
    return [
        Occupant(seat=seat, player=o.player, stack=o.stack, status=o.status, debt=o.debt, arrival=o.arrival)
        for seat, o in sorted(state.seats.items())
        if not o.leaving
    ]


def next_setup(
    state: TableState, *, hand_id: str, deck: tuple[Card, ...], commitment: str = ""
) -> tuple[HandPlan, HandSetup]:
    """The plan and the ``HandSetup`` the next hand would start from (raises
    ``NotEnoughPlayers``); ``StartHand`` records the plan and plays the setup."""
    plan = plan_hand(state.rules, _occupants(state), state.last)
    setup = HandSetup(
        hand_id=hand_id,
        rules=state.rules,
        seats=tuple(
            SeatSetup(seat=s, player=state.seats[s].player, stack=state.seats[s].stack) for s in plan.dealt
        ),
        button=plan.positions.button,
        posts=plan.posts,
        deck=deck,
        commitment=commitment,
    )
    return plan, setup


def _start_hand(state: TableState, c: StartHand) -> list[TableLogEvent]:
    if state.hand is not None:
        raise HandInProgress(command="start hand")
    if c.hand_id in state.hand_ids:
        raise DuplicateHandId(hand_id=c.hand_id)
    plan, setup = next_setup(state, hand_id=c.hand_id, deck=c.deck, commitment=c.commitment)
    opening = hand.start(setup)
    out: list[TableLogEvent] = [HandScheduled(hand_id=c.hand_id, plan=plan), *opening]
    # Everyone may be all-in from the posts alone: the hand engine then plays it out in start().
    hs = hand.fold(opening)
    if hand.is_over(hs):
        out.extend(
            PlayerSatOut(seat=seat, reason=SitOutReason.NO_CHIPS)
            for seat in plan.dealt
            if hs.stack[hs.index_of[seat]] == 0
        )
    return out


# -- queries -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatInfo:
    seat: int
    player: str | None
    stack: int  # chips behind (during a hand: what the hand engine says is left)
    state: SeatView
    debt: Debt
    disconnected: bool
    leaving: bool


def seats(state: TableState) -> tuple[SeatInfo, ...]:
    """Every seat of the table, empty ones included, in seat order."""
    out: list[SeatInfo] = []
    for seat in range(state.rules.seats):
        occ = state.seats.get(seat)
        if occ is None:
            out.append(
                SeatInfo(
                    seat=seat,
                    player=None,
                    stack=0,
                    state=SeatView.EMPTY,
                    debt=Debt.NONE,
                    disconnected=False,
                    leaving=False,
                )
            )
            continue
        stack = occ.stack
        if state.hand is not None and seat in state.hand.index_of:
            stack = state.hand.stack[state.hand.index_of[seat]]
        view = Occupant(
            seat=seat, player=occ.player, stack=occ.stack, status=occ.status, debt=occ.debt, arrival=0
        ).view
        out.append(
            SeatInfo(
                seat=seat,
                player=occ.player,
                stack=stack,
                state=view,
                debt=occ.debt,
                disconnected=occ.disconnected,
                leaving=occ.leaving,
            )
        )
    return tuple(out)


def owed_posts(state: TableState) -> dict[int, tuple[PostKind, ...]]:
    """What each seated player with a debt must post to play before the big blind reaches them."""
    out: dict[int, tuple[PostKind, ...]] = {}
    for seat, occ in sorted(state.seats.items()):
        if occ.debt is Debt.BIG_BLIND:
            out[seat] = (PostKind.LIVE_BIG_BLIND, PostKind.DEAD_SMALL_BLIND)
        elif occ.debt in (Debt.SMALL_BLIND, Debt.NEW_PLAYER):
            out[seat] = (PostKind.LIVE_BIG_BLIND,)
    return out


def next_hand(state: TableState) -> HandPlan | None:
    """Dealer, blinds and posts of the next hand if it started now; None if it cannot start."""
    if state.hand is not None:
        return None
    try:
        return plan_hand(state.rules, _occupants(state), state.last)
    except NotEnoughPlayers:
        return None


def can_start_hand(state: TableState) -> bool:
    return next_hand(state) is not None


def protections_used(state: TableState, player: str, at_ms: int) -> int:
    """Disconnection protections ``player`` used in the rolling window ending at ``at_ms``."""
    window = state.rules.time.protection_window_ms
    return sum(1 for t in state.protections.get(player, []) if at_ms - t < window)


def decision_time_ms(state: TableState) -> tuple[int, int] | None:
    """(seat to act, milliseconds it may take in all) for the current decision, or None."""
    if state.hand is None:
        return None
    seat = hand.to_act(state.hand)
    if seat is None:
        return None
    t = state.rules.time
    total = t.decision_ms + t.countdown_ms
    if state.turn_extra is not None:
        extra_seat, at_count, extra = state.turn_extra
        if extra_seat == seat and at_count == len(state.hand_events):
            total += extra
    return seat, total


@dataclass(frozen=True, slots=True, kw_only=True)
class Refund:
    """Chips a player who left the live hand had committed to it: theirs again if it is voided."""

    seat: int
    player: str
    chips: int


def void_refunds(state: TableState) -> tuple[Refund, ...]:
    """What voiding the live hand gives back to the players who already left it (they took only
    what was in front of them), in seat order; empty between hands."""
    hs = state.hand
    if hs is None:
        return ()
    out: list[Refund] = []
    for seat, i in sorted(hs.index_of.items()):
        committed = hs.start_stacks[i] - hs.stack[i]
        if seat not in state.seats and committed > 0:
            out.append(Refund(seat=seat, player=hs.players[i], chips=committed))
    return tuple(out)


def chips_on_table(state: TableState) -> int:
    """Chips in front of seated players and in the pot (during a hand, as the hand has them)."""
    total = sum(
        o.stack for seat, o in state.seats.items() if state.hand is None or seat not in state.hand.index_of
    )
    if state.hand is not None:
        hs = state.hand
        total += sum(hs.stack) + sum(hs.live) + hs.dead
        # Folded players who already left took their chips: they are counted in taken_off.
        total -= sum(hs.stack[i] for seat, i in hs.index_of.items() if seat not in state.seats)
    return total


@dataclass(frozen=True, slots=True, kw_only=True)
class TableView:
    table_id: str
    rules: Rules
    seats: tuple[SeatInfo, ...]
    positions: Positions | None  # the current (or last) hand's button and blinds
    hand: hand.HandView | None  # redacted for the viewer
    hands_played: int


# The field types ``engine.codec`` decodes by, for the fields mypyc erases when it compiles this
# module (optional and tuple fields keep no item types); a test checks them against the
# annotations above (see ``engine.hand_events``).
CODEC_HINTS: Final[dict[str, dict[str, object]]] = {
    "SeatInfo": {"player": str | None},
    "TableView": {"seats": tuple[SeatInfo, ...], "positions": Positions | None, "hand": hand.HandView | None},
}


def view(state: TableState, viewer: str | None) -> TableView:
    """What ``viewer`` (a player id, or None for a spectator) may see of the table."""
    hand_view = None
    if state.hand is not None:
        seat = next((s for s, o in state.seats.items() if o.player == viewer), None)
        hand_view = hand.view(state.hand, seat)
    return TableView(
        table_id=state.table_id,
        rules=state.rules,
        seats=seats(state),
        positions=state.last,
        hand=hand_view,
        hands_played=state.hands_played,
    )
