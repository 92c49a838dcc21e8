"""The hand engine's vocabulary: the commands a player (or the dealer) sends and the events
(facts, past tense) a hand is made of.

Both are closed unions of frozen, slotted, keyword-only dataclasses, persisted by
``engine.codec``: never rename a class, a field or an enum value once stored. Chip amounts are
integers in minor units; bet amounts are *to* amounts (the player's total bet on the street),
never increments, except where a field says ``amount`` added.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

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
