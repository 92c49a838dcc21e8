"""Cards and decks in PHH notation (``As``, ``Td``, ``9h``).

A card is a frozen value with an integer rank (2..14, ace high) and a suit letter. The
canonical deck order (ranks 2..A, each in suits c, d, h, s) is what the RNG shuffles, so it
is part of the audit contract: changing it changes every golden deck.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from openpoker.engine.errors import InvalidCard, InvalidDeck
from openpoker.engine.rules import Rules

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"
_RANK_VALUE: Final = {ch: i + 2 for i, ch in enumerate(RANK_CHARS)}


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card. ``rank`` is 2..14 (14 = ace); ``suit`` is one of ``cdhs``."""

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if not 2 <= self.rank <= 14 or self.suit not in SUIT_CHARS or len(self.suit) != 1:
            raise InvalidCard(text=f"{self.rank}{self.suit}")

    def __str__(self) -> str:
        return RANK_CHARS[self.rank - 2] + self.suit

    @property
    def index(self) -> int:
        """Position 0..51 in the canonical 52-card order."""
        return (self.rank - 2) * 4 + SUIT_CHARS.index(self.suit)


def parse_card(text: str) -> Card:
    """Parse one card such as ``As`` or ``td`` (rank letters are case-insensitive)."""
    if len(text) != 2:
        raise InvalidCard(text=text)
    rank = _RANK_VALUE.get(text[0].upper())
    suit = text[1].lower()
    if rank is None or suit not in SUIT_CHARS:
        raise InvalidCard(text=text)
    return Card(rank, suit)


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse concatenated cards such as ``AsKd`` or ``AsKdQh`` (PHH style)."""
    if len(text) % 2:
        raise InvalidCard(text=text)
    return tuple(parse_card(text[i : i + 2]) for i in range(0, len(text), 2))


def format_cards(cards: Iterable[Card]) -> str:
    return "".join(str(c) for c in cards)


def _deck(min_rank: int) -> tuple[Card, ...]:
    return tuple(Card(r, s) for r in range(min_rank, 15) for s in SUIT_CHARS)


STANDARD_DECK: Final[tuple[Card, ...]] = _deck(2)
"""The 52-card deck in canonical order (2c 2d 2h 2s 3c ... As)."""

SHORT_DECK: Final[tuple[Card, ...]] = _deck(6)
"""The 36-card Six Plus deck (2 to 5 removed) in canonical order (6c ... As)."""


def deck_for_size(size: int) -> tuple[Card, ...]:
    if size == 52:
        return STANDARD_DECK
    if size == 36:
        return SHORT_DECK
    raise InvalidCard(text=f"deck of {size}")


def is_permutation_of(cards: Sequence[Card], deck: Sequence[Card]) -> bool:
    return len(cards) == len(deck) and sorted(cards) == sorted(deck)


_SUIT_INDEX: Final = {suit: k for k, suit in enumerate(SUIT_CHARS)}


def check_deck(rules: Rules, deck: Sequence[Card]) -> None:
    """Refuse (``InvalidDeck``) a deck that is not exactly the game's: the 36 cards from six up
    for Six Plus (seed 002), the 52 otherwise, each once. A hand checks its deck before the first
    card is dealt and the table service checks an opened deck with it, so both refuse the same.
    """
    size = rules.deck_size
    if len(deck) != size:
        raise InvalidDeck(game=rules.game.value, problem="size", size=len(deck))
    lowest = 2 if size == 52 else 6
    # A bit per card value (rank and suit): cheaper than a set of cards.
    seen = 0
    for c in deck:
        if c.rank < lowest:
            raise InvalidDeck(game=rules.game.value, problem="not_in_game", card=str(c), size=size)
        bit = 1 << (c.rank * 4 + _SUIT_INDEX[c.suit])
        if seen & bit:
            raise InvalidDeck(game=rules.game.value, problem="duplicate", card=str(c), size=size)
        seen |= bit
