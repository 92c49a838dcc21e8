"""``shell.retry``: which statuses are faults, the capped back-off with full jitter, the bounds,
and the one request (so the one request id) sent on every try."""

from __future__ import annotations

import grpc
import pytest
from grpc import aio

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.shell.retry import TRANSIENT_CODES, Backoff, retry, retry_unary, transient


def failure(code: grpc.StatusCode) -> aio.AioRpcError:
    return aio.AioRpcError(
        code=code, initial_metadata=aio.Metadata(), trailing_metadata=aio.Metadata(), details="test"
    )


class FakeStub:
    """A unary method that fails with ``codes`` in turn, then answers; records every request."""

    def __init__(self, *codes: grpc.StatusCode) -> None:
        self.codes = list(codes)
        self.seen: list[str] = []
        self.timeouts: list[float] = []

    async def __call__(
        self,
        request: wpb.DepositRequest,
        *,
        timeout: float,  # noqa: ASYNC109 - a stub method's gRPC deadline
        metadata: object,
    ) -> str:
        self.seen.append(request.request_id)
        self.timeouts.append(timeout)
        if self.codes:
            raise failure(self.codes.pop(0))
        return "done"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize("code", sorted(TRANSIENT_CODES, key=str))
def test_faults_are_transient(code: grpc.StatusCode) -> None:
    assert transient(failure(code))


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
    ],
)
def test_answers_are_definite(code: grpc.StatusCode) -> None:
    assert not transient(failure(code))
    assert not transient(ValueError("not a call"))


def test_the_schedule_doubles_from_50_ms_to_a_cap_of_2_s() -> None:
    b = Backoff()
    assert [b.ceiling(n) for n in range(8)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]
    assert b.ceiling(10_000) == 2.0  # no overflow however long a fault lasts


def test_full_jitter_stays_within_zero_and_the_ceiling() -> None:
    b = Backoff(first=0.05, cap=2.0)
    assert b.delay(3, lambda: 0.0) == 0.0
    assert b.delay(3, lambda: 0.999999) == pytest.approx(0.4, rel=1e-5)
    assert all(0.0 <= b.delay(n) <= b.ceiling(n) for n in range(20) for _ in range(50))


async def test_a_call_failing_twice_then_answering_keeps_its_request_id() -> None:
    stub = FakeStub(grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE)
    clock = Clock()
    request = wpb.DepositRequest(request_id="rid-1", player="ann", amount=5)
    got = await retry_unary(
        stub, request, timeout=1.5, what="wallet.Deposit", sleep=clock.sleep, clock=clock, rand=lambda: 1.0
    )
    assert got == "done"
    assert stub.seen == ["rid-1", "rid-1", "rid-1"]
    assert stub.timeouts == [1.5, 1.5, 1.5]  # each try has its own deadline
    assert clock.slept == [0.05, 0.1]


async def test_an_answer_is_raised_at_once() -> None:
    stub = FakeStub(grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION)
    clock = Clock()
    request = wpb.DepositRequest(request_id="rid-2")
    with pytest.raises(grpc.RpcError) as caught:
        await retry_unary(stub, request, timeout=1, what="t", sleep=clock.sleep, clock=clock)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert stub.seen == ["rid-2", "rid-2"]


async def test_attempts_bound_the_tries() -> None:
    stub = FakeStub(*[grpc.StatusCode.DEADLINE_EXCEEDED] * 5)
    clock = Clock()
    with pytest.raises(grpc.RpcError) as caught:
        await retry_unary(
            stub, wpb.DepositRequest(), timeout=1, what="t", attempts=3, sleep=clock.sleep, clock=clock
        )
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert len(stub.seen) == 3
    assert len(clock.slept) == 2


async def test_within_bounds_the_time_and_no_wait_overshoots_it() -> None:
    stub = FakeStub(*[grpc.StatusCode.UNAVAILABLE] * 100)
    clock = Clock()
    with pytest.raises(grpc.RpcError):
        await retry_unary(
            stub,
            wpb.DepositRequest(),
            timeout=1,
            what="t",
            within=5.0,
            sleep=clock.sleep,
            clock=clock,
            rand=lambda: 1.0,
        )
    # 0.05 + 0.1 + 0.2 + 0.4 + 0.8 + 1.6 = 3.15; the next 2 s would end past 5 s.
    assert clock.now == pytest.approx(3.15)
    assert len(stub.seen) == 7


async def test_without_a_bound_it_outlasts_a_long_fault() -> None:
    stub = FakeStub(*[grpc.StatusCode.UNAVAILABLE] * 40)
    clock = Clock()

    async def once() -> str:
        return await stub(wpb.DepositRequest(request_id="r"), timeout=1, metadata=())

    assert await retry(once, what="t", sleep=clock.sleep, clock=clock, rand=lambda: 1.0) == "done"
    assert max(clock.slept) == 2.0
    assert set(stub.seen) == {"r"}
