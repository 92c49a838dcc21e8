"""No hot loops: a table whose hands cannot open is retried with growing gaps, then paused by
the dealer itself (the log line, the metrics, GetDealerStatus), and an operator's resume lifts
the pause and the back-off."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from prometheus_client import REGISTRY
from structlog.testing import capture_logs

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from openpoker.services.dealer.app import DealerSettings
from openpoker.services.dealer.config import DealerConfig
from openpoker.services.dealer.handlers import DealerServicer
from openpoker.services.dealer.pausing import OpenFailures, OpenRetry
from openpoker.services.dealer.server import spec
from openpoker.shell.client import channel
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import start_server
from openpoker.tablelog import ids
from tests.helpers.waiting import until
from tests.services.dealer.fakes import failed
from tests.services.dealer.rig import SLOW, Rig, rules
from tests.services.dealer.test_handlers import Staff

T = "hot"
RETRY = OpenRetry(retry=0.02, retry_max=0.08, limit=5)
GAPS = (0.02, 0.04, 0.08, 0.08)  # the back-off after failures 1 to 4 (capped)
REFUSAL = "ESCROW_MISMATCH"  # a reason only these tests use: the metrics are process-wide


def sample(name: str, reason: str) -> float:
    return REGISTRY.get_sample_value(name, {"reason": reason}) or 0.0


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    r = Rig(DealerSettings(retry_delay=0.01, max_retry_delay=0.05, open_retry=RETRY))
    r.app.go_live()
    yield r
    await r.app.stop()


@pytest.fixture
async def stub(rig: Rig) -> AsyncIterator[Any]:
    config = ShellConfig.from_env(
        "dealer", {"POKER_INSECURE": "true", "POKER_DEALER_PORT": "0", "POKER_GRACE_SECONDS": "0.1"}
    )
    server = await start_server(config, [spec(DealerServicer(rig.app))])
    async with channel(server.address) as chan:
        yield Staff(pb_grpc.DealerServiceStub(chan))
    await server.stop()


async def test_refused_reservations_back_off_then_pause_the_table_until_resumed(rig: Rig, stub: Any) -> None:
    attempts: list[float] = []
    accept = rig.wallet.open_hand

    async def refuse(**kwargs: Any) -> bool:
        attempts.append(time.monotonic())
        raise failed("wallet", "OpenHand", REFUSAL)

    rig.wallet.open_hand = refuse  # type: ignore[method-assign]
    paused_before = sample("openpoker_dealer_tables_paused", REFUSAL)
    failures_before = sample("openpoker_dealer_hand_open_failures_total", REFUSAL)
    with capture_logs() as logs:
        rig.table.open(T, rules(time=SLOW))
        rig.seat(T, {0: "ann", 1: "bob"})
        await until(lambda: rig.app.paused_tables() == 1, what="the dealer pauses the table")
    # Five hands tried, each voided, each after a longer gap than the one before (up to the cap).
    assert len(attempts) == RETRY.limit
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert all(gap >= want for gap, want in zip(gaps, GAPS, strict=True)), gaps
    await until(lambda: rig.app.hands_voided == RETRY.limit, what="every failed hand voided")
    assert rig.wallet.reserved(T) == 0
    [line] = [e for e in logs if e["event"] == "dealer.table_paused"]
    assert (line["log_level"], line["table_id"], line["reason"], line["failures"]) == (
        "error",
        T,
        REFUSAL,
        RETRY.limit,
    )
    assert sample("openpoker_dealer_tables_paused", REFUSAL) == paused_before + 1
    assert sample("openpoker_dealer_hand_open_failures_total", REFUSAL) == failures_before + RETRY.limit

    status = await stub.GetDealerStatus(pb.GetDealerStatusRequest())
    assert status.paused_tables == 1
    [paused] = status.paused
    assert (paused.table, paused.paused_by, paused.reason, paused.failures) == (
        "tables/hot",
        pb.PAUSED_BY_DEALER,
        REFUSAL,
        RETRY.limit,
    )
    assert REFUSAL in paused.detail
    assert paused.paused_at.seconds > 0
    assert len(attempts) == RETRY.limit  # nothing more while paused

    # The operator fixes the escrow and resumes: a hand is tried at once, and it opens.
    rig.wallet.open_hand = accept  # type: ignore[method-assign]
    with capture_logs() as logs:
        await stub.ResumeTable(pb.ResumeTableRequest(request_id=str(uuid.uuid4()), table="tables/hot"))
        number = RETRY.limit + 1
        await until(lambda: (T, number) in rig.wallet.hands, what="a hand opens after the resume")
    assert any(e["event"] == "dealer.table_resumed" for e in logs)
    assert sample("openpoker_dealer_tables_paused", REFUSAL) == paused_before
    status = await stub.GetDealerStatus(pb.GetDealerStatusRequest())
    assert (status.paused_tables, list(status.paused)) == (0, [])
    assert rig.app.drivers[T].opening.count == 0


async def test_a_start_the_table_keeps_refusing_pauses_the_table(rig: Rig) -> None:
    starts: list[str] = []

    async def refuse(**kwargs: Any) -> int:
        starts.append(str(kwargs["request_id"]))
        raise failed("table", "StartHand", "LOG_QUARANTINED")

    rig.table.start_hand = refuse  # type: ignore[method-assign]
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: rig.app.paused_tables() == 1, what="the dealer pauses the table")
    assert len(starts) == RETRY.limit
    assert set(starts) == {ids.request_id(T, 1, f"start/{rig.table.tables[T].version}")}
    pause = rig.app.drivers[T].pause
    assert pause is not None
    assert (pause.by, pause.reason, pause.failures) == ("dealer", "LOG_QUARANTINED", RETRY.limit)


async def test_an_operator_pause_is_shown_as_the_operators(rig: Rig, stub: Any) -> None:
    rig.table.open(T, rules(time=SLOW))
    await stub.PauseTable(pb.PauseTableRequest(request_id=str(uuid.uuid4()), table="tables/hot"))
    status = await stub.GetDealerStatus(pb.GetDealerStatusRequest())
    [paused] = status.paused
    assert (paused.paused_by, paused.reason, paused.failures) == (pb.PAUSED_BY_OPERATOR, "operator", 0)


def test_the_back_off_and_the_pause_are_settings() -> None:
    config = DealerConfig.from_env(
        {
            "POKER_INSECURE": "true",
            "POKER_DEALER_OPEN_RETRY": "0.5",
            "POKER_DEALER_OPEN_RETRY_MAX": "10",
            "POKER_DEALER_OPEN_FAILURES": "0",
        }
    )
    assert config.open_retry == OpenRetry(retry=0.5, retry_max=10.0, limit=0)
    assert DealerConfig.from_env({"POKER_INSECURE": "true"}).open_retry == OpenRetry()
    never = OpenFailures(config.open_retry)
    assert not any(never.failed(reason="X", detail="", now=0.0) for _ in range(20))
    assert never.not_before == 10.0  # capped
