"""LeaseKeeper.acquire against a key that expires at awkward moments (a scripted KV in memory).

On a real bucket these races depend on timing (CI once hit the first one): the key's TTL runs out
after JetStream refused the create and before nats-py's own read inside ``kv.create``, which then
raises ``KeyNotFoundError``; or before acquire's own read of the holder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from openpoker.eventstore.lease import LeaseHeld, LeaseKeeper


@dataclass
class ScriptedKv:
    """Each call takes the next scripted outcome: an exception to raise or a value to return."""

    creates: list[Any]
    gets: list[Any] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    @staticmethod
    def _next(script: list[Any]) -> Any:
        outcome = script.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def create(self, key: str, value: bytes) -> int:
        self.calls.append(f"create {key}")
        return int(self._next(self.creates))

    async def get(self, key: str) -> Any:
        self.calls.append(f"get {key}")
        return self._next(self.gets)


@dataclass
class Entry:
    value: bytes
    revision: int


def keeper(kv: ScriptedKv) -> LeaseKeeper:
    return LeaseKeeper(cast("KeyValue", kv), "part.1", owner="node-b", ttl=1.0)


async def test_a_key_expiring_inside_nats_py_create_is_created_again() -> None:
    kv = ScriptedKv(creates=[KeyNotFoundError(), 7])
    lease = keeper(kv)
    assert await lease.acquire() == 7
    assert lease.held
    assert kv.calls == ["create part.1", "create part.1"]


async def test_a_key_expiring_before_the_holder_is_read_is_created_again() -> None:
    kv = ScriptedKv(creates=[KeyWrongLastSequenceError(), 9], gets=[KeyNotFoundError()])
    assert await keeper(kv).acquire() == 9
    assert kv.calls == ["create part.1", "get part.1", "create part.1"]


async def test_a_live_holder_is_named() -> None:
    kv = ScriptedKv(creates=[KeyWrongLastSequenceError()], gets=[Entry(value=b"node-a", revision=3)])
    lease = keeper(kv)
    with pytest.raises(LeaseHeld) as held:
        await lease.acquire()
    assert (held.value.holder, held.value.revision) == ("node-a", 3)
    assert not lease.held


async def test_a_key_that_keeps_vanishing_is_reported_held_after_two_tries() -> None:
    kv = ScriptedKv(creates=[KeyNotFoundError(), KeyNotFoundError()])
    with pytest.raises(LeaseHeld):
        await keeper(kv).acquire()
    assert kv.calls == ["create part.1", "create part.1"]
