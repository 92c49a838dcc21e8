"""PHH (Poker Hand History, https://phh.readthedocs.io) as data: reader and writer.

A ``.phh`` text is one TOML document per hand; a ``.phhs`` text holds many, as tables ``[1]``,
``[2]``, ... The engine never opens files: callers (pokerctl) read the text and pass it here.

Amounts are exact. TOML floats are read as ``Decimal`` (never as binary floats), and every
amount of a hand (antes, blinds, bet sizes, stacks, winnings, rake and each ``cbr`` amount) is
multiplied by the hand's ``scale``, the smallest power of ten that makes all of them whole:
``221.20`` in a hand whose amounts have at most two decimals is ``22120`` with ``scale`` 100.
The writer prints whole amounts as integers and the others with exactly as many decimals as
the scale has zeros (all of them with decimals if none has a fraction), so
``load_phh(dump_phh(h)) == h`` for every hand, whatever its scale.

Actions are parsed into small frozen values (players are 0-based indices in PHH order, ``p1``
being index 0; an unknown card ``??`` is ``None``)::

    d dh p1 AsKd        DealHole(player=0, cards=(As, Kd))
    d db 7h8h9c         DealBoard(cards=(7h, 8h, 9c))
    p1 f | cc | pb      Fold(player=0) | CheckCall(player=0) | BringIn(player=0)
    p1 cbr 30           CompleteBetRaise(player=0, amount=30 * scale)  (raise TO, this street)
    p1 sd [cards]       StandPatDiscard(player=0, cards=(...))   (draw games; () = stand pat)
    p1 sm [cards|-]     ShowMuck(player=0, cards=(...))           (None = muck, () = "-": show all)
    # words             NoOperation(), a commentary line alone

Any action may end with ``# commentary``, kept in its ``comment`` field. Fields this module
does not model (venue, time, user ``_fields``, ...) are kept in ``extras`` in file order and
written back unchanged.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Final, TypeVar

from openpoker.engine.cards import Card, parse_card
from openpoker.engine.errors import EngineError, InvalidCard

# -- errors -------------------------------------------------------------------------------------


class InvalidPhh(EngineError):
    """Text that is not a valid hand history."""

    reason = "INVALID_PHH"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message, **fields)


class PhhSyntaxError(InvalidPhh):
    """The text is not TOML, or not shaped like a ``.phh``/``.phhs`` document."""

    reason = "PHH_SYNTAX"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"not a PHH document: {problem}", problem=problem)
        self.problem = problem


class PhhFieldError(InvalidPhh):
    """A field is missing, has the wrong type or length, or holds an inexact amount."""

    reason = "PHH_FIELD"

    def __init__(self, *, name: str, problem: str) -> None:
        super().__init__(f"PHH field {name!r}: {problem}", field=name, problem=problem)
        self.field = name
        self.problem = problem


class PhhActionError(InvalidPhh):
    """An action string that does not parse (``index`` is its 0-based place in ``actions``)."""

    reason = "PHH_ACTION"

    def __init__(self, *, index: int, text: str, problem: str) -> None:
        super().__init__(f"PHH action {index} {text!r}: {problem}", index=index, text=text, problem=problem)
        self.index = index
        self.text = text
        self.problem = problem


# -- actions ------------------------------------------------------------------------------------

Cards = tuple[Card | None, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DealHole:
    player: int
    cards: Cards
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DealBoard:
    cards: Cards
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Fold:
    player: int
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckCall:
    player: int
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteBetRaise:
    """Complete, bet or raise TO ``amount`` (minor units) on the current street."""

    player: int
    amount: int
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BringIn:
    player: int
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StandPatDiscard:
    player: int
    cards: Cards  # () = stand pat
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ShowMuck:
    """Show ``cards``; ``None`` mucks (``sm``), ``()`` shows every hole card dealt (``sm -``)."""

    player: int
    cards: Cards | None
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NoOperation:
    """A commentary-only line."""

    comment: str | None = None


Action = (
    DealHole
    | DealBoard
    | Fold
    | CheckCall
    | CompleteBetRaise
    | BringIn
    | StandPatDiscard
    | ShowMuck
    | NoOperation
)

# -- the hand -----------------------------------------------------------------------------------

TomlValue = object  # str | int | bool | Decimal | date/time | list | dict, as tomllib returns them


@dataclass(frozen=True, slots=True, kw_only=True)
class HandHistory:
    """One hand. Amounts are integers in minor units: file amount x ``scale``, exactly."""

    variant: str
    antes: tuple[int, ...]
    starting_stacks: tuple[int, ...]
    actions: tuple[Action, ...]
    blinds_or_straddles: tuple[int, ...] | None = None
    bring_in: int | None = None
    small_bet: int | None = None
    big_bet: int | None = None
    min_bet: int | None = None
    ante_trimming_status: bool | None = None
    players: tuple[str, ...] | None = None
    finishing_stacks: tuple[int, ...] | None = None
    winnings: tuple[int, ...] | None = None
    rake: int | None = None
    seats: tuple[int, ...] | None = None
    seat_count: int | None = None
    table: str | int | None = None
    hand: str | int | None = None
    scale: int = 1
    extras: tuple[tuple[str, TomlValue], ...] = field(default=())

    @property
    def player_count(self) -> int:
        return len(self.starting_stacks)

    def to_units(self, amount: int) -> int | Decimal:
        """An amount back in the file's units: an ``int`` when whole, else an exact ``Decimal``."""
        if amount % self.scale == 0:
            return amount // self.scale
        return Decimal(amount).scaleb(-_places(self.scale, "scale"))


# Variants of the PHH standard and their required fields (besides the ones every variant has).
_BLINDED_NL: Final = ("blinds_or_straddles", "min_bet")
_BLINDED_FL: Final = ("blinds_or_straddles", "small_bet", "big_bet")
_STUD: Final = ("bring_in", "small_bet", "big_bet")
VARIANT_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "FT": _BLINDED_FL,  # fixed-limit Texas hold'em
    "NT": _BLINDED_NL,  # no-limit Texas hold'em
    "NS": _BLINDED_NL,  # no-limit short-deck hold'em
    "PO": _BLINDED_NL,  # pot-limit Omaha hold'em
    "FO/8": _BLINDED_FL,
    "F7S": _STUD,
    "F7S/8": _STUD,
    "FR": _STUD,
    "N2L1D": _BLINDED_NL,
    "F2L3D": _BLINDED_FL,
    "FB": _BLINDED_FL,
}
_ALWAYS: Final = ("variant", "antes", "starting_stacks", "actions")

_AMOUNT_LISTS: Final = ("antes", "blinds_or_straddles", "starting_stacks", "finishing_stacks", "winnings")
_AMOUNTS: Final = ("bring_in", "small_bet", "big_bet", "min_bet", "rake")
_PER_PLAYER: Final = (*_AMOUNT_LISTS, "players", "seats")
# Field order of the writer: the standard's required fields, then the optional ones we model.
_ORDER: Final = (
    "variant", "ante_trimming_status", "antes", "blinds_or_straddles", "bring_in", "small_bet",
    "big_bet", "min_bet", "starting_stacks", "actions", "hand", "table", "seats", "seat_count",
    "players", "finishing_stacks", "winnings", "rake",
)  # fmt: skip
_MODELLED: Final = frozenset(_ORDER)


# -- reading ------------------------------------------------------------------------------------


def load_phh(text: str) -> HandHistory:
    """One hand from the text of a ``.phh`` file."""
    return hand_from_table(_toml(text))


def load_phhs(text: str) -> list[HandHistory]:
    """Every hand of a ``.phhs`` text, in file order; the first invalid hand raises."""
    hands = []
    for item in load_phhs_each(text):
        if isinstance(item, InvalidPhh):
            raise item
        hands.append(item)
    return hands


def load_phhs_each(text: str) -> list[HandHistory | InvalidPhh]:
    """Every hand of a ``.phhs`` text, each parsed or the error that rejects it.

    A text that is not TOML at all, or whose top level is not only tables, still raises.
    """
    tables: list[dict[str, TomlValue]] = []
    for key, value in _toml(text).items():
        if not isinstance(value, dict):
            raise PhhSyntaxError(problem=f"top-level key {key!r} is not a [table] of one hand")
        tables.append(value)
    out: list[HandHistory | InvalidPhh] = []
    for table in tables:
        try:
            out.append(hand_from_table(table))
        except InvalidPhh as error:
            out.append(error)
    return out


def _toml(text: str) -> dict[str, TomlValue]:
    try:
        # parse_float keeps decimal amounts exact; "inf"/"nan" arrive as Decimal too.
        return tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as error:
        raise PhhSyntaxError(problem=str(error)) from None


def hand_from_table(table: Mapping[str, TomlValue]) -> HandHistory:
    """One hand from an already parsed TOML table."""
    variant = table.get("variant")
    if not isinstance(variant, str) or not variant:
        raise PhhFieldError(name="variant", problem="missing or not a string")
    for name in (*_ALWAYS, *VARIANT_FIELDS.get(variant, ())):
        if name not in table:
            raise PhhFieldError(name=name, problem=f"required for variant {variant}")

    raw_actions = table["actions"]
    if not isinstance(raw_actions, list) or not all(isinstance(a, str) for a in raw_actions):
        raise PhhFieldError(name="actions", problem="must be a list of strings")
    split = [_split_action(a) for a in raw_actions]

    # One scale for the whole hand: enough decimals for its most precise amount.
    decimals: list[tuple[str, Decimal | int]] = []
    for name in _AMOUNT_LISTS:
        if name in table:
            decimals.extend((name, v) for v in _list(table, name))
    decimals.extend((name, _number(name, table[name])) for name in _AMOUNTS if name in table)
    cbr = [(i, _action_amount(i, raw_actions[i], words)) for i, (words, _) in enumerate(split)]
    decimals.extend(("actions", d) for _, d in cbr if d is not None)
    places = max((_decimal_places(name, d) for name, d in decimals), default=0)
    scale = 10**places

    def amount(name: str, value: Decimal | int) -> int:
        return _scaled(name, value, places)

    def amounts(name: str) -> tuple[int, ...] | None:
        return tuple(amount(name, v) for v in _list(table, name)) if name in table else None

    def single(name: str) -> int | None:
        return amount(name, _number(name, table[name])) if name in table else None

    actions = tuple(
        _action(i, raw_actions[i], words, comment, None if d is None else amount("actions", d))
        for (i, d), (words, comment) in zip(cbr, split, strict=True)
    )
    antes = amounts("antes")
    stacks = amounts("starting_stacks")
    assert antes is not None  # required above
    assert stacks is not None
    hh = HandHistory(
        variant=variant,
        antes=antes,
        starting_stacks=stacks,
        actions=actions,
        blinds_or_straddles=amounts("blinds_or_straddles"),
        bring_in=single("bring_in"),
        small_bet=single("small_bet"),
        big_bet=single("big_bet"),
        min_bet=single("min_bet"),
        ante_trimming_status=_typed(table, "ante_trimming_status", bool),
        players=_str_list(table, "players"),
        finishing_stacks=amounts("finishing_stacks"),
        winnings=amounts("winnings"),
        rake=single("rake"),
        seats=_int_list(table, "seats"),
        seat_count=_typed(table, "seat_count", int),
        table=_str_or_int(table, "table"),
        hand=_str_or_int(table, "hand"),
        scale=scale,
        extras=tuple((k, v) for k, v in table.items() if k not in _MODELLED),
    )
    _check_shape(hh)
    return hh


def _check_shape(hh: HandHistory) -> None:
    n = hh.player_count
    if n < 1:
        raise PhhFieldError(name="starting_stacks", problem="no players")
    for name in _PER_PLAYER:
        value = getattr(hh, name)
        if value is not None and len(value) != n:
            raise PhhFieldError(name=name, problem=f"has {len(value)} entries for {n} players")
    for index, action in enumerate(hh.actions):
        player = getattr(action, "player", 0)
        if not 0 <= player < n:
            raise PhhActionError(
                index=index, text=dump_action(action, hh.scale), problem=f"no player p{player + 1} of {n}"
            )


def _list(table: Mapping[str, TomlValue], name: str) -> list[Decimal | int]:
    value = table[name]
    if not isinstance(value, list):
        raise PhhFieldError(name=name, problem="must be a list of numbers")
    return [_number(name, v) for v in value]


def _number(name: str, value: TomlValue) -> Decimal | int:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise PhhFieldError(name=name, problem=f"{value!r} is not a number")
    if isinstance(value, Decimal) and not value.is_finite():
        raise PhhFieldError(
            name=name, problem=f"{value} is not a finite amount (unknown stacks are not replayable)"
        )
    return value


def _decimal_places(name: str, value: Decimal | int) -> int:
    if isinstance(value, int):
        return 0
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # finite, checked in _number
    if exponent < -12:
        raise PhhFieldError(name=name, problem=f"{value} has more than 12 decimals")
    return max(0, -exponent)


def _scaled(name: str, value: Decimal | int, places: int) -> int:
    if isinstance(value, int):
        factor: int = 10**places
        return value * factor
    scaled = value.scaleb(places)
    whole: int = int(scaled)
    if whole != scaled:  # cannot happen with places from _decimal_places; kept as a guard
        raise PhhFieldError(name=name, problem=f"{value} is not a multiple of 1/10^{places}")
    return whole


def _typed(table: Mapping[str, TomlValue], name: str, kind: type[_T]) -> _T | None:
    if name not in table:
        return None
    value = table[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise PhhFieldError(name=name, problem=f"{value!r} is not a {kind.__name__}")
    return value


def _str_or_int(table: Mapping[str, TomlValue], name: str) -> str | int | None:
    value = table.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PhhFieldError(name=name, problem=f"{value!r} is not a string or integer")
    return value


def _str_list(table: Mapping[str, TomlValue], name: str) -> tuple[str, ...] | None:
    value = table.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PhhFieldError(name=name, problem="must be a list of strings")
    return tuple(value)


def _int_list(table: Mapping[str, TomlValue], name: str) -> tuple[int, ...] | None:
    value = table.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise PhhFieldError(name=name, problem="must be a list of integers")
    return tuple(value)


# -- action strings -----------------------------------------------------------------------------

_T = TypeVar("_T")
_PLAYER: Final = re.compile(r"p([1-9][0-9]*)")


def _split_action(text: str) -> tuple[list[str], str | None]:
    body, hash_, comment = text.partition("#")
    return body.split(), (comment.strip() if hash_ else None)


def _action_amount(index: int, text: str, words: list[str]) -> Decimal | int | None:
    if len(words) != 3 or words[1] != "cbr":
        return None
    raw = words[2].replace(",", "")  # "9,999.99", as pokerkit accepts
    try:
        value = int(raw) if raw.lstrip("-").isdigit() else Decimal(raw)
    except InvalidOperation:
        raise PhhActionError(index=index, text=text, problem=f"{words[2]!r} is not an amount") from None
    if isinstance(value, Decimal) and not value.is_finite():
        raise PhhActionError(index=index, text=text, problem=f"{words[2]!r} is not a finite amount")
    _decimal_places("actions", value)
    return value


def _action(index: int, text: str, words: list[str], comment: str | None, amount: int | None) -> Action:
    def player(token: str) -> int:
        m = _PLAYER.fullmatch(token)
        if m is None:
            raise PhhActionError(index=index, text=text, problem=f"{token!r} is not a player such as p1")
        return int(m.group(1)) - 1

    def cards(token: str) -> Cards:
        if len(token) % 2:
            raise PhhActionError(index=index, text=text, problem=f"{token!r} is not a run of cards")
        try:
            return tuple(
                None if token[i : i + 2] == "??" else parse_card(token[i : i + 2])
                for i in range(0, len(token), 2)
            )
        except InvalidCard as error:
            raise PhhActionError(index=index, text=text, problem=error.message) from None

    match words:
        case []:
            return NoOperation(comment=comment)
        case ["d", "dh", who, dealt]:
            return DealHole(player=player(who), cards=cards(dealt), comment=comment)
        case ["d", "db", dealt]:
            return DealBoard(cards=cards(dealt), comment=comment)
        case [who, "f"]:
            return Fold(player=player(who), comment=comment)
        case [who, "cc"]:
            return CheckCall(player=player(who), comment=comment)
        case [who, "cbr", _]:
            assert amount is not None
            return CompleteBetRaise(player=player(who), amount=amount, comment=comment)
        case [who, "pb"]:
            return BringIn(player=player(who), comment=comment)
        case [who, "sd"]:
            return StandPatDiscard(player=player(who), cards=(), comment=comment)
        case [who, "sd", discarded]:
            return StandPatDiscard(player=player(who), cards=cards(discarded), comment=comment)
        case [who, "sm"]:
            return ShowMuck(player=player(who), cards=None, comment=comment)
        case [who, "sm", "-"]:
            return ShowMuck(player=player(who), cards=(), comment=comment)
        case [who, "sm", shown]:
            return ShowMuck(player=player(who), cards=cards(shown), comment=comment)
    raise PhhActionError(index=index, text=text, problem="not a PHH action")


# -- writing ------------------------------------------------------------------------------------


def dump_phh(hh: HandHistory) -> str:
    """The text of a ``.phh`` file for ``hh`` (``load_phh`` reads it back equal)."""
    places = _places(hh.scale, "scale")
    # Whole amounts are written as integers, as the rooms' files do (pokerkit splits an
    # integer pot by integer division but a decimal one exactly, so this keeps its replay of
    # our text equal to its replay of theirs). Only when no amount of the hand has a fraction
    # are they all written with the scale's decimals, or the scale would not come back.
    fractional = any(v % hh.scale for v in _all_amounts(hh))
    whole_as_int = fractional or places == 0

    def amount(v: int) -> str:
        return _amount_text(v, places, whole_as_int=whole_as_int)

    lines = []
    for name in _ORDER:
        value = getattr(hh, name)
        if value is None:
            continue
        if name in _AMOUNTS:
            text = amount(value)
        elif name in _AMOUNT_LISTS:
            text = "[" + ", ".join(amount(v) for v in value) + "]"
        elif name == "actions":
            text = _toml_value([dump_action(a, hh.scale, whole_as_int=whole_as_int) for a in value])
        else:
            text = _toml_value(list(value) if isinstance(value, tuple) else value)
        lines.append(f"{name} = {text}")
    for name, value in hh.extras:
        if name in _MODELLED:
            raise PhhFieldError(name=name, problem="modelled fields cannot also be extras")
        lines.append(f"{_toml_key(name)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def dump_phhs(hands: Sequence[HandHistory]) -> str:
    """The text of a ``.phhs`` file: the hands as tables ``[1]``, ``[2]``, ..."""
    return "\n".join(f"[{i}]\n{dump_phh(hh)}" for i, hh in enumerate(hands, start=1))


def dump_action(action: Action, scale: int = 1, *, whole_as_int: bool = True) -> str:
    """One action in PHH notation; ``scale`` turns a raise-to amount back into file units."""
    match action:
        case DealHole(player=p, cards=cs):
            text = f"d dh p{p + 1} {_cards_text(cs)}"
        case DealBoard(cards=cs):
            text = f"d db {_cards_text(cs)}"
        case Fold(player=p):
            text = f"p{p + 1} f"
        case CheckCall(player=p):
            text = f"p{p + 1} cc"
        case CompleteBetRaise(player=p, amount=a):
            text = f"p{p + 1} cbr {_amount_text(a, _places(scale, 'scale'), whole_as_int=whole_as_int)}"
        case BringIn(player=p):
            text = f"p{p + 1} pb"
        case StandPatDiscard(player=p, cards=cs):
            text = f"p{p + 1} sd {_cards_text(cs)}".rstrip()
        case ShowMuck(player=p, cards=None):
            text = f"p{p + 1} sm"
        case ShowMuck(player=p, cards=()):
            text = f"p{p + 1} sm -"
        case ShowMuck(player=p, cards=cs):
            text = f"p{p + 1} sm {_cards_text(cs)}"
        case NoOperation():
            text = ""
    if action.comment is not None:
        text = f"{text} # {action.comment}".lstrip()
    return text


def _cards_text(cards: Cards | None) -> str:
    return "".join("??" if c is None else str(c) for c in cards or ())


def _places(scale: int, name: str) -> int:
    places = len(str(scale)) - 1
    if scale < 1 or scale != 10**places:
        raise PhhFieldError(name=name, problem=f"{scale} is not a power of ten")
    return places


def _amount_text(value: int, places: int, *, whole_as_int: bool) -> str:
    if places == 0 or (whole_as_int and value % 10**places == 0):
        return str(value // 10**places)
    return f"{Decimal(value).scaleb(-places):.{places}f}"


def _all_amounts(hh: HandHistory) -> list[int]:
    found = [a.amount for a in hh.actions if isinstance(a, CompleteBetRaise)]
    for name in _AMOUNT_LISTS:
        found.extend(getattr(hh, name) or ())
    found.extend(v for v in (getattr(hh, name) for name in _AMOUNTS) if v is not None)
    return found


_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's, except that TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: TomlValue) -> str:
    """A TOML literal for what tomllib returns."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        text = str(value).replace("Infinity", "inf").replace("NaN", "nan")
        # A float literal needs a "." or an exponent, or TOML reads it back as an integer.
        return text if any(ch in text for ch in ".Eein") else text + ".0"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    isoformat = getattr(value, "isoformat", None)  # date, time, datetime: TOML's own notation
    if callable(isoformat):
        return str(isoformat())
    raise PhhFieldError(name="extras", problem=f"cannot write {value!r} as TOML")
