"""How JetStream's conflict messages are read (10071 carries the actual sequence, 10164 none)."""

from __future__ import annotations

from openpoker.eventstore.appending import CONFLICT_CODES
from openpoker.eventstore.jetstream import _actual_sequence


def test_conflict_codes() -> None:
    assert frozenset({10071, 10164}) == CONFLICT_CODES


def test_actual_sequence_from_the_description() -> None:
    assert _actual_sequence("wrong last sequence: 12") == 12
    assert _actual_sequence("wrong last sequence") is None  # 10164, clustered in-flight check
    assert _actual_sequence(None) is None
    assert _actual_sequence("wrong last sequence: n/a") is None
