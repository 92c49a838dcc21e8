"""Pure queries of a hand's state: whose turn it is, what they may do, the pots, the final
stacks, and the hand as one viewer may see it."""

from __future__ import annotations

from openpoker.engine.betting import LegalActions, raise_block, raise_bounds, to_call
from openpoker.engine.hand_events import STREETS
from openpoker.engine.hand_state import BETTING, OVER, SHOWDOWN, HandState
from openpoker.engine.hand_view import HandView, PlayerView, PotView
from openpoker.engine.pots import build_pots


def to_act(state: HandState) -> int | None:
    """The seat whose decision the hand waits for (a bet, or a phh show/muck), else None."""
    if state.phase == BETTING and state.queue:
        return state.seats[state.queue[0]]
    if state.phase == SHOWDOWN and state.showdown_queue:
        return state.seats[state.showdown_queue[0]]
    return None


def is_over(state: HandState) -> bool:
    return state.phase == OVER


def legal_actions(state: HandState, seat: int) -> LegalActions | None:
    """What ``seat`` may do now, or None when it is not their betting turn."""
    s = state
    i = s.index_of.get(seat)
    if i is None or s.phase != BETTING or not s.queue or s.queue[0] != i:
        return None
    owed = s.highest - s.bet[i]
    block = raise_block(s, i)
    low, high = raise_bounds(s, i) if block is None else (0, 0)
    return LegalActions(
        seat=seat,
        can_fold=owed > 0 or s.rules.fold_when_check_free,
        can_check=owed <= 0,
        to_call=to_call(s, i) if owed > 0 else 0,
        can_raise=block is None,
        min_raise_to=low,
        max_raise_to=high,
    )


def pots(state: HandState) -> tuple[PotView, ...]:
    """Main pot first, then side pots, counting the bets of the current round."""
    in_hand = [not f for f in state.folded]
    return tuple(
        PotView(amount=p.amount, eligible=tuple(state.seats[i] for i in p.eligible))
        for p in build_pots(state.live, state.dead, in_hand)
    )


def final_stacks(state: HandState) -> dict[int, int]:
    """Each seat's chips behind (the final stacks once the hand is over)."""
    return {seat: state.stack[i] for i, seat in enumerate(state.seats)}


def view(state: HandState, viewer: int | None) -> HandView:
    """The hand as ``viewer`` (a seat, or None for a spectator) may see it: hole cards only
    their own and those shown at showdown."""
    s = state
    players = tuple(
        PlayerView(
            seat=seat,
            player=s.players[i],
            stack=s.stack[i],
            bet=s.bet[i],
            folded=s.folded[i],
            all_in=not s.folded[i] and (s.stack[i] == 0 or s.protected[i]),
            hole=s.hole[i] if (seat == viewer or s.shown[i]) else None,
        )
        for i, seat in enumerate(s.seats)
    )
    return HandView(
        hand_id=s.hand_id,
        button=s.button,
        street=STREETS[s.street],
        board=tuple(s.board),
        players=players,
        pots=pots(s),
        to_act=to_act(s),
        legal=legal_actions(s, viewer) if viewer is not None else None,
        over=s.phase == OVER,
    )
