"""What a hand starts from: the contract between the table layer and the hand engine.

The table layer (seats, button, owed blinds) decides *who* is dealt in and *what* each posts;
the hand engine plays the hand from that setup without knowing how it was chosen. Both the
seeds profile (tables) and the phh profile (replayed files) build a ``HandSetup``.

Seats are table seat numbers ``0..rules.seats-1``, clockwise. ``button`` is a seat number and
may be an empty seat under the dead-button rule (LAR 151); "left of the button" always means
the next seat numbers clockwise from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final

from openpoker.engine.cards import Card
from openpoker.engine.rules import Rules


class PostKind(StrEnum):
    """Forced bets. Persisted values: never rename."""

    ANTE = "ante"  # dead, before blinds (seed 003)
    SMALL_BLIND = "small_blind"  # live
    BIG_BLIND = "big_blind"  # live; the big blind of the hand (opens pre-flop action to its left)
    STRADDLE = "straddle"  # live UTG straddle (seed 003, LAR 161); the straddler acts last pre-flop
    LIVE_BIG_BLIND = "live_big_blind"  # a new or returning player's live post of one big blind
    DEAD_SMALL_BLIND = "dead_small_blind"  # owed small blind: dead money straight to the pot


LIVE_POSTS = frozenset({PostKind.SMALL_BLIND, PostKind.BIG_BLIND, PostKind.STRADDLE, PostKind.LIVE_BIG_BLIND})


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatSetup:
    """One player dealt in: their seat, id and chips in front of them before any post."""

    seat: int
    player: str
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Post:
    """One forced bet. Live posts count towards the poster's pre-flop bet; dead ones do not.

    ``amount`` is what the rules ask for; a player with fewer chips posts all they have and is
    all-in (the engine records the amount actually posted in its event).
    """

    seat: int
    kind: PostKind
    amount: int

    @property
    def live(self) -> bool:
        return self.kind in LIVE_POSTS


@dataclass(frozen=True, slots=True, kw_only=True)
class HandSetup:
    """Everything a hand needs before the first card: recorded in the hand's first event."""

    hand_id: str
    rules: Rules
    seats: tuple[SeatSetup, ...]  # players dealt in, any order; the engine sorts by seat
    button: int
    posts: tuple[Post, ...]  # in posting order: antes, small blind, big blind, others, straddle
    deck: tuple[Card, ...]  # the shuffled deck, top first; dealt in the seed documents' order
    commitment: str = ""  # rng commitment (hex) the deck was drawn under; "" for replayed files
    # Seats whose hand that cannot win is mucked at a seeds showdown (each player's choice,
    # seed 000); None: every seat as ``rules.auto_muck`` says. Not recorded in ``HandStarted``:
    # the showdown's ``CardsShown`` and ``CardsMucked`` record what was decided.
    auto_muck: tuple[int, ...] | None = None


# The field types ``engine.codec`` decodes by, for the fields mypyc erases when it compiles this
# module (a compiled class's annotations keep ``tuple`` without its items). A test checks them
# against the annotations above.
CODEC_HINTS: Final[dict[str, dict[str, object]]] = {
    "HandSetup": {
        "seats": tuple[SeatSetup, ...],
        "posts": tuple[Post, ...],
        "deck": tuple[Card, ...],
        "auto_muck": tuple[int, ...] | None,
    },
}


# -- fast construction, for replays building a setup per hand -----------------------------------
#
# The same objects the dataclass constructors make (a test compares them), written slot by slot
# without the frozen ``__setattr__`` round trip. For values already checked by their caller.

# Compiled by mypyc (``make install``) these classes are native: a builder writes the fields
# directly, which is what makes it cheap (mypy sees frozen fields, hence the ignores). Pure
# Python refuses such writes on a frozen dataclass, so there the builder sets the slots through
# their descriptors. A compiled class has no ``__slots__`` at run time.
_NATIVE: Final = not hasattr(SeatSetup, "__slots__")

_new = object.__new__


def _slots_of(cls: type) -> tuple[Callable[[object, object], None], ...]:
    return tuple(cls.__dict__[f.name].__set__ for f in fields(cls))


_SS_SEAT, _SS_PLAYER, _SS_STACK = _slots_of(SeatSetup)
_PO_SEAT, _PO_KIND, _PO_AMOUNT = _slots_of(Post)
_HS_HAND_ID, _HS_RULES, _HS_SEATS, _HS_BUTTON, _HS_POSTS, _HS_DECK, _HS_COMMITMENT, _HS_AUTO_MUCK = _slots_of(
    HandSetup
)


def seat_setup(seat: int, player: str, stack: int) -> SeatSetup:
    if not _NATIVE:
        p: SeatSetup = _new(SeatSetup)
        _SS_SEAT(p, seat)
        _SS_PLAYER(p, player)
        _SS_STACK(p, stack)
        return p
    v = SeatSetup.__new__(SeatSetup)
    v.seat = seat  # type: ignore[misc]
    v.player = player  # type: ignore[misc]
    v.stack = stack  # type: ignore[misc]
    return v


def post(seat: int, kind: PostKind, amount: int) -> Post:
    if not _NATIVE:
        p: Post = _new(Post)
        _PO_SEAT(p, seat)
        _PO_KIND(p, kind)
        _PO_AMOUNT(p, amount)
        return p
    v = Post.__new__(Post)
    v.seat = seat  # type: ignore[misc]
    v.kind = kind  # type: ignore[misc]
    v.amount = amount  # type: ignore[misc]
    return v


def hand_setup(  # noqa: PLR0917 (positional: the point is a cheap call)
    hand_id: str,
    rules: Rules,
    seats: tuple[SeatSetup, ...],
    button: int,
    posts: tuple[Post, ...],
    deck: tuple[Card, ...],
    commitment: str,
    auto_muck: tuple[int, ...] | None,
) -> HandSetup:
    if not _NATIVE:
        p: HandSetup = _new(HandSetup)
        _HS_HAND_ID(p, hand_id)
        _HS_RULES(p, rules)
        _HS_SEATS(p, seats)
        _HS_BUTTON(p, button)
        _HS_POSTS(p, posts)
        _HS_DECK(p, deck)
        _HS_COMMITMENT(p, commitment)
        _HS_AUTO_MUCK(p, auto_muck)
        return p
    v = HandSetup.__new__(HandSetup)
    v.hand_id = hand_id  # type: ignore[misc]
    v.rules = rules  # type: ignore[misc]
    v.seats = seats  # type: ignore[misc]
    v.button = button  # type: ignore[misc]
    v.posts = posts  # type: ignore[misc]
    v.deck = deck  # type: ignore[misc]
    v.commitment = commitment  # type: ignore[misc]
    v.auto_muck = auto_muck  # type: ignore[misc]
    return v
