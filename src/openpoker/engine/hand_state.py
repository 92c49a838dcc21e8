"""The state of one hand (``HandState``) and the state a ``HandStarted`` makes (``initial_state``)."""

from __future__ import annotations

from typing import Final

from openpoker.engine.cards import Card
from openpoker.engine.hand_events import HandEnded, HandStarted
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import Rules, Structure

# Bound once: a member look-up on an Enum class costs a ~10x attribute look-up.
_FIXED_LIMIT = Structure.FIXED_LIMIT

# Phases of a hand.
BETTING = 0
SHOWDOWN = 1  # phh: waiting for Show / Muck commands
OVER = 2


# Module level, not only ``__slots__``: a class compiled by mypyc has no ``__slots__`` at run
# time, and ``snapshot`` reads the names.
_SLOTS: Final = (
    "acted",
    "auto_muck",
    "bet",
    "blind_kind",
    "board",
    "button",
    "by_seat",
    "dead",
    "deck",
    "faced",
    "fl_base",
    "folded",
    "hand_id",
    "highest",
    "hole",
    "inc",
    "index_of",
    "last_aggressor",
    "live",
    "mucked",
    "n",
    "opener",
    "order_range",
    "phase",
    "players",
    "protected",
    "queue",
    "raise_cap",
    "raises",
    "result",
    "rules",
    "seats",
    "shorts",
    "showdown_done",
    "showdown_queue",
    "shown",
    "stack",
    "start_stacks",
    "street",
)


class HandState:
    """Private mutable state of one hand; only ``evolve`` (``engine.hand_evolve``) writes it.

    Per-player lists are indexed in internal order (clockwise from the first seat left of the
    button); ``seats[i]`` is player ``i``'s table seat.
    """

    __slots__ = _SLOTS

    rules: Rules
    hand_id: str
    button: int
    seats: tuple[int, ...]
    by_seat: tuple[int, ...]  # internal indices in seat-number order
    players: tuple[str, ...]
    index_of: dict[int, int]
    n: int
    order_range: range
    deck: tuple[Card, ...]
    start_stacks: tuple[int, ...]
    stack: list[int]
    bet: list[int]
    live: list[int]
    dead: int
    folded: list[bool]
    protected: list[bool]
    hole: list[tuple[Card, ...]]
    board: list[Card]
    street: int
    phase: int
    queue: list[int]
    highest: int
    inc: int
    raises: int
    raise_cap: int
    fl_base: int
    blind_kind: list[PostKind | None]
    acted: list[bool]
    faced: list[int]
    shorts: list[int]
    last_aggressor: int | None
    opener: int
    showdown_queue: list[int]
    showdown_done: bool
    shown: list[bool]
    mucked: list[bool]
    auto_muck: list[bool]  # seeds showdown: a hand that cannot win is mucked (per player)
    result: HandEnded | None

    def copy(self) -> HandState:
        c = HandState()
        c.rules = self.rules
        c.hand_id = self.hand_id
        c.button = self.button
        c.seats = self.seats
        c.by_seat = self.by_seat
        c.players = self.players
        c.index_of = self.index_of
        c.n = self.n
        c.order_range = self.order_range
        c.deck = self.deck
        c.start_stacks = self.start_stacks
        c.stack = self.stack[:]
        c.bet = self.bet[:]
        c.live = self.live[:]
        c.dead = self.dead
        c.folded = self.folded[:]
        c.protected = self.protected[:]
        c.hole = self.hole[:]
        c.board = self.board[:]
        c.street = self.street
        c.phase = self.phase
        c.queue = self.queue[:]
        c.highest = self.highest
        c.inc = self.inc
        c.raises = self.raises
        c.raise_cap = self.raise_cap
        c.fl_base = self.fl_base
        c.blind_kind = self.blind_kind
        c.acted = self.acted[:]
        c.faced = self.faced[:]
        c.shorts = self.shorts[:]
        c.last_aggressor = self.last_aggressor
        c.opener = self.opener
        c.showdown_queue = self.showdown_queue[:]
        c.showdown_done = self.showdown_done
        c.shown = self.shown[:]
        c.mucked = self.mucked[:]
        c.auto_muck = self.auto_muck  # replaced, never written in place (``set_auto_muck``)
        c.result = self.result
        return c

    def snapshot(self) -> tuple[object, ...]:
        """Every field as plain values, for equality checks in tests."""
        return tuple((list(v) if isinstance(v, list) else v) for v in (getattr(self, k) for k in _SLOTS))


def initial_state(e: HandStarted) -> HandState:
    s = HandState()
    rules = e.rules
    s.rules = rules
    s.hand_id = e.hand_id
    s.button = e.button
    # Internal order: clockwise from the first seat after the button. ``HandStarted.seats`` is
    # sorted by seat (``begin`` records it so), so the order is a rotation of it, found in one
    # pass; seats in any other order are sorted.
    button = e.button
    given = e.seats
    n = len(given)
    first = -1
    previous = -1
    for k in range(n):
        seat = given[k].seat
        if seat <= previous:
            first = -2  # not sorted
            break
        if first == -1 and seat > button:
            first = k
        previous = seat
    if first == -2:
        ordered = tuple(sorted(given, key=lambda x: (x.seat - button - 1) % 1000))
        s.seats = tuple([o.seat for o in ordered])
        s.by_seat = tuple(sorted(range(n), key=s.seats.__getitem__))
    else:
        first = max(first, 0)  # no seat after the button: the lowest seat is first
        ordered = given[first:] + given[:first]
        s.seats = tuple([o.seat for o in ordered])
        s.by_seat = tuple([(k - first) % n for k in range(n)])
    s.players = tuple([o.player for o in ordered])
    s.index_of = dict(zip(s.seats, range(n), strict=True))
    s.n = n
    s.order_range = range(n)
    s.deck = e.deck
    s.start_stacks = tuple([o.stack for o in ordered])
    s.stack = list(s.start_stacks)
    s.bet = [0] * n
    s.live = [0] * n
    s.dead = 0
    s.folded = [False] * n
    s.protected = [False] * n
    s.hole = [()] * n
    s.board = []
    s.street = 0
    s.phase = BETTING
    s.queue = []
    s.highest = 0
    s.inc = 0
    s.raises = 0
    s.raise_cap = rules.fixed_limit_raises_preflop if rules.structure is _FIXED_LIMIT else 1 << 30
    s.fl_base = 0
    s.blind_kind = [None] * n
    s.acted = [False] * n
    s.faced = [-1] * n
    s.shorts = []
    s.last_aggressor = None
    s.opener = 0
    s.showdown_queue = []
    s.showdown_done = False
    s.shown = [False] * n
    s.mucked = [False] * n
    s.auto_muck = [rules.auto_muck] * n  # the table's players' own choices replace it
    s.result = None
    return s
