"""Seats at a table: who sits where, with how many chips, in which state, owing which blinds.

These are plain values used by the planning layer (``engine.blinds``) and the table aggregate
(``engine.table``). The rules they encode come from ``HOUSE_RULES.md`` (Blinds, button, seats):

- A player joins a free seat with a buy-in within the table's limits (seeds 000, 001:
  fixed limit at least 10 x the lower stake; NL/PL 40 to 100 big blinds by default).
- A new player either posts one big blind (live) to play at once, or waits for the big blind
  (seeds 000, 001). Until then they carry the debt ``NEW_PLAYER``.
- A player sitting out keeps the seat; blinds that pass them while out become a debt (seed 000):
  missed only the small blind -> a live big blind; missed the big blind or both -> a live big
  blind plus a dead small blind.
- Table stakes: chips are added only between hands and leave the table only with the player.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from openpoker.engine.errors import EngineError, RuleViolation
from openpoker.engine.rules import Rules


class SeatStatus(StrEnum):
    """What a seated player asked for. Persisted values: never rename."""

    SITTING_IN = "sitting_in"  # plays every hand (posting any debt first)
    WAITING_FOR_BIG_BLIND = "waiting_for_big_blind"  # dealt in when the big blind reaches them
    SITTING_OUT = "sitting_out"  # keeps the seat; missed blinds accrue


class Debt(StrEnum):
    """What a player must post before playing, unless the big blind reaches them first."""

    NONE = "none"
    NEW_PLAYER = "new_player"  # seeds 000/001: one live big blind
    SMALL_BLIND = "small_blind"  # seed 000: missed the small blind only: one live big blind
    BIG_BLIND = "big_blind"  # seed 000: missed the big blind or both: live big blind + dead small


class SeatView(StrEnum):
    """A seat's state as shown to players and operators (a query, never persisted as state)."""

    EMPTY = "empty"
    WAITING_FOR_BIG_BLIND = "waiting_for_big_blind"
    SITTING_IN = "sitting_in"
    OWES_BLINDS = "owes_blinds"  # sitting in, will post what they owe before their next hand
    SITTING_OUT = "sitting_out"


@dataclass(frozen=True, slots=True, kw_only=True)
class Occupant:
    """One seated player as the planning layer sees them between hands."""

    seat: int
    player: str
    stack: int
    status: SeatStatus
    debt: Debt
    arrival: int  # order of arrival at the table: the first player seated is the first dealer

    @property
    def view(self) -> SeatView:
        if self.status is SeatStatus.SITTING_OUT:
            return SeatView.SITTING_OUT
        if self.status is SeatStatus.WAITING_FOR_BIG_BLIND:
            return SeatView.WAITING_FOR_BIG_BLIND
        return SeatView.OWES_BLINDS if self.debt is not Debt.NONE else SeatView.SITTING_IN


# --- typed rule violations for seat commands -------------------------------------------------


class SeatTaken(RuleViolation):
    reason = "SEAT_TAKEN"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} is taken", seat=seat)
        self.seat = seat


class NoSuchSeat(EngineError):
    reason = "NO_SUCH_SEAT"
    kind = "invalid"

    def __init__(self, *, seat: int, seats: int) -> None:
        super().__init__(f"seat {seat} is not in 0..{seats - 1}", seat=seat, seats=seats)
        self.seat = seat


class SeatEmpty(EngineError):
    reason = "SEAT_EMPTY"
    kind = "not_found"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"nobody sits in seat {seat}", seat=seat)
        self.seat = seat


class AlreadySeated(RuleViolation):
    reason = "ALREADY_SEATED"

    def __init__(self, *, player: str, seat: int) -> None:
        super().__init__(f"{player} already sits in seat {seat}", player=player, seat=seat)
        self.player = player


class BuyInOutOfRange(RuleViolation):
    reason = "BUY_IN_OUT_OF_RANGE"

    def __init__(self, *, amount: int, minimum: int, maximum: int | None) -> None:
        super().__init__(
            f"buy-in {amount} is outside {minimum}..{maximum if maximum is not None else 'no maximum'}",
            amount=amount,
            minimum=minimum,
            maximum=maximum,
        )
        self.amount = amount
        self.minimum = minimum
        self.maximum = maximum


class TopUpOutOfRange(RuleViolation):
    reason = "TOP_UP_OUT_OF_RANGE"

    def __init__(self, *, amount: int, stack: int, maximum: int | None) -> None:
        super().__init__(
            f"adding {amount} to {stack} is not allowed (maximum {maximum})",
            amount=amount,
            stack=stack,
            maximum=maximum,
        )
        self.amount = amount
        self.stack = stack
        self.maximum = maximum


class HandInProgress(RuleViolation):
    """Table stakes: chips are added only between hands (seeds 001, 004)."""

    reason = "HAND_IN_PROGRESS"

    def __init__(self, *, command: str) -> None:
        super().__init__(f"{command} is allowed only between hands", command=command)
        self.command = command


class NoChips(RuleViolation):
    reason = "NO_CHIPS"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} has no chips: top up first", seat=seat)
        self.seat = seat


def check_buy_in(rules: Rules, amount: int) -> None:
    """Seeds 000/001 buy-in limits, or the table's own (``rules.buy_in``)."""
    limits = rules.default_buy_in()
    if amount < limits.minimum or (limits.maximum is not None and amount > limits.maximum):
        raise BuyInOutOfRange(amount=amount, minimum=limits.minimum, maximum=limits.maximum)


def check_top_up(rules: Rules, *, stack: int, amount: int) -> None:
    """A top-up adds chips between hands, never beyond the table's maximum buy-in."""
    limits = rules.default_buy_in()
    if amount <= 0 or (limits.maximum is not None and stack + amount > limits.maximum):
        raise TopUpOutOfRange(amount=amount, stack=stack, maximum=limits.maximum)
