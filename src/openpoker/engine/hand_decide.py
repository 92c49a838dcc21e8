"""Deciding one command of a hand: the events it causes, or a typed ``RuleViolation``.

A command's events include everything that follows automatically (``advance``): the uncalled
bet returned when a round closes, the next board cards (several streets at once when everyone is
all-in), the showdown, the pots awarded and ``HandEnded``, always the last event. ``decide``
finds them on a private copy of the state and leaves the state it was given unchanged;
``apply``, ``apply_act`` and ``apply_showdown`` decide and evolve in one pass for replays.
"""

from __future__ import annotations

from typing import assert_never

from openpoker.engine import showdown
from openpoker.engine.betting import raise_block, raise_bounds, to_call
from openpoker.engine.errors import (
    CannotCheck,
    CannotMuck,
    FoldNotAllowed,
    HandOver,
    NotEnoughChips,
    NothingToCall,
    NotShowdown,
    NotYourTurn,
    ProtectionNotAllowed,
    RaiseAboveMaximum,
    RaiseBelowMinimum,
    RaiseNotAllowed,
    SeatNotInHand,
)
from openpoker.engine.hand_events import (
    STREETS,
    Act,
    ActionKind,
    AllInProtected,
    BetPlaced,
    Called,
    Checked,
    Folded,
    HandCommand,
    HandEvent,
    Muck,
    ProtectAllIn,
    Show,
    UncalledBetReturned,
    bet_placed,
    board_dealt,
    called,
    cards_mucked,
    cards_shown,
    checked,
    folded,
    showdown_started,
    uncalled_bet_returned,
)
from openpoker.engine.hand_evolve import evolve_in_place
from openpoker.engine.hand_queries import to_act
from openpoker.engine.hand_state import BETTING, OVER, SHOWDOWN, HandState
from openpoker.engine.rules import Profile

# Bound once: a member look-up on an Enum class costs a ~10x attribute look-up.
_PHH = Profile.PHH

_BOARD_SIZES = (3, 1, 1)  # flop, turn, river


def decide(state: HandState, command: HandCommand) -> list[HandEvent]:
    """The events ``command`` causes, or a ``RuleViolation``; ``state`` is left unchanged."""
    s = state
    event = _first_event(s, command)
    # Fast path: an action that leaves two or more players to act and two or more in the hand
    # closes nothing, so no follow-on event can come (a bet always leaves someone to answer it).
    if isinstance(event, BetPlaced):
        return [event]
    if isinstance(event, Checked | Called | Folded | AllInProtected) and len(s.queue) > 2:
        in_hand = s.n - s.folded.count(True) - (1 if isinstance(event, Folded) else 0)
        if in_hand > 1:
            return [event]
    out: list[HandEvent] = [event]
    scratch = s.copy()
    evolve_in_place(scratch, event)
    advance(scratch, out)
    return out


def apply(state: HandState, command: HandCommand) -> list[HandEvent]:
    """``decide`` and ``evolve`` in one pass: the events ``command`` causes, already applied to
    ``state`` (which is changed). Same events and same resulting state as ``decide`` followed
    by ``evolve`` of each event (a property test checks it), without the scratch copy; for
    callers that apply every decision at once, such as replays. A refused command raises
    before anything changes."""
    event = _first_event(state, command)
    out: list[HandEvent] = [event]
    evolve_in_place(state, event)
    advance(state, out)
    return out


def apply_act(state: HandState, seat: int, action: ActionKind, amount: int = 0) -> list[HandEvent]:
    """``apply(state, Act(seat=seat, action=action, amount=amount))`` without building the
    command: same validation, typed errors, events and resulting state (for replays)."""
    event = _act_event(state, seat, action, amount)
    out: list[HandEvent] = [event]
    evolve_in_place(state, event)
    # ``advance``'s own first test, inline: most actions leave the round open.
    if (
        state.queue
        and state.phase == BETTING
        and state.n - state.folded.count(True) - state.mucked.count(True) > 1
    ):
        return out
    advance(state, out)
    return out


def _first_event(s: HandState, command: HandCommand) -> HandEvent:
    """Validate ``command``: the event it makes, or a ``RuleViolation``."""
    # Dispatch on the exact type (commands are final classes): a ``match`` over class patterns
    # with captures costs several isinstance and attribute look-ups for every action.
    kind: type = type(command)
    if kind not in _COMMAND_TYPES:  # a subclass is dispatched as its command, as ``match`` did
        kind = next((t for t in _COMMAND_TYPES if isinstance(command, t)), kind)
    if kind is Act:
        assert isinstance(command, Act)
        return _act_event(s, command.seat, command.action, command.amount)
    if s.phase == OVER:
        raise HandOver(hand_id=s.hand_id)
    if kind is ProtectAllIn:
        seat = command.seat
        i = _index(s, seat)
        if s.phase != BETTING or not s.queue or s.queue[0] != i:
            raise NotYourTurn(seat=seat, to_act=to_act(s))
        if s.stack[i] == s.start_stacks[i]:
            raise ProtectionNotAllowed(seat=seat)
        return AllInProtected(seat=seat)
    if kind is Show or kind is Muck:
        return _showdown_event(s, command.seat, kind is Show)
    assert_never(command)  # type: ignore[arg-type]


def _showdown_event(s: HandState, seat: int, show: bool) -> HandEvent:
    """Validate a phh ``Show`` (``show``) or ``Muck``: the event it makes, or a violation."""
    i = _index(s, seat)
    if s.phase != SHOWDOWN:
        raise NotShowdown(seat=seat)
    if s.showdown_queue[0] != i:
        raise NotYourTurn(seat=seat, to_act=to_act(s))
    if show:
        return cards_shown(seat, s.hole[i], showdown.describe(s, i))
    live = [j for j in range(s.n) if not s.folded[j] and not s.mucked[j]]
    if live == [i]:
        raise CannotMuck(seat=seat)
    return cards_mucked(seat)


def apply_showdown(state: HandState, seat: int, show: bool) -> list[HandEvent]:
    """``apply(state, Show(seat=seat))`` (``show``) or ``Muck`` without building the command:
    same validation, events and resulting state (for replays)."""
    if state.phase == OVER:
        raise HandOver(hand_id=state.hand_id)
    event = _showdown_event(state, seat, show)
    out: list[HandEvent] = [event]
    evolve_in_place(state, event)
    advance(state, out)
    return out


_COMMAND_TYPES: tuple[type, ...] = (Act, ProtectAllIn, Show, Muck)
_FOLD = ActionKind.FOLD
_CHECK = ActionKind.CHECK
_CALL = ActionKind.CALL
_BET_OR_RAISE = ActionKind.BET_OR_RAISE


def _act_event(s: HandState, seat: int, action: ActionKind, amount: int) -> HandEvent:
    """Validate a betting decision (``Act``): the event it makes, or a ``RuleViolation``."""
    if s.phase == OVER:
        raise HandOver(hand_id=s.hand_id)
    i = s.index_of.get(seat)
    if i is None:
        raise SeatNotInHand(seat=seat)
    queue = s.queue
    if s.phase != BETTING or not queue or queue[0] != i:
        raise NotYourTurn(seat=seat, to_act=to_act(s))
    owed = s.highest - s.bet[i]
    # Compared by equality, in this order, as the ``match`` over the enum's values was.
    if action == _FOLD:
        if owed <= 0 and not s.rules.fold_when_check_free:
            raise FoldNotAllowed(seat=seat)
        return folded(seat)
    if action == _CHECK:
        if owed > 0:
            raise CannotCheck(seat=seat, to_call=to_call(s, i))
        return checked(seat)
    if action == _CALL:
        if owed <= 0:
            raise NothingToCall(seat=seat)
        stack = s.stack[i]
        call = owed if owed < stack else stack
        return called(seat, call, call == stack)
    if action == _BET_OR_RAISE:
        why = raise_block(s, i)
        if why is not None:
            raise RaiseNotAllowed(seat=seat, why=why)
        total = s.stack[i] + s.bet[i]
        if amount > total:
            raise NotEnoughChips(seat=seat, amount=amount, available=total)
        low, high = raise_bounds(s, i)
        if amount < low:
            raise RaiseBelowMinimum(amount=amount, minimum=low)
        if amount > high:
            raise RaiseAboveMaximum(amount=amount, maximum=high)
        return bet_placed(seat, amount, amount - s.bet[i], amount == total)
    assert_never(action)  # type: ignore[arg-type]  # a str that is no ActionKind value


def _index(s: HandState, seat: int) -> int:
    i = s.index_of.get(seat)
    if i is None:
        raise SeatNotInHand(seat=seat)
    return i


def _emit(s: HandState, out: list[HandEvent], event: HandEvent) -> None:
    out.append(event)
    evolve_in_place(s, event)


def advance(s: HandState, out: list[HandEvent]) -> None:
    """Every automatic event after a command: close rounds, deal, show down, pay."""
    if s.phase == SHOWDOWN:
        return
    while s.phase == BETTING:
        in_hand = s.n - s.folded.count(True) - s.mucked.count(True)
        if in_hand > 1 and s.queue:
            return
        returned = _uncalled(s)
        if returned is not None:
            _emit(s, out, returned)
        if (
            in_hand > 1
            and s.rules.profile is _PHH
            and not s.showdown_done
            and (s.street == 3 or _betting_over(s))
        ):
            # phh (pokerkit): cards are shown as soon as betting is over for good, before an
            # all-in runout; players send Show or Muck in turn.
            _emit(s, out, showdown_started(tuple(s.seats[i] for i in showdown.showdown_order(s))))
            return
        if in_hand == 1 or s.street == 3:
            for e in showdown.finish(s):
                _emit(s, out, e)
            return
        street = s.street + 1
        first = s.n * s.rules.hole_cards + len(s.board)
        cards = s.deck[first : first + _BOARD_SIZES[street - 1]]
        _emit(s, out, board_dealt(STREETS[street], cards))


def _betting_over(s: HandState) -> bool:
    """At most one player still in the hand has chips to bet: no more betting this hand."""
    able = 0
    for i in s.order_range:
        if not s.folded[i] and s.stack[i] and not s.protected[i]:
            able += 1
    return able <= 1


def _uncalled(s: HandState) -> UncalledBetReturned | None:
    """The part of the largest bet of the round nobody matched (returned, never raked)."""
    bets = s.bet
    top = max(bets)
    if top == 0:
        return None
    i = bets.index(top)
    second = sorted(bets)[-2]  # the largest bet of the others (the top one may be there again)
    if top > second:
        return uncalled_bet_returned(s.seats[i], top - second)
    return None
