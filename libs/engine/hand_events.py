"""The hand engine's vocabulary: the commands a player (or the dealer) sends and the events
(facts, past tense) a hand is made of.

Both are closed unions of frozen, slotted, keyword-only dataclasses, persisted by
``engine.codec``: never rename a class, a field or an enum value once stored. Chip amounts are
integers in minor units; bet amounts are *to* amounts (the player's total bet on the street),
never increments, except where a field says ``amount`` added.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final, TypeVar

from engine.cards import Card
from engine.hand_setup import PostKind, SeatSetup
from engine.rules import Rules


class Street(StrEnum):
    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"


STREETS: tuple[Street, ...] = (Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER)


class ActionKind(StrEnum):
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET_OR_RAISE = "bet_or_raise"  # amount = the total to bet on this street ("raise to")


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatAmount:
    """An amount of chips belonging to one seat (a stack, a share of a pot, a payout)."""

    seat: int
    amount: int


# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Act:
    """A betting decision of the player to act. ``amount`` is the raise-to total for
    ``BET_OR_RAISE`` and ignored otherwise."""

    seat: int
    action: ActionKind
    amount: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtectAllIn:
    """Seeds all-in protection (time-out or disconnection of a player who has put chips in):
    the player is all-in for what they have already put in and acts no more."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Show:
    """phh profile showdown: the player due to show turns their hole cards face up."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Muck:
    """phh profile showdown: the player due to show gives up their hand unseen."""

    seat: int


HandCommand = Act | ProtectAllIn | Show | Muck


# -- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HandStarted:
    """First event of every hand: the rules it is played under and everything dealt from."""

    hand_id: str
    rules: Rules
    button: int
    seats: tuple[SeatSetup, ...]  # sorted by seat number
    deck: tuple[Card, ...]  # top first; internal (views never carry it)
    commitment: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ForcedBetPosted:
    """An ante or blind; ``amount`` is what was actually posted (less when all-in)."""

    seat: int
    kind: PostKind
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class HoleCardsDealt:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Folded:
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Checked:
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Called:
    seat: int
    amount: int  # chips added
    all_in: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class BetPlaced:
    """A bet, raise or completion to ``to`` (the player's street total)."""

    seat: int
    to: int
    amount: int  # chips added
    all_in: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class AllInProtected:
    """The player is all-in for what they have put in (seeds all-in protection)."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UncalledBetReturned:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardDealt:
    """Community cards of ``street``; the previous round's bets are gathered into the pot."""

    street: Street
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShowdownStarted:
    """Betting is over with two or more players left; ``order`` is who shows first."""

    order: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CardsShown:
    seat: int
    cards: tuple[Card, ...]
    description: str  # e.g. "two pair, aces and kings"; "" when the board is incomplete


@dataclass(frozen=True, slots=True, kw_only=True)
class CardsMucked:
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PotAwarded:
    """One pot (0 = main) paid out: ``amount`` before rake, ``rake`` taken from it."""

    index: int
    amount: int
    rake: int
    eligible: tuple[int, ...]
    winners: tuple[SeatAmount, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HandEnded:
    """Last event of every hand: final stacks and what each seat won (after rake)."""

    hand_id: str
    stacks: tuple[SeatAmount, ...]
    payouts: tuple[SeatAmount, ...]
    rake: int


HandEvent = (
    HandStarted
    | ForcedBetPosted
    | HoleCardsDealt
    | Folded
    | Checked
    | Called
    | BetPlaced
    | AllInProtected
    | UncalledBetReturned
    | BoardDealt
    | ShowdownStarted
    | CardsShown
    | CardsMucked
    | PotAwarded
    | HandEnded
)


# The field types ``engine.codec`` decodes by, for the fields mypyc erases when it compiles this
# module (a compiled class's annotations keep ``tuple`` without its items). A test checks them
# against the annotations above.
CODEC_HINTS: Final[dict[str, dict[str, object]]] = {
    "HandStarted": {"seats": tuple[SeatSetup, ...], "deck": tuple[Card, ...]},
    "HoleCardsDealt": {"cards": tuple[Card, ...]},
    "BoardDealt": {"cards": tuple[Card, ...]},
    "ShowdownStarted": {"order": tuple[int, ...]},
    "CardsShown": {"cards": tuple[Card, ...]},
    "PotAwarded": {"eligible": tuple[int, ...], "winners": tuple[SeatAmount, ...]},
    "HandEnded": {"stacks": tuple[SeatAmount, ...], "payouts": tuple[SeatAmount, ...]},
}


# -- fast construction, for the engine's own hot paths ------------------------------------------
#
# A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` after a
# keyword call; a replay builds some thirty events per hand, and that was a tenth of its time.
# These builders make the very same objects (same class, fields, equality, hash, immutability:
# a test compares them with the dataclass constructors) by writing the fields directly. Only
# values the engine has already validated go through them.

_T = TypeVar("_T")

# Compiled by mypyc (``make install``) these classes are native: a builder writes the fields
# directly, which is what makes it cheap (mypy sees frozen fields, hence the ignores). Pure
# Python refuses such writes on a frozen dataclass, so there the fields are set through their
# slot descriptors (``_pure``). A compiled class has no ``__slots__`` at run time.
_NATIVE: Final = not hasattr(SeatAmount, "__slots__")
_SETTERS: Final[dict[type, tuple[Callable[[object, object], None], ...]]] = {
    cls: tuple(vars(cls)[f.name].__set__ for f in fields(cls))
    for cls in (
        SeatAmount,
        HandStarted,
        ForcedBetPosted,
        HoleCardsDealt,
        Folded,
        Checked,
        Called,
        BetPlaced,
        UncalledBetReturned,
        BoardDealt,
        ShowdownStarted,
        CardsShown,
        CardsMucked,
        PotAwarded,
        HandEnded,
    )
}


def _pure(cls: type[_T], *values: object) -> _T:
    obj = cls.__new__(cls)
    for setter, value in zip(_SETTERS[cls], values, strict=True):
        setter(obj, value)
    return obj


def seat_amount(seat: int, amount: int) -> SeatAmount:
    if not _NATIVE:
        return _pure(SeatAmount, seat, amount)
    e = SeatAmount.__new__(SeatAmount)
    e.seat = seat  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    return e


def hand_started(  # noqa: PLR0917 (positional: the point is a cheap call)
    hand_id: str,
    rules: Rules,
    button: int,
    seats: tuple[SeatSetup, ...],
    deck: tuple[Card, ...],
    commitment: str,
) -> HandStarted:
    if not _NATIVE:
        return _pure(HandStarted, hand_id, rules, button, seats, deck, commitment)
    e = HandStarted.__new__(HandStarted)
    e.hand_id = hand_id  # type: ignore[misc]
    e.rules = rules  # type: ignore[misc]
    e.button = button  # type: ignore[misc]
    e.seats = seats  # type: ignore[misc]
    e.deck = deck  # type: ignore[misc]
    e.commitment = commitment  # type: ignore[misc]
    return e


def forced_bet_posted(seat: int, kind: PostKind, amount: int, all_in: bool) -> ForcedBetPosted:
    if not _NATIVE:
        return _pure(ForcedBetPosted, seat, kind, amount, all_in)
    e = ForcedBetPosted.__new__(ForcedBetPosted)
    e.seat = seat  # type: ignore[misc]
    e.kind = kind  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.all_in = all_in  # type: ignore[misc]
    return e


def hole_cards_dealt(seat: int, cards: tuple[Card, ...]) -> HoleCardsDealt:
    if not _NATIVE:
        return _pure(HoleCardsDealt, seat, cards)
    e = HoleCardsDealt.__new__(HoleCardsDealt)
    e.seat = seat  # type: ignore[misc]
    e.cards = cards  # type: ignore[misc]
    return e


def folded(seat: int) -> Folded:
    if not _NATIVE:
        return _pure(Folded, seat)
    e = Folded.__new__(Folded)
    e.seat = seat  # type: ignore[misc]
    return e


def checked(seat: int) -> Checked:
    if not _NATIVE:
        return _pure(Checked, seat)
    e = Checked.__new__(Checked)
    e.seat = seat  # type: ignore[misc]
    return e


def called(seat: int, amount: int, all_in: bool) -> Called:
    if not _NATIVE:
        return _pure(Called, seat, amount, all_in)
    e = Called.__new__(Called)
    e.seat = seat  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.all_in = all_in  # type: ignore[misc]
    return e


def bet_placed(seat: int, to: int, amount: int, all_in: bool) -> BetPlaced:
    if not _NATIVE:
        return _pure(BetPlaced, seat, to, amount, all_in)
    e = BetPlaced.__new__(BetPlaced)
    e.seat = seat  # type: ignore[misc]
    e.to = to  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.all_in = all_in  # type: ignore[misc]
    return e


def uncalled_bet_returned(seat: int, amount: int) -> UncalledBetReturned:
    if not _NATIVE:
        return _pure(UncalledBetReturned, seat, amount)
    e = UncalledBetReturned.__new__(UncalledBetReturned)
    e.seat = seat  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    return e


def board_dealt(street: Street, cards: tuple[Card, ...]) -> BoardDealt:
    if not _NATIVE:
        return _pure(BoardDealt, street, cards)
    e = BoardDealt.__new__(BoardDealt)
    e.street = street  # type: ignore[misc]
    e.cards = cards  # type: ignore[misc]
    return e


def showdown_started(order: tuple[int, ...]) -> ShowdownStarted:
    if not _NATIVE:
        return _pure(ShowdownStarted, order)
    e = ShowdownStarted.__new__(ShowdownStarted)
    e.order = order  # type: ignore[misc]
    return e


def cards_shown(seat: int, cards: tuple[Card, ...], description: str) -> CardsShown:
    if not _NATIVE:
        return _pure(CardsShown, seat, cards, description)
    e = CardsShown.__new__(CardsShown)
    e.seat = seat  # type: ignore[misc]
    e.cards = cards  # type: ignore[misc]
    e.description = description  # type: ignore[misc]
    return e


def cards_mucked(seat: int) -> CardsMucked:
    if not _NATIVE:
        return _pure(CardsMucked, seat)
    e = CardsMucked.__new__(CardsMucked)
    e.seat = seat  # type: ignore[misc]
    return e


def pot_awarded(
    index: int, amount: int, rake: int, eligible: tuple[int, ...], winners: tuple[SeatAmount, ...]
) -> PotAwarded:
    if not _NATIVE:
        return _pure(PotAwarded, index, amount, rake, eligible, winners)
    e = PotAwarded.__new__(PotAwarded)
    e.index = index  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.rake = rake  # type: ignore[misc]
    e.eligible = eligible  # type: ignore[misc]
    e.winners = winners  # type: ignore[misc]
    return e


def hand_ended(
    hand_id: str, stacks: tuple[SeatAmount, ...], payouts: tuple[SeatAmount, ...], rake: int
) -> HandEnded:
    if not _NATIVE:
        return _pure(HandEnded, hand_id, stacks, payouts, rake)
    e = HandEnded.__new__(HandEnded)
    e.hand_id = hand_id  # type: ignore[misc]
    e.stacks = stacks  # type: ignore[misc]
    e.payouts = payouts  # type: ignore[misc]
    e.rake = rake  # type: ignore[misc]
    return e
