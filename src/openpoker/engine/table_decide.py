"""Deciding a table's commands: the events each causes, or a typed ``RuleViolation``.

Hand commands go to the hand engine (``engine.hand.decide``); the follow-on facts of a command
are part of its events (``_with_follow_on``): a player who asked to leave during the hand is
folded when their turn comes and leaves as soon as they are out of it; when the hand ends,
players left with no chips are sat out, and the winner of a hand everyone else folded shows it
if that is their choice (``show_uncontested``). ``decide`` finds them on a private copy of the hand
state, never the state it was given.
"""

from __future__ import annotations

from collections.abc import Sequence

from openpoker.engine import hand
from openpoker.engine.errors import (
    CannotShowHand,
    DuplicateHandId,
    FoldNotAllowed,
    HandNotLive,
    NoHandInProgress,
    NotYourTurn,
    SeatStateUnchanged,
    TableAlreadyOpen,
    TableNotOpen,
)
from openpoker.engine.hand_events import (
    Act,
    ActionKind,
    HandCommand,
    HandEnded,
    HandEvent,
    Muck,
    ProtectAllIn,
    SeatAmount,
    Show,
)
from openpoker.engine.seating import (
    AlreadySeated,
    Debt,
    HandInProgress,
    NoChips,
    NoSuchSeat,
    SeatEmpty,
    SeatStatus,
    SeatTaken,
    check_buy_in,
    check_top_up,
)
from openpoker.engine.table_events import (
    AllInAllowanceReset,
    ChipsAdded,
    Command,
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
    ResetAllInAllowance,
    SetShowPreferences,
    ShowPreferencesSet,
    ShowUncontestedHand,
    SitDown,
    SitIn,
    SitOut,
    SitOutReason,
    StartHand,
    TableEvent,
    TableLogEvent,
    TableOpened,
    TimeOut,
    TimeOutOutcome,
    TopUp,
    UncontestedHandShown,
    VoidHand,
)
from openpoker.engine.table_queries import next_setup, protections_used
from openpoker.engine.table_state import SeatState, TableState

_HAND_COMMAND_TYPES = (Act, ProtectAllIn, Show, Muck)


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
        case ResetAllInAllowance(player=player, at_ms=at_ms):
            return _reset_allowance(state, player, at_ms)
        case SetShowPreferences(seat=seat, auto_muck=auto_muck, show_uncontested=show):
            occ = _occupant(state, seat)
            if (occ.auto_muck, occ.show_uncontested) == (auto_muck, show):
                return []  # already so: nothing to record
            chosen = ShowPreferencesSet(
                seat=seat, player=occ.player, auto_muck=auto_muck, show_uncontested=show
            )
            return [chosen]
        case ShowUncontestedHand(seat=seat, hand_id=hand_id):
            return _show_uncontested(state, seat, hand_id)
        case _:
            raise AssertionError(f"unknown command {command!r}")  # pragma: no cover


def _running(state: TableState) -> hand.HandState:
    if state.hand is None:
        raise NoHandInProgress()
    return state.hand


def _occupant(state: TableState, seat: int) -> SeatState:
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
    elif (
        protections_used(state, occ.player, c.at_ms) + c.used_elsewhere
        < state.rules.time.disconnect_protections_per_window
    ):
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
        used_elsewhere=c.used_elsewhere,
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


def _reset_allowance(state: TableState, player: str, at_ms: int) -> list[TableLogEvent]:
    """No event when no protection of ``player`` counts at ``at_ms``: the allowance is already
    whole, and a table the player never played at keeps its log as it is."""
    used = protections_used(state, player, at_ms)
    if used == 0:
        return []
    return [AllInAllowanceReset(player=player, at_ms=at_ms, cleared=used)]


def _show_uncontested(state: TableState, seat: int, hand_id: str) -> list[TableLogEvent]:
    """seed 000: the winner of a hand everyone else folded "does not show unless they choose
    to"; they may until the next hand starts, once."""
    occ = _occupant(state, seat)
    won = state.won_uncontested
    if state.hand is not None:
        raise CannotShowHand(seat=seat, why="the next hand has started")
    if won is None:
        raise CannotShowHand(seat=seat, why="the last hand was not won uncontested")
    won_hand, won_seat, player, cards = won
    if hand_id and hand_id != won_hand:
        raise CannotShowHand(seat=seat, why=f"hand {hand_id} is not the last hand ({won_hand})")
    if won_seat != seat or player != occ.player:
        raise CannotShowHand(seat=seat, why="only the winner shows a hand won uncontested")
    if state.won_shown:
        raise CannotShowHand(seat=seat, why="the hand was shown already")
    return [UncontestedHandShown(hand_id=won_hand, seat=seat, player=player, cards=cards)]


def _auto_show(state: TableState, hs: hand.HandState) -> list[TableLogEvent]:
    """The show of a winner by folds whose choice is to show such hands (seed 000), at once."""
    left = [i for i in hs.order_range if not hs.folded[i]]
    if len(left) != 1:
        return []
    (i,) = left
    seat = hs.seats[i]
    occ = state.seats.get(seat)
    if occ is None or occ.player != hs.players[i] or not occ.show_uncontested:
        return []
    return [UncontestedHandShown(hand_id=hs.hand_id, seat=seat, player=occ.player, cards=hs.hole[i])]


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
        shown = _auto_show(state, hs)
        if shown:  # right after the hand's end, before anyone leaves or sits out
            end = next(k for k, e in enumerate(out) if isinstance(e, HandEnded))
            out[end + 1 : end + 1] = shown
        for seat in sorted(state.seats):
            k = hs.index_of.get(seat)
            if k is not None and seat not in going and hs.stack[k] == 0 and not _left(out, seat):
                out.append(PlayerSatOut(seat=seat, reason=SitOutReason.NO_CHIPS))
    return out


def _left(events: Sequence[TableLogEvent], seat: int) -> bool:
    return any(isinstance(e, PlayerLeft) and e.seat == seat for e in events)


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
