"""The dealer's ``Caller`` (``services.dealer.clients``): a fault is tried again with the same
request, ``attempts`` times in all; what still fails, or is refused, becomes ``CallFailed``
with ``retryable`` telling a fault from an answer."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from grpc import aio

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.services.dealer.clients import CALLER, Caller
from openpoker.services.dealer.ports import CallFailed
from openpoker.shell.retry import Backoff

QUICK = Backoff(first=0.001, cap=0.002)


class Method:
    def __init__(self, *codes: grpc.StatusCode) -> None:
        self.codes = list(codes)
        self.calls: list[tuple[str, Any, Any]] = []

    async def __call__(self, request: wpb.SettleHandRequest, **options: Any) -> str:
        self.calls.append((request.request_id, options["timeout"], options["metadata"]))
        if self.codes:
            code = self.codes.pop(0)
            raise aio.AioRpcError(code, aio.Metadata(), aio.Metadata(), details="fake")
        return "settled"


def caller(attempts: int) -> Caller:
    return Caller(service="wallet", timeout=2.0, attempts=attempts, backoff=QUICK)


async def test_faults_are_tried_again_with_the_same_request() -> None:
    method = Method(grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    request = wpb.SettleHandRequest(request_id="t1:7:settle")
    assert await caller(3)("SettleHand", method, request) == "settled"
    assert method.calls == [("t1:7:settle", 2.0, CALLER)] * 3


async def test_a_fault_past_the_attempts_is_a_retryable_call_failed() -> None:
    method = Method(*[grpc.StatusCode.UNAVAILABLE] * 3)
    with pytest.raises(CallFailed) as caught:
        await caller(2)("SettleHand", method, wpb.SettleHandRequest(request_id="r"))
    assert (caught.value.code, caught.value.retryable) == ("UNAVAILABLE", True)
    assert len(method.calls) == 2


async def test_an_answer_is_not_tried_again() -> None:
    method = Method(grpc.StatusCode.FAILED_PRECONDITION)
    with pytest.raises(CallFailed) as caught:
        await caller(3)("SettleHand", method, wpb.SettleHandRequest(request_id="r"))
    assert (caught.value.code, caught.value.retryable) == ("FAILED_PRECONDITION", False)
    assert len(method.calls) == 1
