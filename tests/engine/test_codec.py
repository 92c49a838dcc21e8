"""engine.codec: every registered engine value survives encode -> JSON text -> decode."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine import codec
from openpoker.engine.cards import STANDARD_DECK, Card, parse_card
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import BoardDealt, HandStarted, Street
from openpoker.engine.hand_setup import SeatSetup
from openpoker.engine.rules import (
    RULES_VERSION,
    ButtonRule,
    BuyInRules,
    Game,
    RakeRules,
    RakeSplit,
    Rules,
    Stakes,
    Structure,
    TimeRules,
    phh_rules,
)
from openpoker.engine.seating import Debt
from openpoker.engine.table_events import PlayerSeated, TableOpened
from openpoker.pokerctl.cmd_sim import play_session


@st.composite
def rules_values(draw: st.DrawFn) -> Rules:
    structure = draw(st.sampled_from(list(Structure)))
    # Lower stakes of 1 and of 101..199 cents have no seed small blind (it rounds down to 0).
    big = draw(st.integers(2, 10_000).filter(lambda b: b <= 100 or b >= 200))
    if structure is Structure.FIXED_LIMIT:
        stakes = Stakes.fixed_limit(big, big * draw(st.integers(1, 3)), ante=draw(st.integers(0, 5)))
    else:
        stakes = Stakes.blinds(
            big // 2, big, ante=draw(st.integers(0, 5)), straddle=draw(st.sampled_from([0, 2 * big]))
        )
    game = draw(st.sampled_from(list(Game)))
    if draw(st.booleans()):
        return phh_rules(game, structure, stakes, seats=draw(st.integers(2, 10)))
    minimum = draw(st.integers(1, 1_000))
    return Rules(
        game=game,
        structure=structure,
        stakes=stakes,
        seats=draw(st.integers(2, 10)),
        rake=RakeRules(
            basis_points=draw(st.integers(0, 750)),
            caps=tuple(draw(st.lists(st.tuples(st.integers(2, 10), st.integers(0, 500)), max_size=3))),
            no_flop_no_drop=draw(st.booleans()),
            split=draw(st.sampled_from(list(RakeSplit))),
        ),
        currency_unit=draw(st.sampled_from([1, 100, 1000])),
        version=draw(st.sampled_from([1, RULES_VERSION])),
        time=TimeRules(decision_ms=draw(st.integers(1, 60_000))),
        buy_in=draw(st.sampled_from([None, BuyInRules(minimum=minimum, maximum=None)])),
        button=draw(st.sampled_from(list(ButtonRule))),
    )


def _by_codec_hints(cls: type[Any]) -> st.SearchStrategy[Any]:
    # Values built from the field types the codec decodes by: a class compiled by mypyc keeps
    # annotations without their item types (``tuple``), which ``st.from_type`` cannot fill.
    return st.builds(cls, **{name: st.from_type(hint) for name, hint in codec._field_hints(cls).items()})


st.register_type_strategy(Rules, rules_values())
st.register_type_strategy(Card, st.sampled_from(STANDARD_DECK))
for _cls in codec.registered().values():
    if _cls is not Rules:
        st.register_type_strategy(_cls, _by_codec_hints(_cls))

REGISTERED = sorted(codec.registered().items())


def _round_trip(value: Any) -> Any:
    text = json.dumps(codec.encode(value))  # JSON-compatible: plain dicts, lists, str, int, bool
    return codec.decode(json.loads(text))


@pytest.mark.parametrize(("name", "cls"), REGISTERED, ids=[name for name, _ in REGISTERED])
@settings(max_examples=15)
@given(data=st.data())
def test_every_registered_type_round_trips(name: str, cls: type[Any], data: st.DataObject) -> None:
    value = data.draw(st.from_type(cls))
    assert _round_trip(value) == value


def test_cards_are_strings_and_enums_are_their_values() -> None:
    event = BoardDealt(street=Street.FLOP, cards=(parse_card("As"), parse_card("Td"), parse_card("2c")))
    assert codec.encode(event) == {"type": "BoardDealt", "street": "flop", "cards": ["As", "Td", "2c"]}
    seated = PlayerSeated(seat=3, player="ann", buy_in=100, wait_for_big_blind=True, debt=Debt.NEW_PLAYER)
    assert codec.encode(seated)["debt"] == "new_player"


def test_rules_nest_with_their_type_names() -> None:
    rules = Rules(game=Game.OMAHA, structure=Structure.POT_LIMIT, stakes=Stakes.blinds(5, 10))
    doc = codec.encode(TableOpened(table_id="t", rules=rules))
    assert doc["rules"]["type"] == "Rules"
    assert doc["rules"]["stakes"] == {
        "type": "Stakes",
        "small_blind": 5,
        "big_blind": 10,
        "small_bet": 10,
        "big_bet": 0,
        "ante": 0,
        "straddle": 0,
    }
    assert codec.decode(doc) == TableOpened(table_id="t", rules=rules)


def test_fields_with_defaults_may_be_absent_from_old_documents() -> None:
    """A field added later with a default decodes from a document written before it existed."""
    doc = codec.encode(Stakes.blinds(1, 2))
    del doc["straddle"]
    assert codec.decode(doc) == Stakes.blinds(1, 2)


def test_a_field_absent_from_an_old_document_takes_the_value_it_had_before_it_existed() -> None:
    """Rules written before rules version 2 lack ``version`` and the rake's ``split``: they
    decode to version 1 and the main-pot-first split they were played with (``CODEC_ABSENT``),
    while a new document keeps what it says."""
    rules = Rules(
        game=Game.HOLDEM,
        structure=Structure.NO_LIMIT,
        stakes=Stakes.blinds(5, 10),
        rake=RakeRules(basis_points=500, caps=((2, 100),)),
    )
    assert (rules.version, rules.rake.split) == (RULES_VERSION, RakeSplit.PROPORTIONAL)
    doc = codec.encode(rules)
    assert codec.decode(doc) == rules
    for key in ("version", "currency_unit"):
        del doc[key]
    for key in ("split", "unit"):
        del doc["rake"][key]
    old = codec.decode(doc)
    assert old.version == 1
    assert old.rake.split is RakeSplit.MAIN_POT_FIRST
    assert (old.currency_unit, old.rake.unit) == (100, 1)  # defaults that were the old behaviour
    assert old == replace(rules, version=1, rake=replace(rules.rake, split=RakeSplit.MAIN_POT_FIRST))


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ({"type": "NoSuchEvent"}, "unknown type"),
        ({"type": "Stakes", "small_blind": 1}, "missing"),
        ({"type": "Stakes", "small_blind": "1", "big_blind": 2}, "expected an int"),
        ({"type": "Stakes", "small_blind": True, "big_blind": 2}, "expected an int"),
        ({"type": "Stakes", "small_blind": 1, "big_blind": 2, "colour": 1}, "no fields"),
        ({"type": "BoardDealt", "street": "fifth", "cards": []}, "not a Street"),
        ({"type": "BoardDealt", "street": "flop", "cards": ["Zz"]}, "not a card"),
    ],
)
def test_malformed_documents_raise_a_typed_error(doc: dict[str, Any], problem: str) -> None:
    with pytest.raises(EngineError) as err:
        codec.decode(doc)
    assert problem in str(err.value)
    assert getattr(err.value, "reason", None) in ("CODEC_ERROR", "INVALID_CARD")


def test_unregistered_values_are_refused() -> None:
    with pytest.raises(codec.CodecError):
        codec.encode(42)

    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Stranger:
        x: int

    with pytest.raises(codec.CodecError):
        codec.encode(Stranger(x=1))


def test_two_classes_with_one_name_are_refused() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class HandStarted:  # same name as the engine's event
        x: int

    with pytest.raises(codec.CodecError):
        codec.register(HandStarted)


def test_hand_started_round_trips_with_the_deck() -> None:
    event = HandStarted(
        hand_id="h1",
        rules=Rules(game=Game.SIX_PLUS, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2)),
        button=3,
        seats=(SeatSetup(seat=1, player="a", stack=100), SeatSetup(seat=3, player="b", stack=90)),
        deck=STANDARD_DECK[16:],
        commitment="ab" * 32,
    )
    assert _round_trip(event) == event


def _source_hints(cls: type[Any]) -> dict[str, Any]:
    """The field types the source of ``cls`` declares, read from the .py file (a compiled
    class's own annotations lose the item types of tuples and unions)."""
    module = importlib.import_module(cls.__module__)
    # Beside the module's file (a compiled module's is the .so): engine events, and the events
    # other packages register with the codec (openpoker.tablelog.events) when a run imports them.
    assert module.__file__ is not None
    source = Path(module.__file__).with_name(cls.__module__.rsplit(".", 1)[-1] + ".py")
    tree = ast.parse(source.read_text())
    (node,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    return {
        stmt.target.id: eval(ast.unparse(stmt.annotation), vars(module))
        for stmt in node.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    }


@pytest.mark.parametrize("name", sorted(codec.registered()))
def test_decoding_follows_the_source_annotations(name: str) -> None:
    # Compiled or not, the codec decodes every field by the type its source declares:
    # ``CODEC_HINTS`` restores what mypyc erases, and must say what the annotation says.
    cls = codec.registered()[name]
    assert codec._field_hints(cls) == _source_hints(cls)


def _reference_document(value: object) -> Any:
    """The stored format spelled out value by value, independently of the codec's per-type
    encoders: what every payload in every log was written as."""
    if isinstance(value, Enum):
        return value.value
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, tuple | list):
        return [_reference_document(v) for v in value]
    assert dataclasses.is_dataclass(value)
    assert not isinstance(value, type)
    return {
        "type": type(value).__name__,
        **{f.name: _reference_document(getattr(value, f.name)) for f in dataclasses.fields(value)},
    }


@pytest.mark.parametrize("seed", range(6))
def test_every_event_of_played_sessions_encodes_to_the_stored_format(seed: int) -> None:
    session = play_session(seed, 12)  # random rules per seed: games, structures, antes, rake
    assert len({type(e) for e in session.events}) > 5
    for event in session.events:
        document = codec.encode(event)
        assert json.dumps(document) == json.dumps(_reference_document(event))
        assert codec.decode(json.loads(json.dumps(document))) == event


def test_values_the_codec_cannot_encode_raise_its_error_wherever_they_are() -> None:
    @dataclasses.dataclass(frozen=True)
    class Stranger:
        x: int

    with pytest.raises(codec.CodecError, match="not registered"):
        codec.encode(Stranger(x=1))
    with pytest.raises(codec.CodecError, match="not registered"):  # nested, after a good value
        codec.encode(TableOpened(table_id="t", rules=Stranger(x=1)))  # type: ignore[arg-type]
    rules = Rules(game=Game.SIX_PLUS, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2))
    with pytest.raises(codec.CodecError, match="cannot encode a float"):
        codec.encode(TableOpened(table_id=1.5, rules=rules))  # type: ignore[arg-type]
    with pytest.raises(codec.CodecError):
        codec.encode(7)
