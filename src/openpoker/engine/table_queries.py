"""Pure queries of a table's state: its seats, what is owed, the next hand's plan and setup,
decision time, what a void would refund, chips on the table, and the view one viewer may see."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from openpoker.engine import hand
from openpoker.engine.blinds import HandPlan, NotEnoughPlayers, Positions, plan_hand
from openpoker.engine.cards import Card
from openpoker.engine.hand_setup import HandSetup, PostKind, SeatSetup
from openpoker.engine.rules import Rules
from openpoker.engine.seating import Debt, Occupant, SeatView
from openpoker.engine.table_state import TableState


def occupants(state: TableState) -> list[Occupant]:
    """The seated players as the blinds see them (players leaving are not dealt in again)."""
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
    plan = plan_hand(state.rules, occupants(state), state.last)
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
        auto_muck=tuple(s for s in plan.dealt if state.seats[s].auto_muck),
    )
    return plan, setup


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatInfo:
    seat: int
    player: str | None
    stack: int  # chips behind (during a hand: what the hand engine says is left)
    state: SeatView
    debt: Debt
    disconnected: bool
    leaving: bool
    # The player's showdown choices (seed 000; the table's defaults for an empty seat).
    auto_muck: bool = True
    show_uncontested: bool = False
    # Hole cards its player showed after winning the last hand uncontested, until the next
    # hand starts: seen by every viewer.
    shown: tuple[Card, ...] = ()


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
                    auto_muck=state.rules.auto_muck,
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
                auto_muck=occ.auto_muck,
                show_uncontested=occ.show_uncontested,
                shown=_shown(state, seat, occ.player),
            )
        )
    return tuple(out)


def _shown(state: TableState, seat: int, player: str) -> tuple[Card, ...]:
    won = state.won_uncontested
    if won is None or not state.won_shown or won[1] != seat or won[2] != player:
        return ()
    return won[3]


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
        return plan_hand(state.rules, occupants(state), state.last)
    except NotEnoughPlayers:
        return None


def can_start_hand(state: TableState) -> bool:
    return next_hand(state) is not None


def protections_used(state: TableState, player: str, at_ms: int) -> int:
    """Disconnection protections ``player`` used in the rolling window ending at ``at_ms``."""
    window = state.rules.time.protection_window_ms
    return sum(1 for t in state.protections.get(player, []) if at_ms - t < window)


def protection_at_stake(state: TableState, seat: int) -> str | None:
    """The player whose time-out at ``seat`` now would use one of their disconnection
    protections if any is left (the seat is to act, disconnected, with chips in), else None.
    The shell asks it to know whose site-wide record to read before it times the seat out."""
    hs = state.hand
    occ = state.seats.get(seat)
    if hs is None or occ is None or not occ.disconnected or hand.to_act(hs) != seat:
        return None
    i = hs.index_of[seat]
    return occ.player if hs.stack[i] < hs.start_stacks[i] else None


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
    "SeatInfo": {"player": str | None, "shown": tuple[Card, ...]},
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
