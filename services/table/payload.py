"""Event payloads: ``engine.codec`` JSON, encoded with a per-class plan on the append path.

``engine.codec.encode`` walks each value generically (``dataclasses.fields`` and an
``isinstance`` chain per value); sealing an envelope spent most of its time there. ``encode``
here produces the same document, byte for byte: it makes the same decision per value, but once
per Python type (the decision depends only on the type), and reads each dataclass's field names
once. Anything it does not recognise (an unregistered class, a value the codec cannot encode)
goes to ``engine.codec.encode`` itself, which raises its ``CodecError``. Tests compare it with
the codec on every event of played sessions and on the codec's own values.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from enum import Enum
from typing import Any

from engine import codec
from engine.cards import Card

# One compact encoder for every event: ``json.dumps`` with ``separators`` builds a new encoder
# per call (same output: ``ensure_ascii``, key order as given).
_COMPACT = json.JSONEncoder(separators=(",", ":"), check_circular=False)  # documents are trees

_Encoder = Callable[[Any], Any]
_plans: dict[type[Any], _Encoder] = {}


class _Unplanned(Exception):
    """A value the plan does not cover: let ``engine.codec`` decide (and raise)."""


def _plain(value: Any) -> Any:
    return value


def _enum(value: Any) -> Any:
    return value.value


def _card(value: Any) -> Any:
    return str(value)


# Values stored as they are, by exact type (an enum's type is its class, never one of these):
# checked inline before any plan lookup, since most fields are plain numbers and strings.
_PLAIN = frozenset({int, str, bool, type(None)})


def _sequence(value: Any) -> Any:
    return [v if type(v) in _PLAIN else _value(v) for v in value]


def _dataclass_plan(cls: type[Any]) -> _Encoder:
    name = cls.__name__
    fields = tuple(f.name for f in dataclasses.fields(cls))

    def encode_dataclass(value: Any) -> Any:
        out: dict[str, Any] = {"type": name}
        for field in fields:
            v = getattr(value, field)
            out[field] = v if type(v) in _PLAIN else _value(v)
        return out

    return encode_dataclass


def _plan(cls: type[Any]) -> _Encoder:
    # The codec's order of tests (``engine.codec._encode_value``): enums first (a StrEnum is
    # also a str), then plain JSON values, cards, sequences, registered dataclasses.
    if issubclass(cls, Enum):
        return _enum
    if cls is type(None) or issubclass(cls, bool | int | str):
        return _plain
    if issubclass(cls, Card):
        return _card
    if issubclass(cls, tuple | list):
        return _sequence
    if dataclasses.is_dataclass(cls) and codec.registered().get(cls.__name__) is cls:
        return _dataclass_plan(cls)
    raise _Unplanned


def _value(value: Any) -> Any:
    cls = type(value)
    plan = _plans.get(cls)
    if plan is None:
        plan = _plans[cls] = _plan(cls)  # an unregistered class is not remembered: may register later
    return plan(value)


def encode(event: object) -> bytes:
    """``engine.codec.encode(event)`` as compact JSON bytes (the stored ``Event.payload``)."""
    try:
        document = _value(event) if not isinstance(event, type) else None
    except _Unplanned:
        document = None
    if not isinstance(document, dict):
        document = codec.encode(event)  # raises the codec's own error for what it cannot encode
    return _COMPACT.encode(document).encode()
