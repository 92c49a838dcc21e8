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
from typing import Final

from openpoker.engine.cards import Card
from openpoker.engine.hand_setup import PostKind, SeatSetup
from openpoker.engine.rules import Rules


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

# Compiled by mypyc (``make install``) these classes are native: a builder writes the fields
# directly, which is what makes it cheap (mypy sees frozen fields, hence the ignores). Pure
# Python refuses such writes on a frozen dataclass, so there the builder sets the slots through
# their descriptors. A compiled class has no ``__slots__`` at run time.
_NATIVE: Final = not hasattr(SeatAmount, "__slots__")

_new = object.__new__


def _slot(cls: type, name: str) -> Callable[[object, object], None]:
    setter: Callable[[object, object], None] = cls.__dict__[name].__set__
    return setter


def _slots_of(cls: type) -> tuple[Callable[[object, object], None], ...]:
    return tuple(_slot(cls, f.name) for f in fields(cls))


_SA_SEAT, _SA_AMOUNT = _slots_of(SeatAmount)
_HS_HAND_ID, _HS_RULES, _HS_BUTTON, _HS_SEATS, _HS_DECK, _HS_COMMITMENT = _slots_of(HandStarted)
_FB_SEAT, _FB_KIND, _FB_AMOUNT, _FB_ALL_IN = _slots_of(ForcedBetPosted)
(_HD_SEAT, _HD_CARDS) = _slots_of(HoleCardsDealt)
(_FO_SEAT,) = _slots_of(Folded)
(_CH_SEAT,) = _slots_of(Checked)
_CA_SEAT, _CA_AMOUNT, _CA_ALL_IN = _slots_of(Called)
_BP_SEAT, _BP_TO, _BP_AMOUNT, _BP_ALL_IN = _slots_of(BetPlaced)
_UB_SEAT, _UB_AMOUNT = _slots_of(UncalledBetReturned)
_BD_STREET, _BD_CARDS = _slots_of(BoardDealt)
(_SS_ORDER,) = _slots_of(ShowdownStarted)
_CS_SEAT, _CS_CARDS, _CS_DESCRIPTION = _slots_of(CardsShown)
(_CM_SEAT,) = _slots_of(CardsMucked)
_PA_INDEX, _PA_AMOUNT, _PA_RAKE, _PA_ELIGIBLE, _PA_WINNERS = _slots_of(PotAwarded)
_HE_HAND_ID, _HE_STACKS, _HE_PAYOUTS, _HE_RAKE = _slots_of(HandEnded)


def seat_amount(seat: int, amount: int) -> SeatAmount:
    if not _NATIVE:
        p: SeatAmount = _new(SeatAmount)
        _SA_SEAT(p, seat)
        _SA_AMOUNT(p, amount)
        return p
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
        p: HandStarted = _new(HandStarted)
        _HS_HAND_ID(p, hand_id)
        _HS_RULES(p, rules)
        _HS_BUTTON(p, button)
        _HS_SEATS(p, seats)
        _HS_DECK(p, deck)
        _HS_COMMITMENT(p, commitment)
        return p
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
        p: ForcedBetPosted = _new(ForcedBetPosted)
        _FB_SEAT(p, seat)
        _FB_KIND(p, kind)
        _FB_AMOUNT(p, amount)
        _FB_ALL_IN(p, all_in)
        return p
    e = ForcedBetPosted.__new__(ForcedBetPosted)
    e.seat = seat  # type: ignore[misc]
    e.kind = kind  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.all_in = all_in  # type: ignore[misc]
    return e


def hole_cards_dealt(seat: int, cards: tuple[Card, ...]) -> HoleCardsDealt:
    if not _NATIVE:
        p: HoleCardsDealt = _new(HoleCardsDealt)
        _HD_SEAT(p, seat)
        _HD_CARDS(p, cards)
        return p
    e = HoleCardsDealt.__new__(HoleCardsDealt)
    e.seat = seat  # type: ignore[misc]
    e.cards = cards  # type: ignore[misc]
    return e


def folded(seat: int) -> Folded:
    if not _NATIVE:
        p: Folded = _new(Folded)
        _FO_SEAT(p, seat)
        return p
    e = Folded.__new__(Folded)
    e.seat = seat  # type: ignore[misc]
    return e


def checked(seat: int) -> Checked:
    if not _NATIVE:
        p: Checked = _new(Checked)
        _CH_SEAT(p, seat)
        return p
    e = Checked.__new__(Checked)
    e.seat = seat  # type: ignore[misc]
    return e


def called(seat: int, amount: int, all_in: bool) -> Called:
    if not _NATIVE:
        p: Called = _new(Called)
        _CA_SEAT(p, seat)
        _CA_AMOUNT(p, amount)
        _CA_ALL_IN(p, all_in)
        return p
    e = Called.__new__(Called)
    e.seat = seat  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.all_in = all_in  # type: ignore[misc]
    return e


def bet_placed(seat: int, to: int, amount: int, all_in: bool) -> BetPlaced:
    if not _NATIVE:
        p: BetPlaced = _new(BetPlaced)
        _BP_SEAT(p, seat)
        _BP_TO(p, to)
        _BP_AMOUNT(p, amount)
        _BP_ALL_IN(p, all_in)
        return p
    e = BetPlaced.__new__(BetPlaced)
    e.seat = seat  # type: ignore[misc]
    e.to = to  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    e.all_in = all_in  # type: ignore[misc]
    return e


def uncalled_bet_returned(seat: int, amount: int) -> UncalledBetReturned:
    if not _NATIVE:
        p: UncalledBetReturned = _new(UncalledBetReturned)
        _UB_SEAT(p, seat)
        _UB_AMOUNT(p, amount)
        return p
    e = UncalledBetReturned.__new__(UncalledBetReturned)
    e.seat = seat  # type: ignore[misc]
    e.amount = amount  # type: ignore[misc]
    return e


def board_dealt(street: Street, cards: tuple[Card, ...]) -> BoardDealt:
    if not _NATIVE:
        p: BoardDealt = _new(BoardDealt)
        _BD_STREET(p, street)
        _BD_CARDS(p, cards)
        return p
    e = BoardDealt.__new__(BoardDealt)
    e.street = street  # type: ignore[misc]
    e.cards = cards  # type: ignore[misc]
    return e


def showdown_started(order: tuple[int, ...]) -> ShowdownStarted:
    if not _NATIVE:
        p: ShowdownStarted = _new(ShowdownStarted)
        _SS_ORDER(p, order)
        return p
    e = ShowdownStarted.__new__(ShowdownStarted)
    e.order = order  # type: ignore[misc]
    return e


def cards_shown(seat: int, cards: tuple[Card, ...], description: str) -> CardsShown:
    if not _NATIVE:
        p: CardsShown = _new(CardsShown)
        _CS_SEAT(p, seat)
        _CS_CARDS(p, cards)
        _CS_DESCRIPTION(p, description)
        return p
    e = CardsShown.__new__(CardsShown)
    e.seat = seat  # type: ignore[misc]
    e.cards = cards  # type: ignore[misc]
    e.description = description  # type: ignore[misc]
    return e


def cards_mucked(seat: int) -> CardsMucked:
    if not _NATIVE:
        p: CardsMucked = _new(CardsMucked)
        _CM_SEAT(p, seat)
        return p
    e = CardsMucked.__new__(CardsMucked)
    e.seat = seat  # type: ignore[misc]
    return e


def pot_awarded(
    index: int, amount: int, rake: int, eligible: tuple[int, ...], winners: tuple[SeatAmount, ...]
) -> PotAwarded:
    if not _NATIVE:
        p: PotAwarded = _new(PotAwarded)
        _PA_INDEX(p, index)
        _PA_AMOUNT(p, amount)
        _PA_RAKE(p, rake)
        _PA_ELIGIBLE(p, eligible)
        _PA_WINNERS(p, winners)
        return p
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
        p: HandEnded = _new(HandEnded)
        _HE_HAND_ID(p, hand_id)
        _HE_STACKS(p, stacks)
        _HE_PAYOUTS(p, payouts)
        _HE_RAKE(p, rake)
        return p
    e = HandEnded.__new__(HandEnded)
    e.hand_id = hand_id  # type: ignore[misc]
    e.stacks = stacks  # type: ignore[misc]
    e.payouts = payouts  # type: ignore[misc]
    e.rake = rake  # type: ignore[misc]
    return e
