"""Lossless JSON-compatible encoding of engine values (events, commands, rules, setups).

Services persist engine events with this codec, so its output is a storage format: field names
are the dataclass field names, the class goes in ``"type"``, enums are stored as their values,
cards as two-character strings (``"As"``), tuples as lists. Decoding is driven by the field
annotations of the registered class, so the encoded form carries no Python-specific tags besides
the type name.

Theory of operation: ``encode`` walks a value and needs nothing but the value. ``decode`` reads
``"type"``, looks the class up in the registry, and converts each field from JSON by that field's
annotation (``int``, ``str``, ``bool``, ``X | None``, ``tuple[X, ...]``, ``tuple[X, Y]``, enums,
``Card``, nested dataclasses, and unions of registered dataclasses, which carry their own
``"type"``). Modules compiled by mypyc lose the item types of tuple and union annotations:
they list those fields' types in a module constant ``CODEC_HINTS``. A field a document lacks
takes its default, or, when the field was added with a default that differs from how values
were played before it existed, the old value a module lists in ``CODEC_ABSENT`` (so a table
recorded under older rules decodes to those rules). The registry is filled
with every dataclass of the engine modules named in ``_DEFAULT_MODULES`` on first use; other
modules call ``register``. Two classes with one name are refused, because the name is what is
stored.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Final, TypeAlias, Union

from openpoker.engine.cards import Card, parse_card
from openpoker.engine.errors import EngineError

JSON: TypeAlias = dict[str, Any]

# Engine modules whose dataclasses are encodable (events, commands, rules, setups, views). A
# module listed here that does not exist is skipped; one that fails to import raises.
_DEFAULT_MODULES: Final = (
    "openpoker.engine.rules",
    "openpoker.engine.hand_setup",
    "openpoker.engine.seating",
    "openpoker.engine.blinds",
    "openpoker.engine.hand",
    "openpoker.engine.hand_view",
    "openpoker.engine.hand_events",
    "openpoker.engine.betting",
    "openpoker.engine.table_events",
    "openpoker.engine.table",
    "openpoker.engine.table_queries",
)

_registry: dict[str, type[Any]] = {}
_hints: dict[type[Any], dict[str, Any]] = {}
_loaded: set[str] = set()  # default modules already registered


class CodecError(EngineError):
    """A value that cannot be encoded, or a document that does not decode to an engine value."""

    reason = "CODEC_ERROR"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"codec: {problem}", problem=problem)
        self.problem = problem


def register(*classes: type[Any]) -> None:
    """Make dataclasses encodable under their class name (idempotent for the same class)."""
    for cls in classes:
        if not dataclasses.is_dataclass(cls):
            raise CodecError(problem=f"{cls!r} is not a dataclass")
        known = _registry.get(cls.__name__)
        if known is not None and known is not cls:
            raise CodecError(problem=f"two classes named {cls.__name__}: {known!r} and {cls!r}")
        _registry[cls.__name__] = cls


def _load_defaults() -> None:
    if len(_loaded) == len(_DEFAULT_MODULES):
        return
    for name in _DEFAULT_MODULES:
        if name in _loaded:
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a listed module exists but is broken: say so
                raise
            _loaded.add(name)
            continue
        register_module(module)
        _loaded.add(name)  # only once registered: a failed import is retried, never half-done


def register_module(module: types.ModuleType) -> None:
    """Register every dataclass defined in ``module`` (not the ones it merely imports)."""
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and dataclasses.is_dataclass(value)
            and value.__module__ == module.__name__
        ):
            register(value)


def registered() -> dict[str, type[Any]]:
    """The registry (type name to class), defaults included."""
    _load_defaults()
    return dict(_registry)


def encode(obj: object) -> JSON:
    """Encode a registered dataclass instance as a JSON-compatible dict with its ``"type"``."""
    _load_defaults()
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise CodecError(problem=f"only dataclass instances are encoded, not {type(obj).__name__}")
    encoded = _encode_value(obj)
    assert isinstance(encoded, dict)
    return encoded


def decode(doc: Mapping[str, Any]) -> Any:
    """Rebuild the engine value ``encode`` produced."""
    _load_defaults()
    return _decode_dataclass(doc, None)


# Encoding decides per Python type, never per value (an enum class, a card, a sequence, a
# registered dataclass with its field names), so the decision is made once per type and kept
# in ``_encoders``: events are encoded on every append, and the generic walk
# (``dataclasses.fields`` and an ``isinstance`` chain for every value) was most of the cost.
# Plain JSON values skip even the lookup. An unregistered class gets no entry (it may be
# registered later) and raises.
_Encoder: TypeAlias = Callable[[Any], Any]
_PLAIN: Final = frozenset({int, str, bool, type(None)})
_encoders: dict[type[Any], _Encoder] = {}


def _encode_value(value: object) -> Any:
    cls = type(value)
    if cls in _PLAIN:
        return value
    encoder = _encoders.get(cls)
    if encoder is None:
        encoder = _encoders[cls] = _encoder_for(cls)
    return encoder(value)


def _enum_value(value: Any) -> Any:
    return value.value


def _same(value: Any) -> Any:
    return value


def _sequence(value: Any) -> Any:
    return [v if type(v) in _PLAIN else _encode_value(v) for v in value]


def _encoder_for(cls: type[Any]) -> _Encoder:
    if issubclass(cls, Enum):  # first: StrEnum values are also str
        return _enum_value
    if issubclass(cls, bool | int | str):
        return _same
    if issubclass(cls, Card):
        return str
    if issubclass(cls, tuple | list):
        return _sequence
    if dataclasses.is_dataclass(cls):
        if _registry.get(cls.__name__) is not cls:
            raise CodecError(problem=f"{cls.__module__}.{cls.__name__} is not registered")
        return _dataclass_encoder(cls.__name__, tuple(f.name for f in dataclasses.fields(cls)))
    raise CodecError(problem=f"cannot encode a {cls.__name__}")


def _dataclass_encoder(name: str, fields: tuple[str, ...]) -> _Encoder:
    def encode_dataclass(value: Any) -> Any:
        out: JSON = {"type": name}
        for field in fields:
            v = getattr(value, field)
            out[field] = v if type(v) in _PLAIN else _encode_value(v)
        return out

    return encode_dataclass


# Annotations a compiled (mypyc) class is left with where the source said more: ``tuple`` for
# ``tuple[X, ...]``, ``type`` for a union. Decoding by them would lose the item types.
_ERASED: Final = (tuple, type, object)


def _field_hints(cls: type[Any]) -> dict[str, Any]:
    """The field types of ``cls``: its annotations, with the module's ``CODEC_HINTS`` for the
    fields mypyc erases when it compiles the module (see ``engine.hand_events``)."""
    hints = _hints.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        module = importlib.import_module(cls.__module__)
        hints.update(getattr(module, "CODEC_HINTS", {}).get(cls.__name__, {}))
        erased = sorted(name for name, hint in hints.items() if hint in _ERASED)
        if erased:
            raise CodecError(problem=f"{cls.__name__} fields {erased} have no item types (CODEC_HINTS)")
        _hints[cls] = hints
    return hints


# Decoding is planned once per field type too (``_decoders``, ``_plans``): a field's hint says
# how to read its value, so ``typing.get_origin``/``get_args`` and ``dataclasses.fields`` run
# once per type, not for every value of every event (the dealer decodes every envelope of every
# table, and that walk was most of its cost). The checks and their errors are the same.
_Decoder: TypeAlias = Callable[[Any], Any]
_decoders: dict[Any, _Decoder] = {}
# class -> its fields as (name, decoder, required), and every key a document of it may hold
# class -> its fields as (name, decoder, when absent), and every key a document of it may hold;
# "when absent" is _REQUIRED, _DEFAULT or the value of ``CODEC_ABSENT``.
_Field: TypeAlias = tuple[str, _Decoder, object]
_plans: dict[type[Any], tuple[tuple[_Field, ...], frozenset[str]]] = {}
_REQUIRED: Final = object()
_DEFAULT: Final = object()


def _absent_values(cls: type[Any]) -> dict[str, object]:
    module = importlib.import_module(cls.__module__)
    absent: dict[str, object] = getattr(module, "CODEC_ABSENT", {}).get(cls.__name__, {})
    return absent


def _when_absent(f: dataclasses.Field[Any]) -> object:
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
        return _REQUIRED
    return _DEFAULT


def _plan(cls: type[Any]) -> tuple[tuple[_Field, ...], frozenset[str]]:
    plan = _plans.get(cls)
    if plan is None:
        hints = _field_hints(cls)
        absent = _absent_values(cls)
        unknown = set(absent) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise CodecError(problem=f"{cls.__name__} CODEC_ABSENT names no fields {sorted(unknown)}")
        fields = tuple(
            (f.name, _decoder_for(hints[f.name]), absent.get(f.name, _when_absent(f)))
            for f in dataclasses.fields(cls)
        )
        plan = _plans[cls] = (fields, frozenset(name for name, _, _ in fields) | {"type"})
    return plan


def _decode_dataclass(doc: object, expected: type[Any] | None) -> Any:
    if not isinstance(doc, Mapping):
        raise CodecError(problem=f"expected an object, got {type(doc).__name__}")
    name = doc.get("type")
    cls = _registry.get(name) if isinstance(name, str) else expected
    if cls is None:
        raise CodecError(problem=f"unknown type {name!r}")
    if expected is not None and name is not None and not issubclass(cls, expected):
        raise CodecError(problem=f"{name} where a {expected.__name__} was expected")
    fields, names = _plan(cls)
    kwargs: dict[str, Any] = {}
    for field_name, decode_field, when_absent in fields:
        if field_name in doc:
            kwargs[field_name] = decode_field(doc[field_name])
        elif when_absent is _REQUIRED:
            raise CodecError(problem=f"{cls.__name__}.{field_name} is missing")
        elif when_absent is not _DEFAULT:
            kwargs[field_name] = when_absent
    if any(key not in names for key in doc):
        unknown = set(doc) - names
        raise CodecError(problem=f"{cls.__name__} has no fields {sorted(unknown)}")
    try:
        return cls(**kwargs)
    except EngineError:
        raise
    except (TypeError, ValueError) as exc:
        raise CodecError(problem=f"{cls.__name__}: {exc}") from exc


def _decode_value(value: Any, hint: Any) -> Any:
    return _decoder_for(hint)(value)


def _decoder_for(hint: Any) -> _Decoder:
    decoder = _decoders.get(hint)
    if decoder is None:
        decoder = _decoders[hint] = _build_decoder(hint)
    return decoder


def _identity(value: Any) -> Any:
    return value


def _build_decoder(hint: Any) -> _Decoder:
    """How to read a value of type ``hint`` (see ``_decoders``)."""
    if hint is Any:
        return _identity
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        options = typing.get_args(hint)
        return lambda value: _decode_union(value, options)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder_for(args[0])

            def variadic(value: Any) -> Any:
                if not isinstance(value, list):
                    raise CodecError(problem=f"expected a list, got {type(value).__name__}")
                return tuple([item(v) for v in value])

            return variadic
        items = tuple(_decoder_for(a) for a in args)

        def fixed(value: Any) -> Any:
            if not isinstance(value, list):
                raise CodecError(problem=f"expected a list, got {type(value).__name__}")
            if len(items) != len(value):
                raise CodecError(problem=f"expected {len(items)} items, got {len(value)}")
            return tuple([d(v) for d, v in zip(items, value, strict=True)])

        return fixed
    if origin is typing.Literal:
        allowed = typing.get_args(hint)

        def literal(value: Any) -> Any:
            if value not in allowed:
                raise CodecError(problem=f"{value!r} is not one of {allowed}")
            return value

        return literal
    if isinstance(hint, type):
        return _build_type_decoder(hint)
    return _no_decoder(hint)


def _build_type_decoder(hint: type[Any]) -> _Decoder:
    if hint is Card:
        return _decode_card
    if issubclass(hint, Enum):
        enum: type[Enum] = hint

        def member(value: Any) -> Any:
            try:
                return enum(value)
            except ValueError as exc:
                raise CodecError(problem=f"{value!r} is not a {enum.__name__}") from exc

        return member
    if hint is bool:
        return _decode_bool
    if hint is int:
        return _decode_int
    if hint is str:
        return _decode_str
    if dataclasses.is_dataclass(hint):
        cls: type[Any] = hint
        return lambda value: _decode_dataclass(value, cls)
    if hint is type(None):
        return _decode_none
    return _no_decoder(hint)


def _no_decoder(hint: Any) -> _Decoder:
    def refuse(value: Any) -> Any:
        raise CodecError(problem=f"no decoder for {hint!r}")

    return refuse


def _decode_card(value: Any) -> Any:
    if not isinstance(value, str):
        raise CodecError(problem=f"a card is a string, not {value!r}")
    return parse_card(value)


def _decode_bool(value: Any) -> Any:
    if not isinstance(value, bool):
        raise CodecError(problem=f"expected a bool, got {value!r}")
    return value


def _decode_int(value: Any) -> Any:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CodecError(problem=f"expected an int, got {value!r}")
    return value


def _decode_str(value: Any) -> Any:
    if not isinstance(value, str):
        raise CodecError(problem=f"expected a string, got {value!r}")
    return value


def _decode_none(value: Any) -> Any:
    if value is not None:
        raise CodecError(problem=f"expected null, got {value!r}")
    return None


def _decode_union(value: Any, options: tuple[Any, ...]) -> Any:
    if value is None:
        if type(None) in options:
            return None
        raise CodecError(problem="null where a value is required")
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        cls = _registry.get(value["type"])
        if cls is None:
            raise CodecError(problem=f"unknown type {value['type']!r}")
        return _decode_dataclass(value, None)
    errors: list[str] = []
    for option in options:
        if option is type(None):
            continue
        try:
            return _decode_value(value, option)
        except CodecError as exc:
            errors.append(exc.problem)
    raise CodecError(problem=f"{value!r} matches no option: {'; '.join(errors)}")
