"""PHH codec: round trips over the public corpus, every action form, exact decimals, errors."""

from __future__ import annotations

import dataclasses
import tomllib
import warnings
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine.cards import STANDARD_DECK, parse_card
from openpoker.engine.phh import (
    Action,
    BringIn,
    CheckCall,
    CompleteBetRaise,
    DealBoard,
    DealHole,
    Fold,
    HandHistory,
    InvalidPhh,
    NoOperation,
    PhhActionError,
    PhhFieldError,
    PhhSyntaxError,
    ShowMuck,
    StandPatDiscard,
    dump_action,
    dump_phh,
    dump_phhs,
    load_phh,
    load_phhs,
    load_phhs_each,
)

# A verbatim copy of /work/shared/conformance/phh (uoftcprg/phh-dataset, MIT; see its README).
CORPUS = Path(__file__).parent / "data" / "phh"
CORPUS_FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".phh", ".phhs"))


def load_file(path: Path) -> list[HandHistory]:
    text = path.read_text(encoding="utf-8")
    return load_phhs(text) if path.suffix == ".phhs" else [load_phh(text)]


# Research note engine.md 3.2: 3-handed NLHE 1/2, two all-ins and a side pot.
EXAMPLE = """
# 3-handed NLHE 1/2, two all-ins and a side pot.
variant = "NT"
ante_trimming_status = true
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 50, 200]
actions = [
  "d dh p1 AsAd", "d dh p2 KsKd", "d dh p3 QsQh",
  "p3 cbr 6", "p1 cbr 100", "p2 cc", "p3 cc",
  "p1 sm AsAd", "p2 sm KsKd", "p3 sm QsQh",
  "d db 2c7d9h", "d db Tc", "d db 3h",
]
hand = 1
table = "t-42"
seats = [1, 2, 3]
seat_count = 6
players = ["alice", "bob", "carol"]
finishing_stacks = [250, 0, 100]
time_limit = 30
time_banks = [60, 60, 60]
_event_log_offset = 123456
"""


def test_corpus_is_complete() -> None:
    assert sum(len(load_file(p)) for p in CORPUS_FILES) == 1518  # as its README counts


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_round_trip_every_corpus_hand(path: Path) -> None:
    hands = load_file(path)
    for hh in hands:
        assert load_phh(dump_phh(hh)) == hh
    assert load_phhs(dump_phhs(hands)) == hands


def test_example_fields() -> None:
    hh = load_phh(EXAMPLE)
    assert hh.variant == "NT"
    assert hh.scale == 1
    assert hh.antes == (0, 0, 0)
    assert hh.blinds_or_straddles == (1, 2, 0)
    assert hh.min_bet == 2
    assert hh.starting_stacks == (100, 50, 200)
    assert hh.finishing_stacks == (250, 0, 100)
    assert hh.players == ("alice", "bob", "carol")
    assert hh.seats == (1, 2, 3)
    assert hh.seat_count == 6
    assert hh.table == "t-42"
    assert hh.hand == 1
    assert hh.ante_trimming_status is True
    assert dict(hh.extras) == {"time_limit": 30, "time_banks": [60, 60, 60], "_event_log_offset": 123456}
    assert hh.actions[:4] == (
        DealHole(player=0, cards=(parse_card("As"), parse_card("Ad"))),
        DealHole(player=1, cards=(parse_card("Ks"), parse_card("Kd"))),
        DealHole(player=2, cards=(parse_card("Qs"), parse_card("Qh"))),
        CompleteBetRaise(player=2, amount=6),
    )
    assert load_phh(dump_phh(hh)) == hh


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("d dh p1 AsKd", DealHole(player=0, cards=(parse_card("As"), parse_card("Kd")))),
        ("d dh p3 ????", DealHole(player=2, cards=(None, None))),
        ("d dh p2 As??", DealHole(player=1, cards=(parse_card("As"), None))),
        ("d db 7h8h9c", DealBoard(cards=(parse_card("7h"), parse_card("8h"), parse_card("9c")))),
        ("d db Tc", DealBoard(cards=(parse_card("Tc"),))),
        ("p1 f", Fold(player=0)),
        ("p2 cc", CheckCall(player=1)),
        ("p10 cbr 300", CompleteBetRaise(player=9, amount=300)),
        ("p1 pb", BringIn(player=0)),
        ("p1 sd", StandPatDiscard(player=0, cards=())),
        ("p1 sd 2c3c", StandPatDiscard(player=0, cards=(parse_card("2c"), parse_card("3c")))),
        ("p1 sm", ShowMuck(player=0, cards=None)),
        ("p1 sm -", ShowMuck(player=0, cards=())),
        ("p1 sm AsAd", ShowMuck(player=0, cards=(parse_card("As"), parse_card("Ad")))),
        ("p1 sm ????", ShowMuck(player=0, cards=(None, None))),
        ("p1 cc # snap call", CheckCall(player=0, comment="snap call")),
        ("# the players chat", NoOperation(comment="the players chat")),
    ],
)
def test_each_action_form_parses_and_writes_back(text: str, action: object) -> None:
    hh = load_phh(_hand(actions=[text], players=10))
    assert hh.actions == (action,)
    assert dump_action(hh.actions[0]) == text
    assert load_phh(dump_phh(hh)) == hh


def _hand(
    *,
    actions: list[str],
    players: int = 2,
    stacks: str | None = None,
    extra: str = "",
    variant: str = "NT",
) -> str:
    stacks = stacks or "[" + ", ".join(["200"] * players) + "]"
    zeros = "[" + ", ".join(["0"] * players) + "]"
    blinds = "[" + ", ".join(["1", "2", *["0"] * (players - 2)]) + "]"
    return (
        f'variant = "{variant}"\nantes = {zeros}\nblinds_or_straddles = {blinds}\nmin_bet = 2\n'
        f"starting_stacks = {stacks}\nactions = {actions!r}\n{extra}"
    ).replace("'", '"')


# -- exact decimals ---------------------------------------------------------------------------------


def test_decimal_amounts_become_exact_minor_units() -> None:
    hh = load_phh(
        'variant = "NT"\nantes = [0, 0]\nblinds_or_straddles = [0.05, 0.10]\nmin_bet = 0.1\n'
        'starting_stacks = [1889.85, 221.20]\nactions = ["p1 cbr 0.35"]\nfinishing_stacks = [0.3, 10]\n'
    )
    assert hh.scale == 100
    assert hh.blinds_or_straddles == (5, 10)
    assert hh.min_bet == 10
    assert hh.starting_stacks == (188985, 22120)
    assert hh.actions == (CompleteBetRaise(player=0, amount=35),)
    assert hh.finishing_stacks == (30, 1000)
    assert hh.to_units(188985) == Decimal("1889.85")
    assert hh.to_units(1000) == 10
    assert isinstance(hh.to_units(1000), int)
    assert load_phh(dump_phh(hh)) == hh


def test_scale_follows_the_most_precise_amount_even_in_an_action() -> None:
    hh = load_phh(_hand(actions=["p1 cbr 2.125"]))
    assert hh.scale == 1000
    assert hh.starting_stacks == (200_000, 200_000)
    assert hh.actions == (CompleteBetRaise(player=0, amount=2125),)


def test_trailing_zeros_keep_their_scale_through_a_round_trip() -> None:
    hh = load_phh(_hand(actions=[], stacks="[100.50, 20.00]"))
    assert hh.scale == 100
    assert hh.starting_stacks == (10050, 2000)
    again = load_phh(dump_phh(hh))
    assert again == hh
    assert again.scale == 100


def test_no_binary_float_rounding() -> None:
    # 0.1 + 0.2 is 0.30000000000000004 in binary floats; here it stays exact.
    hh = load_phh(_hand(actions=[], stacks="[0.1, 0.2]", extra="finishing_stacks = [0.30, 0]\n"))
    assert hh.starting_stacks[0] + hh.starting_stacks[1] == hh.finishing_stacks[0]  # type: ignore[index]


def test_commas_in_cbr_amounts_as_pokerkit_accepts() -> None:
    hh = load_phh(_hand(actions=["p1 cbr 1,000"], stacks="[5000, 5000]"))
    assert hh.actions == (CompleteBetRaise(player=0, amount=1000),)


# -- errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error", "needle"),
    [
        ("variant = ", PhhSyntaxError, "not a PHH document"),
        ('antes = [0, 0]\nstarting_stacks = [1, 1]\nactions = []\n', PhhFieldError, "'variant'"),
        ('variant = "NT"\nantes = [0, 0]\nstarting_stacks = [1, 1]\nactions = []\n', PhhFieldError,
         "required for variant NT"),
        (_hand(actions=[], stacks="[inf, 100]"), PhhFieldError, "not a finite amount"),
        (_hand(actions=[], stacks="[true, 100]"), PhhFieldError, "is not a number"),
        (_hand(actions=[], stacks='["100", 100]'), PhhFieldError, "is not a number"),
        (_hand(actions=[], stacks="[100, 100, 100]"), PhhFieldError, "'antes': has 2 entries for 3 players"),
        (_hand(actions=[], extra='players = ["a"]\n'), PhhFieldError, "'players'"),
        (_hand(actions=[], extra="seat_count = true\n"), PhhFieldError, "'seat_count'"),
        (_hand(actions=[], stacks="[0.0000000000001, 1]"), PhhFieldError, "more than 12 decimals"),
        (_hand(actions=["p1 raise 10"]), PhhActionError, "not a PHH action"),
        (_hand(actions=["x1 f"]), PhhActionError, "not a player"),
        (_hand(actions=["p0 f"]), PhhActionError, "not a player"),
        (_hand(actions=["p3 f"]), PhhActionError, "no player p3 of 2"),
        (_hand(actions=["d dh p1 AsK"]), PhhActionError, "not a run of cards"),
        (_hand(actions=["d dh p1 AsKx"]), PhhActionError, "not a card"),
        (_hand(actions=["p1 cbr ten"]), PhhActionError, "is not an amount"),
        (_hand(actions=["p1 cbr nan"]), PhhActionError, "not a finite amount"),
        ('variant = "NT"\nantes = [0]\nstarting_stacks = [1]\nactions = "p1 f"\nmin_bet = 1\n'
         'blinds_or_straddles = [0]\n', PhhFieldError, "list of strings"),
    ],
)  # fmt: skip
def test_malformed_input_raises_typed_errors(text: str, error: type[InvalidPhh], needle: str) -> None:
    with pytest.raises(error) as raised:
        load_phh(text)
    assert needle in str(raised.value)
    assert isinstance(raised.value, InvalidPhh)
    assert raised.value.reason in ("PHH_SYNTAX", "PHH_FIELD", "PHH_ACTION")


def test_action_error_names_index_and_text() -> None:
    with pytest.raises(PhhActionError) as raised:
        load_phh(_hand(actions=["p1 f", "p2 zz"]))
    assert raised.value.index == 1
    assert raised.value.text == "p2 zz"
    assert raised.value.fields["index"] == 1


def test_phhs_reports_each_bad_hand_and_keeps_the_others() -> None:
    good = _hand(actions=["p1 f"])
    bad = _hand(actions=["p9 f"])
    text = f"[1]\n{good}\n[2]\n{bad}\n[3]\n{good}\n"
    each = load_phhs_each(text)
    assert [type(x).__name__ for x in each] == ["HandHistory", "PhhActionError", "HandHistory"]
    with pytest.raises(PhhActionError):
        load_phhs(text)


def test_phhs_top_level_must_be_tables() -> None:
    with pytest.raises(PhhSyntaxError, match="not a \\[table\\]"):
        load_phhs('variant = "NT"\n')


def test_unknown_variant_keeps_parsing_with_common_fields() -> None:
    hh = load_phh('variant = "X9"\nantes = [0, 0]\nstarting_stacks = [5, 5]\nactions = ["p1 f"]\n')
    assert hh.variant == "X9"
    assert hh.actions == (Fold(player=0),)


def test_stud_variant_needs_bring_in() -> None:
    with pytest.raises(PhhFieldError, match="bring_in"):
        load_phh('variant = "F7S"\nantes = [1, 1]\nstarting_stacks = [5, 5]\nactions = []\n')


def test_writer_rejects_a_scale_that_is_not_a_power_of_ten() -> None:
    hh = load_phh(EXAMPLE)
    with pytest.raises(PhhFieldError, match="power of ten"):
        dump_phh(dataclasses.replace(hh, scale=3))


# -- property: any hand the model can hold survives dump and load -----------------------------------

_cards = st.lists(st.one_of(st.none(), st.sampled_from(STANDARD_DECK)), min_size=1, max_size=5).map(tuple)
_comment = st.one_of(st.none(), st.text(max_size=12).map(str.strip))
_amount = st.integers(min_value=-(10**12), max_value=10**12)
_toml_scalar = st.one_of(
    st.text(max_size=10),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-(10**9), max_value=10**9),
)
_toml_value = st.recursive(
    _toml_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=3),
    ),
    max_leaves=6,
)


@st.composite
def _actions(draw: st.DrawFn, players: int) -> tuple[Action, ...]:
    player = st.integers(min_value=0, max_value=players - 1)
    one = st.one_of(
        st.builds(DealHole, player=player, cards=_cards, comment=_comment),
        st.builds(DealBoard, cards=_cards, comment=_comment),
        st.builds(Fold, player=player, comment=_comment),
        st.builds(CheckCall, player=player, comment=_comment),
        st.builds(CompleteBetRaise, player=player, amount=_amount, comment=_comment),
        st.builds(BringIn, player=player, comment=_comment),
        st.builds(StandPatDiscard, player=player, cards=st.one_of(st.just(()), _cards), comment=_comment),
        st.builds(ShowMuck, player=player, cards=st.one_of(st.none(), st.just(()), _cards), comment=_comment),
        st.builds(NoOperation, comment=_comment),
    )
    return tuple(draw(st.lists(one, max_size=8)))


@st.composite
def _hands(draw: st.DrawFn) -> HandHistory:
    n = draw(st.integers(min_value=2, max_value=9))
    per_player = st.lists(_amount, min_size=n, max_size=n).map(tuple)
    maybe = st.one_of(st.none(), per_player)
    variant, blinds, fixed, stud = draw(
        st.sampled_from([("NT", True, False, False), ("FT", True, True, False), ("F7S", False, True, True),
                         ("ZZ", False, False, False)])
    )  # fmt: skip
    extras_keys = st.text(min_size=1, max_size=6).map(lambda k: "_" + k)
    return HandHistory(
        variant=variant,
        antes=draw(per_player),
        starting_stacks=draw(per_player),
        actions=draw(_actions(n)),
        blinds_or_straddles=draw(per_player) if blinds else None,
        bring_in=draw(_amount) if stud else None,
        small_bet=draw(_amount) if fixed else None,
        big_bet=draw(_amount) if fixed else None,
        min_bet=draw(_amount) if variant == "NT" else None,
        ante_trimming_status=draw(st.one_of(st.none(), st.booleans())),
        players=draw(st.one_of(st.none(), st.lists(st.text(max_size=8), min_size=n, max_size=n).map(tuple))),
        finishing_stacks=draw(maybe),
        winnings=draw(maybe),
        rake=draw(st.one_of(st.none(), _amount)),
        seats=draw(st.one_of(st.none(), st.lists(st.integers(1, 10), min_size=n, max_size=n).map(tuple))),
        seat_count=draw(st.one_of(st.none(), st.integers(2, 10))),
        table=draw(st.one_of(st.none(), st.text(max_size=8), st.integers(0, 10**6))),
        hand=draw(st.one_of(st.none(), st.text(max_size=8), st.integers(0, 10**6))),
        scale=draw(st.sampled_from([1, 10, 100, 1000])),
        extras=tuple(draw(st.dictionaries(extras_keys, _toml_value, max_size=4)).items()),
    )


@settings(max_examples=150)
@given(_hands())
def test_any_hand_round_trips(hh: HandHistory) -> None:
    # Amounts are written with exactly the scale's decimals, so even the scale comes back.
    assert load_phh(dump_phh(hh)) == hh


# -- other variants, and pokerkit reading what we write ---------------------------------------------

VARIANT_HANDS = {
    "FT": """variant = "FT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
small_bet = 2
big_bet = 4
starting_stacks = [60, 60, 60]
actions = ["d dh p1 AsAd", "d dh p2 KsKd", "d dh p3 7c2d", "p3 f", "p1 cbr 4", "p2 cbr 6", "p1 cc",
  "d db Jh8h3c", "p1 cbr 2", "p2 cc", "d db 9s", "p1 cbr 4", "p2 cc", "d db 4d", "p1 cc", "p2 cc",
  "p1 sm AsAd", "p2 sm"]
""",
    "NS": """variant = "NS"
antes = [3, 3, 3]
blinds_or_straddles = [0, 0, 5]
min_bet = 5
starting_stacks = [180.5, 240.25, 99.75]
actions = ["d dh p1 Ah6c", "d dh p2 TcTd", "d dh p3 KsQs", "p1 cbr 20.5", "p2 cc", "p3 f",
  "d db Th7d8s", "p1 cbr 40", "p2 cbr 216.75", "p1 cc", "p1 sm Ah6c", "p2 sm TcTd",
  "d db 9h", "d db Js"]
""",
    "PO": """variant = "PO"
antes = [0, 0]
blinds_or_straddles = [1, 2]  # heads-up: p1 is the big blind, p2 the button
min_bet = 2
starting_stacks = [150, 150]
actions = ["d dh p1 AsAcKdKh", "d dh p2 Th9h4d5c", "p2 cbr 6", "p1 cbr 18", "p2 cc",
  "d db AhQhJh", "p1 cbr 36", "p2 cbr 132", "p1 cc", "p1 sm AsAcKdKh", "p2 sm Th9h4d5c",
  "d db 2c", "d db 3d"]
""",
}


@pytest.mark.parametrize("variant", sorted(VARIANT_HANDS))
def test_variants_parse_and_pokerkit_reads_our_dump_alike(variant: str) -> None:
    text = VARIANT_HANDS[variant]
    hh = load_phh(text)
    assert hh.variant == variant
    assert len(hh.starting_stacks) == len(hh.antes)
    assert load_phh(dump_phh(hh)) == hh
    assert _pokerkit_final(dump_phh(hh)) == _pokerkit_final(text)


def test_short_deck_decimals_and_omaha_holes() -> None:
    ns, po = load_phh(VARIANT_HANDS["NS"]), load_phh(VARIANT_HANDS["PO"])
    assert ns.scale == 100
    assert ns.starting_stacks == (18050, 24025, 9975)
    assert ns.antes == (300, 300, 300)
    assert CompleteBetRaise(player=1, amount=21675) in ns.actions
    first = po.actions[0]
    assert isinstance(first, DealHole)
    assert len(first.cards) == 4
    ft = load_phh(VARIANT_HANDS["FT"])
    assert (ft.small_bet, ft.big_bet, ft.min_bet) == (2, 4, None)


def _pokerkit_final(text: str) -> list[Decimal]:
    from pokerkit import HandHistory as PkHandHistory

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The field 'time_zone_abbreviation'")
        state = None
        for state in PkHandHistory.loads(text):  # noqa: B007  (the last state is the result)
            pass
    assert state is not None
    assert not state.status  # the hand finished
    return [Decimal(str(s)) for s in state.stacks]


@pytest.mark.slow
def test_pokerkit_replays_our_dump_of_every_corpus_hand_alike() -> None:
    for path in CORPUS_FILES:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".phhs":
            originals = [_table_text(text, key) for key in _table_keys(text)]
        else:
            originals = [text]
        hands = load_file(path)
        assert len(hands) == len(originals)
        for original, hh in zip(originals, hands, strict=True):
            assert _pokerkit_final(dump_phh(hh)) == _pokerkit_final(original), (path.name, hh.hand)


def _table_keys(text: str) -> list[str]:
    return list(tomllib.loads(text))


def _table_text(text: str, key: str) -> str:
    # pokerkit reads one hand from a .phh text: cut the [key] table out of the .phhs text.
    start = text.index(f"[{key}]\n") + len(f"[{key}]\n")
    end = text.find("\n[", start)
    return text[start:] if end < 0 else text[start : end + 1]
