"""Hand values: Texas Hold'em, Omaha and the 36-card games (Six Plus, PHH ``NS``).

``evaluate(rules, hole, board)`` returns a ``HandValue``: totally ordered (higher beats lower,
equal values tie), with a ``category`` and a ``describe()`` for people.

Theory of operation
-------------------
Every value is one integer key::

    strength << 24 | category id << 20 | five ranks, four bits each, most significant first

``strength`` is the category's place in the ranking being played (it differs between the
standard, short-deck and Six Plus orders); the category id names the category whatever its
place; the ranks break ties inside a category (for straights only the top card counts). Keys
of one ranking therefore compare exactly as the hands do.

- Standard ranking (Hold'em: best five of up to seven cards; Omaha: exactly two hole cards
  and three board cards): phevaluator's C evaluator, the fastest correct one measured here
  (about 3.8 M seven-card and 2.1 M Omaha evaluations/s; eval7 1.3 M seven-card, no Omaha).
  Its result is a class number 1..7462 (1 best); a table built once maps each class to our
  key, by evaluating one representative hand of every class both ways.
- 36-card rankings (no library plays them): flush beats full house and A-6-7-8-9 is the
  lowest straight (and straight flush). Six Plus (seed 002) ranks three of a kind above a
  straight; PHH variant ``NS`` (WSOP, pokerkit) the other way round. Two tables per ranking,
  built once on first use: the best hand without a flush for every multiset of five to seven
  ranks (keyed by a base-5 sum, each rank appearing at most four times), and the best flush
  or straight flush for every set of ranks in one suit. Seven cards are then one table look-up
  plus one per suit holding five or more cards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import combinations, combinations_with_replacement
from typing import Final

from phevaluator import _pheval  # the package's public wrappers re-validate: 7x slower

from openpoker.engine.cards import SUIT_CHARS, Card
from openpoker.engine.errors import EngineError
from openpoker.engine.rules import Game, Rules, SixPlusRanking


class HandCategory(StrEnum):
    """Kinds of five-card hands. Persisted values: never rename."""

    HIGH_CARD = "high_card"
    PAIR = "pair"
    TWO_PAIR = "two_pair"
    THREE_OF_A_KIND = "three_of_a_kind"
    STRAIGHT = "straight"
    FLUSH = "flush"
    FULL_HOUSE = "full_house"
    FOUR_OF_A_KIND = "four_of_a_kind"
    STRAIGHT_FLUSH = "straight_flush"


_CATEGORIES: Final = tuple(HandCategory)
_CATEGORY_ID: Final = {c: i for i, c in enumerate(_CATEGORIES)}


class Ranking(StrEnum):
    """Which order of categories and which deck a hand is ranked under."""

    STANDARD = "standard"  # 52 cards: Hold'em and Omaha
    SHORT_DECK = "short_deck"  # 36 cards, straight beats three of a kind (PHH NS)
    SIX_PLUS = "six_plus"  # 36 cards, three of a kind beats straight (seed 002)


_C = HandCategory
_ORDERS: Final[dict[Ranking, tuple[HandCategory, ...]]] = {
    Ranking.STANDARD: (
        _C.HIGH_CARD, _C.PAIR, _C.TWO_PAIR, _C.THREE_OF_A_KIND, _C.STRAIGHT,
        _C.FLUSH, _C.FULL_HOUSE, _C.FOUR_OF_A_KIND, _C.STRAIGHT_FLUSH,
    ),
    Ranking.SHORT_DECK: (
        _C.HIGH_CARD, _C.PAIR, _C.TWO_PAIR, _C.THREE_OF_A_KIND, _C.STRAIGHT,
        _C.FULL_HOUSE, _C.FLUSH, _C.FOUR_OF_A_KIND, _C.STRAIGHT_FLUSH,
    ),
    Ranking.SIX_PLUS: (
        _C.HIGH_CARD, _C.PAIR, _C.TWO_PAIR, _C.STRAIGHT, _C.THREE_OF_A_KIND,
        _C.FULL_HOUSE, _C.FLUSH, _C.FOUR_OF_A_KIND, _C.STRAIGHT_FLUSH,
    ),
}  # fmt: skip

_STRENGTH: Final = {r: {c: i for i, c in enumerate(order)} for r, order in _ORDERS.items()}
_LOWEST_RANK: Final = {Ranking.STANDARD: 2, Ranking.SHORT_DECK: 6, Ranking.SIX_PLUS: 6}


class InvalidHand(EngineError):
    """Cards that cannot be ranked under the rules (wrong count, duplicates, not in the deck)."""

    reason = "INVALID_HAND"

    def __init__(self, *, problem: str, hole: str, board: str) -> None:
        super().__init__(f"cannot rank {hole} on {board or '(no board)'}: {problem}", problem=problem)
        self.problem = problem
        self.hole = hole
        self.board = board


@dataclass(frozen=True, slots=True, order=True)
class HandValue:
    """A ranked hand: compare values of the same ranking with ``<``, ``==`` and ``>``."""

    key: int

    @property
    def category(self) -> HandCategory:
        return _CATEGORIES[(self.key >> 20) & 0xF]

    @property
    def ranks(self) -> tuple[int, ...]:
        """Ranks that decide ties, most significant first (a straight: its top card only)."""
        packed = [(self.key >> shift) & 0xF for shift in (16, 12, 8, 4, 0)]
        return tuple(r for r in packed if r)

    def describe(self) -> str:
        """A phrase for people, such as ``two pair, aces and kings``."""
        cat, r = self.category, self.ranks
        match cat:
            case HandCategory.HIGH_CARD:
                return f"high card, {_NAMES[r[0]]}"
            case HandCategory.PAIR:
                return f"pair of {_PLURALS[r[0]]}"
            case HandCategory.TWO_PAIR:
                return f"two pair, {_PLURALS[r[0]]} and {_PLURALS[r[1]]}"
            case HandCategory.THREE_OF_A_KIND:
                return f"three of a kind, {_PLURALS[r[0]]}"
            case HandCategory.STRAIGHT:
                return f"straight, {_NAMES[r[0]]} high"
            case HandCategory.FLUSH:
                return f"flush, {_NAMES[r[0]]} high"
            case HandCategory.FULL_HOUSE:
                return f"full house, {_PLURALS[r[0]]} full of {_PLURALS[r[1]]}"
            case HandCategory.FOUR_OF_A_KIND:
                return f"four of a kind, {_PLURALS[r[0]]}"
            case HandCategory.STRAIGHT_FLUSH:
                return "royal flush" if r[0] == 14 else f"straight flush, {_NAMES[r[0]]} high"

    def __str__(self) -> str:
        return self.describe()


# Compiled by mypyc, ``HandValue`` is a native class whose generated ``__init__`` stays
# interpreted: ``_value`` writes the field directly (the ignore: mypy sees a frozen field). Pure
# Python refuses that on a frozen dataclass and calls the constructor. A compiled class has no
# ``__slots__`` at run time.
_NATIVE: Final = not hasattr(HandValue, "__slots__")


def _value(key: int) -> HandValue:
    if not _NATIVE:
        return HandValue(key)
    v = HandValue.__new__(HandValue)
    v.key = key  # type: ignore[misc]
    return v


_NAMES: Final = dict(
    zip(
        range(2, 15),
        (
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "jack",
            "queen",
            "king",
            "ace",
        ),
        strict=True,
    )
)
_PLURALS: Final = {r: ("sixes" if r == 6 else n + "s") for r, n in _NAMES.items()}


def ranking_for(rules: Rules) -> Ranking:
    if rules.game is not Game.SIX_PLUS:
        return Ranking.STANDARD
    if rules.six_plus_ranking is SixPlusRanking.STRAIGHT_BEATS_TRIPS:
        return Ranking.SHORT_DECK
    return Ranking.SIX_PLUS


def evaluate(rules: Rules, hole: Sequence[Card], board: Sequence[Card]) -> HandValue:
    """The value of ``hole`` on ``board`` under ``rules.game`` (and its Six Plus ranking).

    Hold'em and Six Plus use the best five of all the cards (five to seven); Omaha uses
    exactly two of the hole cards and three of the board cards (three to five on the board).
    """
    suit = _SUIT_ID
    # Inlined Card -> id (see _card_id): this function runs for every player at every showdown.
    ids = [((c.rank - 2) << 2) | suit[c.suit] for c in (*hole, *board)]
    n, game = len(ids), rules.game
    # Fast path for well-formed hands; anything else goes through _check for the exact reason.
    if 5 <= n <= len(hole) + 5 and len(set(ids)) == n and len(hole) == rules.hole_cards:
        if game is Game.HOLDEM:
            return _value(_standard_keys()[_PHE_BY_COUNT[n](*ids)])
        if game is Game.OMAHA and n >= 7:
            return _value(_omaha_key(ids[:4], ids[4:]))
        if game is Game.SIX_PLUS and min(ids) >= _SIX_ID:
            return _value(_short_deck_key(ranking_for(rules), ids))
    _check(rules, hole, board, ids)
    raise AssertionError("_check accepts only what the fast path handles")  # pragma: no cover


def evaluate_five(ranking: Ranking, cards: Sequence[Card]) -> HandValue:
    """The value of exactly these five cards (no choice), for tests and tools."""
    ids = [_card_id(c) for c in cards]
    if len(ids) != 5 or len(set(ids)) != 5:
        raise InvalidHand(problem="need five different cards", hole=_fmt(cards), board="")
    if ranking is not Ranking.STANDARD and min(ids) < _SIX_ID:
        raise InvalidHand(problem="cards 2 to 5 are not in the 36-card deck", hole=_fmt(cards), board="")
    if ranking is Ranking.STANDARD:
        return _value(_standard_keys()[_phe5(*ids)])
    return _value(_short_deck_key(ranking, ids))


# -- validation ---------------------------------------------------------------------------------


def _card_id(card: Card) -> int:
    # Same numbering as Card.index and as phevaluator: (rank - 2) * 4 + suit (c, d, h, s).
    return ((card.rank - 2) << 2) | _SUIT_ID[card.suit]


_SUIT_ID: Final = {s: i for i, s in enumerate(SUIT_CHARS)}
_SIX_ID: Final = (6 - 2) * 4  # the lowest card id of the 36-card deck (6c)


def _fmt(cards: Iterable[Card]) -> str:
    return "".join(str(c) for c in cards)


def _check(rules: Rules, hole: Sequence[Card], board: Sequence[Card], ids: list[int]) -> None:
    problem = ""
    if len(hole) != rules.hole_cards:
        problem = f"{rules.game} needs {rules.hole_cards} hole cards, got {len(hole)}"
    elif len(board) > 5:
        problem = f"at most 5 board cards, got {len(board)}"
    elif rules.game is Game.OMAHA and len(board) < 3:
        problem = f"omaha needs at least 3 board cards, got {len(board)}"
    elif len(ids) < 5:
        problem = f"need at least 5 cards, got {len(ids)}"
    elif len(set(ids)) != len(ids):
        problem = "a card appears twice"
    elif rules.game is Game.SIX_PLUS and min(ids) < _SIX_ID:
        problem = "cards 2 to 5 are not in the 36-card deck"
    if problem:
        raise InvalidHand(problem=problem, hole=_fmt(hole), board=_fmt(board))


# -- keys ---------------------------------------------------------------------------------------


def _key(ranking: Ranking, category: HandCategory, ranks: Sequence[int]) -> int:
    key = (_STRENGTH[ranking][category] << 24) | (_CATEGORY_ID[category] << 20)
    for shift, rank in zip((16, 12, 8, 4, 0), ranks, strict=False):
        key |= rank << shift
    return key


@cache
def _straights(ranking: Ranking) -> tuple[tuple[int, int], ...]:
    """(rank bit mask, top rank) of every straight, best first; the ace also plays low."""
    low = _LOWEST_RANK[ranking]
    found = [(sum(1 << r for r in range(top - 4, top + 1)), top) for top in range(14, low + 3, -1)]
    # The lowest straight: A-2-3-4-5 with 52 cards, A-6-7-8-9 with 36 (seed 002).
    found.append((sum(1 << r for r in range(low, low + 4)) | 1 << 14, low + 3))
    return tuple(found)


def _best_of_counts(ranking: Ranking, counts: dict[int, int]) -> int:
    """The best five-card hand without a flush from five or more cards with these ranks.

    Every category that can be formed contributes its best hand; the ranking's order then
    picks among them, so one function serves all three orders.
    """
    present = sorted(counts, reverse=True)
    mask = sum(1 << r for r in present)
    at_least = {n: [r for r in present if counts[r] >= n] for n in (2, 3, 4)}
    candidates: list[int] = []
    if at_least[4]:
        q = at_least[4][0]
        candidates.append(_key(ranking, _C.FOUR_OF_A_KIND, [q, *[r for r in present if r != q][:1]]))
    if at_least[3]:
        t = at_least[3][0]
        pairs = [r for r in at_least[2] if r != t]
        if pairs:
            candidates.append(_key(ranking, _C.FULL_HOUSE, [t, pairs[0]]))
        kickers = [r for r in present if r != t]
        if len(kickers) >= 2:
            candidates.append(_key(ranking, _C.THREE_OF_A_KIND, [t, *kickers[:2]]))
    for smask, top in _straights(ranking):
        if mask & smask == smask:
            candidates.append(_key(ranking, _C.STRAIGHT, [top]))
            break
    if len(at_least[2]) >= 2:
        hi, lo = at_least[2][:2]
        kickers = [r for r in present if r not in (hi, lo)]
        if kickers:
            candidates.append(_key(ranking, _C.TWO_PAIR, [hi, lo, kickers[0]]))
    if at_least[2]:
        p = at_least[2][0]
        kickers = [r for r in present if r != p]
        if len(kickers) >= 3:
            candidates.append(_key(ranking, _C.PAIR, [p, *kickers[:3]]))
    if len(present) >= 5:
        candidates.append(_key(ranking, _C.HIGH_CARD, present[:5]))
    return max(candidates)


def _best_flush(ranking: Ranking, mask: int) -> int:
    """The best flush or straight flush from five or more ranks of one suit."""
    for smask, top in _straights(ranking):
        if mask & smask == smask:
            return _key(ranking, _C.STRAIGHT_FLUSH, [top])
    ranks = [r for r in range(14, 1, -1) if mask >> r & 1]
    return _key(ranking, _C.FLUSH, ranks[:5])


# -- standard ranking through phevaluator -------------------------------------------------------

# phevaluator ships no type information: name what its C functions return.
_PheFn = Callable[..., int]
_phe5: Final[_PheFn] = _pheval.evaluate_5cards
_phe_omaha: Final[_PheFn] = _pheval.evaluate_omaha_cards  # (5 board, then 4 hole)
_PHE_BY_COUNT: Final[dict[int, _PheFn]] = {5: _phe5, 6: _pheval.evaluate_6cards, 7: _pheval.evaluate_7cards}


@cache
def _standard_keys() -> tuple[int, ...]:
    """Our key for each phevaluator class 1..7462 (index 0 unused)."""
    keys = [0] * 7463
    for ranks in combinations_with_replacement(range(14, 1, -1), 5):
        counts = {r: ranks.count(r) for r in ranks}
        if max(counts.values()) > 4:
            continue
        # One representative: the n-th copy of a rank gets the n-th suit, so no flush unless
        # all five ranks differ, in which case the last card changes suit.
        seen: dict[int, int] = {}
        ids = []
        for r in ranks:
            ids.append(((r - 2) << 2) | seen.get(r, 0))
            seen[r] = seen.get(r, 0) + 1
        if len(counts) == 5:
            ids[-1] |= 1
            flush_ids = [((r - 2) << 2) for r in ranks]
            keys[_phe5(*flush_ids)] = _best_flush(Ranking.STANDARD, _mask(ranks))
        keys[_phe5(*ids)] = _best_of_counts(Ranking.STANDARD, counts)
    return tuple(keys)


def _mask(ranks: Iterable[int]) -> int:
    return sum(1 << r for r in set(ranks))


def _omaha_key(hole: list[int], board: list[int]) -> int:
    keys = _standard_keys()
    if len(hole) == 4 and len(board) == 5:
        return keys[_phe_omaha(*board, *hole)]
    best = min(_phe5(*h, *b) for h in combinations(hole, 2) for b in combinations(board, 3))
    return keys[best]


# -- 36-card rankings ---------------------------------------------------------------------------

_BASE5: Final = tuple(5 ** (r - 6) if r >= 6 else 0 for r in range(15))


@cache
def _short_deck_tables(ranking: Ranking) -> tuple[dict[int, int], tuple[int, ...]]:
    """(best non-flush key by base-5 rank multiset, best flush key by rank mask)."""
    plain: dict[int, int] = {}
    for size in (5, 6, 7):
        for ranks in combinations_with_replacement(range(6, 15), size):
            counts = {r: ranks.count(r) for r in ranks}
            if max(counts.values()) <= 4:
                plain[sum(_BASE5[r] for r in ranks)] = _best_of_counts(ranking, counts)
    flush = [0] * (1 << 15)
    for size in (5, 6, 7):
        for ranks in combinations(range(6, 15), size):
            flush[_mask(ranks)] = _best_flush(ranking, _mask(ranks))
    return plain, tuple(flush)


_ID_BASE5: Final = tuple(_BASE5[(i >> 2) + 2] for i in range(52))
_ID_BIT: Final = tuple(1 << ((i >> 2) + 2) for i in range(52))


def _short_deck_key(ranking: Ranking, ids: list[int]) -> int:
    plain, flush = _short_deck_tables(ranking)
    best = plain[sum([_ID_BASE5[i] for i in ids])]
    suits = [i & 3 for i in ids]
    for suit in range(4):
        if suits.count(suit) >= 5:  # at most one suit can hold five of seven cards
            return max(best, flush[sum([_ID_BIT[i] for i in ids if i & 3 == suit])])
    return best
