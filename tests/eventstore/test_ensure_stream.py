"""ensure_stream on a cluster that cannot answer yet (a scripted JetStream API in memory).

CI hit both on a 3-node test cluster under load: creating an R3 stream timed out, and, before the
meta leader knew every peer, failed with "no suitable peers for placement" (10005).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import nats.errors
import pytest
from nats.js import JetStreamContext, api
from nats.js.errors import BadRequestError, NotFoundError, ServiceUnavailableError

from openpoker.eventstore.errors import StreamSettingsMismatch, StreamUnavailable
from openpoker.eventstore.streams import CREATE_ATTEMPTS, TABLE_EVENTS, ensure_stream


@dataclass
class ScriptedJs:
    """``stream_info`` and ``add_stream`` take the next scripted outcome: an exception to raise,
    or ``"created"`` for the info of a stream with the asked-for settings."""

    infos: list[Any]
    adds: list[Any] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    @staticmethod
    def _next(script: list[Any]) -> api.StreamInfo:
        outcome = script.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return api.StreamInfo(config=TABLE_EVENTS.config(), state=None)  # type: ignore[arg-type]

    async def stream_info(self, name: str) -> api.StreamInfo:
        self.calls.append("info")
        return self._next(self.infos)

    async def add_stream(self, config: api.StreamConfig) -> api.StreamInfo:
        self.calls.append("add")
        return self._next(self.adds)


def js(scripted: ScriptedJs) -> JetStreamContext:
    return cast("JetStreamContext", scripted)


async def test_a_create_that_timed_out_but_happened_is_checked_not_created_again() -> None:
    scripted = ScriptedJs(infos=[NotFoundError(), "created"], adds=[nats.errors.TimeoutError()])
    info = await ensure_stream(js(scripted), TABLE_EVENTS, pause=0)
    assert info.config.name == TABLE_EVENTS.name
    assert scripted.calls == ["info", "add", "info"]


@pytest.mark.parametrize(
    "not_yet",
    [
        BadRequestError(code=400, err_code=10005, description="no suitable peers for placement"),
        ServiceUnavailableError(code=503, description="JetStream system temporarily unavailable"),
    ],
)
async def test_a_cluster_not_ready_yet_is_asked_again(not_yet: Exception) -> None:
    scripted = ScriptedJs(infos=[NotFoundError(), NotFoundError()], adds=[not_yet, "created"])
    await ensure_stream(js(scripted), TABLE_EVENTS, pause=0)
    assert scripted.calls == ["info", "add", "info", "add"]


async def test_it_gives_up_after_a_few_attempts() -> None:
    scripted = ScriptedJs(
        infos=[NotFoundError()] * CREATE_ATTEMPTS, adds=[nats.errors.TimeoutError()] * CREATE_ATTEMPTS
    )
    with pytest.raises(StreamUnavailable) as refused:
        await ensure_stream(js(scripted), TABLE_EVENTS, pause=0)
    assert isinstance(refused.value.__cause__, nats.errors.TimeoutError)
    assert refused.value.reason == "STREAM_UNAVAILABLE"
    assert scripted.calls == ["info", "add"] * CREATE_ATTEMPTS


async def test_other_refusals_are_not_retried() -> None:
    wrong = BadRequestError(code=400, err_code=10058, description="stream name already in use")
    scripted = ScriptedJs(infos=[NotFoundError()], adds=[wrong])
    with pytest.raises(BadRequestError):
        await ensure_stream(js(scripted), TABLE_EVENTS, pause=0)
    assert scripted.calls == ["info", "add"]


async def test_a_mismatch_is_not_retried() -> None:
    other = TABLE_EVENTS.config()
    other.max_msg_size = 1

    class Mismatched(ScriptedJs):
        async def stream_info(self, name: str) -> api.StreamInfo:
            self.calls.append("info")
            return api.StreamInfo(config=other, state=None)  # type: ignore[arg-type]

    scripted = Mismatched(infos=[])
    with pytest.raises(StreamSettingsMismatch):
        await ensure_stream(js(scripted), TABLE_EVENTS, pause=0)
    assert scripted.calls == ["info"]
