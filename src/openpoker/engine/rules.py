"""The rules a table or hand is played under, as one frozen value.

A ``Rules`` value is recorded in the table's first event (and in every hand's first event), so
a table is always replayed under the rules it was played with, even after the defaults change.
The fields follow ``shared/design/HOUSE_RULES.md``; two profiles exist from the start:

- ``SEEDS`` (default for tables): the seed documents' rules as decided in HOUSE_RULES.md.
- ``PHH``: hand-history semantics as pokerkit plays them, for replaying ``.phh`` files.

Persisted enum values are stable lower-case strings: never rename one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from openpoker.engine.errors import InvalidRules


class Game(StrEnum):
    HOLDEM = "holdem"
    OMAHA = "omaha"
    SIX_PLUS = "six_plus"


# Bound once: a member look-up on an Enum class is slow, and ``hole_cards`` is read per action.
_OMAHA = Game.OMAHA
_SIX_PLUS = Game.SIX_PLUS


class Structure(StrEnum):
    FIXED_LIMIT = "fixed_limit"
    POT_LIMIT = "pot_limit"
    NO_LIMIT = "no_limit"


class Profile(StrEnum):
    SEEDS = "seeds"
    PHH = "phh"


class SixPlusRanking(StrEnum):
    """Where three of a kind stands against a straight in the 36-card game."""

    TRIPS_BEAT_STRAIGHT = "trips_beat_straight"  # seed 002 (Six Plus Hold'em)
    STRAIGHT_BEATS_TRIPS = "straight_beats_trips"  # PHH variant NS, WSOP short deck, pokerkit


class FixedLimitShortAllIn(StrEnum):
    """How a fixed-limit all-in for less than a full bet is treated."""

    HALF_BET_RULE = "half_bet_rule"  # LAR 129: half a bet or more is a full bet and reopens
    FULL_RAISE_RULE = "full_raise_rule"  # phh/pokerkit: reopens only if a full bet or raise


class ShortBigBlindCall(StrEnum):
    """What later players must call pre-flop when the big blind is all-in for less."""

    FULL_BIG_BLIND = "full_big_blind"  # seed 000, LAR 150
    LARGEST_POSTED = "largest_posted"  # phh/pokerkit


class OddChips(StrEnum):
    """Who gets the chips left over when a pot splits unevenly."""

    FIRST_LEFT_OF_BUTTON = "first_left_of_button"  # every odd chip to the first winner clockwise


class ButtonRule(StrEnum):
    MOVING = "moving"  # seeds 000, 001, 004: next player sitting in
    DEAD = "dead"  # LAR 151: big blind advances one seat; SB/button may be dead


class RakeSplit(StrEnum):
    """How a hand's one rake is shared by its pots."""

    PROPORTIONAL = "proportional"  # HOUSE_RULES 2026-11-27: by pot size, leftover from the main pot
    MAIN_POT_FIRST = "main_pot_first"  # rules version 1: the main pot pays first, then side pots


# The house rules version a new table is created under (``Rules.version``; docs/rules.md):
# 1 = rake from the main pot first, not rounded to the chip unit; 2 = rake shared by the pots in
# proportion to their size and rounded down to the chip unit, small blind in whole currency units.
RULES_VERSION: Final = 2


def seed_small_blind(lower: int, currency_unit: int) -> int:
    """Seeds 000/001: half the lower stake, rounded down; on tables whose lower stake is more than
    one currency unit, rounded down to a whole unit ($5/$10 posts $2, $1/$2 posts $0.50)."""
    half = lower // 2
    if lower > currency_unit:
        half -= half % currency_unit
    if half <= 0:
        raise InvalidRules(
            field="stakes.small_blind",
            problem=f"half the lower stake {lower} rounds down to 0: set the small blind",
        )
    return half


@dataclass(frozen=True, slots=True, kw_only=True)
class Stakes:
    """Blind and bet sizes in integer minor units.

    Fixed limit: ``small_bet`` is the lower limit (big blind), ``big_bet`` the upper limit.
    No limit / pot limit: ``big_bet`` is unused (0) and ``small_bet`` is the big blind.
    """

    small_blind: int
    big_blind: int
    small_bet: int = 0
    big_bet: int = 0
    ante: int = 0
    straddle: int = 0  # 0 = no straddle; else the live UTG straddle amount (NL/PL only)

    @classmethod
    def fixed_limit(
        cls,
        lower: int,
        upper: int,
        *,
        ante: int = 0,
        currency_unit: int = 100,
        small_blind: int | None = None,
    ) -> Stakes:
        """Seeds 000/001: big blind = lower stake; the small blind as ``seed_small_blind`` gives
        unless set explicitly. ``currency_unit``: minor units per currency unit (100 cents)."""
        small = seed_small_blind(lower, currency_unit) if small_blind is None else small_blind
        return cls(small_blind=small, big_blind=lower, small_bet=lower, big_bet=upper, ante=ante)

    @classmethod
    def blinds(cls, small: int, big: int, *, ante: int = 0, straddle: int = 0) -> Stakes:
        return cls(small_blind=small, big_blind=big, small_bet=big, ante=ante, straddle=straddle)


@dataclass(frozen=True, slots=True, kw_only=True)
class RakeRules:
    """Rake in basis points with a cap per hand by players dealt in (HOUSE_RULES.md, Rake).

    ``caps`` maps "at least N players dealt in" to a cap in minor units: ``((2, 50), (5, 100))``
    means 2-4 players cap 50, 5 or more cap 100. An empty tuple means no cap.
    """

    basis_points: int = 0
    caps: tuple[tuple[int, int], ...] = ()
    no_flop_no_drop: bool = True
    # The rake is rounded down to a multiple of this: the table's chip unit, kept here so the
    # wallet, which sees only the rake rules, computes the same rake as the table.
    unit: int = 1
    split: RakeSplit = RakeSplit.PROPORTIONAL

    def cap_for(self, players_dealt_in: int) -> int | None:
        cap: int | None = None
        for min_players, amount in self.caps:
            if players_dealt_in >= min_players:
                cap = amount
        return cap


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeRules:
    """Decision clock in milliseconds (seeds 001, 004), and disconnection protection."""

    decision_ms: int = 10_000
    countdown_ms: int = 20_000
    reconnect_extra_ms: int = 20_000
    disconnect_protections_per_window: int = 2
    protection_window_ms: int = 24 * 60 * 60 * 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class BuyInRules:
    """Table-stakes buy-in limits in minor units (seeds 000, 001)."""

    minimum: int
    maximum: int | None  # None: no maximum (fixed limit)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """Everything the engine needs to know to play a table, recorded in its first event."""

    game: Game
    structure: Structure
    stakes: Stakes
    profile: Profile = Profile.SEEDS
    seats: int = 9
    rake: RakeRules = field(default_factory=RakeRules)
    time: TimeRules = field(default_factory=TimeRules)
    buy_in: BuyInRules | None = None  # None: the defaults of ``default_buy_in``
    button: ButtonRule = ButtonRule.MOVING
    six_plus_ranking: SixPlusRanking = SixPlusRanking.TRIPS_BEAT_STRAIGHT
    # Fixed limit: raises allowed after the opening bet; pre-flop the big blind is the bet.
    fixed_limit_raises_preflop: int = 3
    fixed_limit_raises_postflop: int = 3
    fixed_limit_short_all_in: FixedLimitShortAllIn = FixedLimitShortAllIn.HALF_BET_RULE
    short_big_blind_call: ShortBigBlindCall = ShortBigBlindCall.FULL_BIG_BLIND
    odd_chips: OddChips = OddChips.FIRST_LEFT_OF_BUTTON
    fold_when_check_free: bool = True  # seed 001: "Folding can be done at any stage"
    auto_muck: bool = True  # seed 000: losing hands may be mucked at showdown
    # phh ``ante_trimming_status``: antes are live chips of their own round (an ante nobody
    # matches is returned, and antes layer into side pots); otherwise antes are dead money.
    ante_trimming: bool = False
    # LAR 148: pots split down to the smallest chip in play; what cannot be split in whole
    # chips goes as odd chips. 1 = the minor unit. Replayed PHH files split in whole file units
    # (``scale`` minor units) as pokerkit does; a pot that is not a whole number of chip units
    # splits in minor units (pokerkit divides such decimal pots exactly).
    chip_unit: int = 1
    # Minor units per currency unit (100 cents to the dollar): the seed small blind is rounded
    # down to a whole currency unit above one unit of lower stake (``seed_small_blind``).
    currency_unit: int = 100
    # The house rules version the table was created under (``RULES_VERSION``).
    version: int = RULES_VERSION

    def __post_init__(self) -> None:
        s = self.stakes
        if min(s.small_blind, s.big_blind, s.small_bet, s.big_bet, s.ante, s.straddle) < 0:
            raise InvalidRules(field="stakes", problem="amounts must not be negative")
        if s.big_blind <= 0 and self.profile is Profile.SEEDS:
            raise InvalidRules(field="stakes.big_blind", problem="must be positive")
        if self.structure is Structure.FIXED_LIMIT and (s.small_bet <= 0 or s.big_bet < s.small_bet):
            raise InvalidRules(field="stakes", problem="fixed limit needs 0 < small_bet <= big_bet")
        if s.straddle and self.structure is Structure.FIXED_LIMIT:
            raise InvalidRules(field="stakes.straddle", problem="no straddle in limit (LAR 161)")
        if not 2 <= self.seats <= 10:
            raise InvalidRules(field="seats", problem=f"{self.seats} is not in 2..10")
        if self.chip_unit < 1:
            raise InvalidRules(field="chip_unit", problem="must be at least 1")
        if self.currency_unit < 1:
            raise InvalidRules(field="currency_unit", problem="must be at least 1")
        if not 1 <= self.version <= RULES_VERSION:
            raise InvalidRules(field="version", problem=f"{self.version} is not in 1..{RULES_VERSION}")
        rake = self.rake
        if not 0 <= rake.basis_points <= 750:
            raise InvalidRules(field="rake.basis_points", problem="must be 0..750 (seed 002)")
        if rake.unit < 1:
            raise InvalidRules(field="rake.unit", problem="must be at least 1")
        if rake.basis_points and rake.unit != self.chip_unit and self.profile is Profile.SEEDS:
            # HOUSE_RULES, Rake: rounded down to the table's chip unit.
            raise InvalidRules(field="rake.unit", problem=f"must be the chip_unit {self.chip_unit}")

    @property
    def deck_size(self) -> int:
        return 36 if self.game is _SIX_PLUS else 52

    @property
    def hole_cards(self) -> int:
        return 4 if self.game is _OMAHA else 2

    def default_buy_in(self) -> BuyInRules:
        """Seeds 000/001: fixed limit at least 10 x the lower stake; NL/PL 40 to 100 big blinds."""
        if self.buy_in is not None:
            return self.buy_in
        if self.structure is Structure.FIXED_LIMIT:
            return BuyInRules(minimum=10 * self.stakes.small_bet, maximum=None)
        return BuyInRules(minimum=40 * self.stakes.big_blind, maximum=100 * self.stakes.big_blind)


# The field types ``engine.codec`` decodes by, for the fields mypyc erases when it compiles this
# module (tuples lose their items, unions become ``type``). A test checks them against the
# annotations above.
CODEC_HINTS: Final[dict[str, dict[str, object]]] = {
    "RakeRules": {"caps": tuple[tuple[int, int], ...]},
    "BuyInRules": {"maximum": int | None},
    "Rules": {"buy_in": BuyInRules | None},
}

# What ``engine.codec`` gives a field a stored document lacks because it was written before the
# field existed, where that is not the field's default: a table recorded under rules version 1
# replays under version 1's rake.
CODEC_ABSENT: Final[dict[str, dict[str, object]]] = {
    "RakeRules": {"split": RakeSplit.MAIN_POT_FIRST},
    "Rules": {"version": 1},
}


def phh_rules(game: Game, structure: Structure, stakes: Stakes, *, seats: int = 9) -> Rules:
    """Rules with hand-history semantics (profile ``phh``), as pokerkit replays PHH files."""
    return Rules(
        game=game,
        structure=structure,
        stakes=stakes,
        profile=Profile.PHH,
        seats=seats,
        six_plus_ranking=SixPlusRanking.STRAIGHT_BEATS_TRIPS,
        fixed_limit_raises_preflop=4,
        fixed_limit_raises_postflop=3,
        fixed_limit_short_all_in=FixedLimitShortAllIn.FULL_RAISE_RULE,
        short_big_blind_call=ShortBigBlindCall.LARGEST_POSTED,
        rake=RakeRules(basis_points=0, no_flop_no_drop=False),
    )
