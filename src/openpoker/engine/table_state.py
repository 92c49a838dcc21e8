"""The table's state: ``TableState`` and its seated players (``SeatState``), private and mutable,
written only by ``evolve`` (``engine.table``) and read through the queries
(``engine.table_queries``)."""

from __future__ import annotations

from collections import deque
from typing import Final

from openpoker.engine.blinds import HandPlan, Positions
from openpoker.engine.cards import Card
from openpoker.engine.hand_events import HandEvent
from openpoker.engine.hand_state import HandState
from openpoker.engine.rules import Rules
from openpoker.engine.seating import Debt, SeatStatus

# Module level, not only ``__slots__``: a class compiled by mypyc has no ``__slots__`` at run time.
_SEAT_SLOTS: Final = (
    "arrival",
    "auto_muck",
    "debt",
    "disconnected",
    "leaving",
    "player",
    "show_uncontested",
    "stack",
    "status",
)


class SeatState:
    """A seated player (private, mutable, written only by ``evolve``)."""

    __slots__ = _SEAT_SLOTS

    def __init__(
        self,
        *,
        player: str,
        stack: int,
        status: SeatStatus,
        debt: Debt,
        arrival: int,
        auto_muck: bool = True,
    ) -> None:
        self.player = player
        self.stack = stack  # chips behind between hands (during a hand: at its start)
        self.status = status
        self.debt = debt
        self.arrival = arrival
        self.leaving = False
        self.disconnected = False
        # The player's showdown choices (seed 000); a new player starts with the table's
        # ``Rules.auto_muck`` and does not show a hand won uncontested.
        self.auto_muck = auto_muck
        self.show_uncontested = False

    def snapshot(self) -> tuple[object, ...]:
        return tuple(getattr(self, k) for k in _SEAT_SLOTS)


class TableState:
    """Private mutable state of a table; only ``evolve`` writes it. Read it through queries."""

    def __init__(self, *, table_id: str, rules: Rules) -> None:
        self.table_id = table_id
        self.rules = rules
        self.seats: dict[int, SeatState] = {}
        self.arrivals = 0
        self.last: Positions | None = None  # positions of the last hand scheduled
        self.plan: HandPlan | None = None  # plan of the hand in progress (or last hand)
        self.hand: HandState | None = None  # None between hands
        self.hand_events: list[HandEvent] = []  # the current hand's events (for look-ahead)
        # The latest ``engine.table.HAND_IDS_KEPT`` hand ids: a set to look up, a deque for their order.
        self.hand_ids: set[str] = set()
        self.hand_order: deque[str] = deque()  # oldest first
        self.hands_played = 0
        self.protections: dict[str, list[int]] = {}  # player -> at_ms of protections used
        self.turn_extra: tuple[int, int, int] | None = None  # (seat, hand event count, extra ms)
        self.left_debts: dict[str, Debt] = {}  # missed blinds owed by players who left
        self.bought_in = 0
        self.taken_off = 0
        self.rake = 0
        # The last hand, if won because everyone else folded and until the next hand starts:
        # (hand id, seat, player, hole cards) of its winner, who may still show them; and
        # whether they did.
        self.won_uncontested: tuple[str, int, str, tuple[Card, ...]] | None = None
        self.won_shown = False

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
            self.won_uncontested,
            self.won_shown,
        )
