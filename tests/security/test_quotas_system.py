"""Quotas on a running system with TLS on (``LocalSystem(secure=True)``): requests per second per
identity (every service), table creations per minute and open watch streams per identity and per
table (the table service). Over a limit is RESOURCE_EXHAUSTED ``QUOTA_EXCEEDED`` naming it, and
nothing was created; another identity is not affected; a closed watch gives its slot back.
Oversized names are INVALID_ARGUMENT and never echoed back.

The limits are small here (set in the environment the services inherit). Each test uses
identities of its own, since the buckets live as long as the services.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Iterator
from typing import Any

import grpc
import pytest

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.pokerctl.bots import table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import RichError, rich_error
from openpoker.shell.tokens import Role
from tests.helpers.secure import Calls, Meta, token
from tests.helpers.system import local_system
from tests.helpers.waiting import answer

pytestmark = [pytest.mark.slow, pytest.mark.integration]

RPS, BURST = 1, 20
CREATES_PER_MINUTE = 3
WATCHES_PER_IDENTITY = 2
WATCHES_PER_TABLE = 4


QUOTAS = {
    "POKER_QUOTA_RPS": str(RPS),
    "POKER_QUOTA_BURST": str(BURST),
    "POKER_TABLE_QUOTA_CREATES_PER_MINUTE": str(CREATES_PER_MINUTE),
    "POKER_TABLE_QUOTA_WATCHES_PER_IDENTITY": str(WATCHES_PER_IDENTITY),
    "POKER_TABLE_QUOTA_WATCHES_PER_TABLE": str(WATCHES_PER_TABLE),
}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("quotas"), QUOTAS, secure=True) as local:
        yield local


def rid() -> str:
    return str(uuid.uuid4())


async def refusal(call: Awaitable[Any]) -> RichError:
    with pytest.raises(grpc.RpcError) as err:
        await call
    return rich_error(err.value)


def over(rich: RichError, limit: str) -> bool:
    return (
        rich.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        and rich.reason == "QUOTA_EXCEEDED"
        and rich.metadata.get("limit") == limit
    )


def create(table_id: str) -> tpb.CreateTableRequest:
    config = table_config("holdem", "nl", clock_ms=60_000)
    return tpb.CreateTableRequest(request_id=rid(), table_id=table_id, config=config)


async def exists(calls: Calls, table_id: str) -> bool:
    try:
        await calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{table_id}"), timeout=5)
    except grpc.RpcError as err:
        if rich_error(err).code == grpc.StatusCode.NOT_FOUND:
            return False
        raise
    return True


async def test_table_creations_per_minute_per_identity(system: LocalSystem, calls: Calls) -> None:
    ops = token(system, "quota-op-a", Role.OPERATOR)
    for n in range(CREATES_PER_MINUTE):
        await calls.table.CreateTable(create(f"q-create-a{n}"), timeout=5, metadata=ops)
    rich = await refusal(calls.table.CreateTable(create("q-create-over"), timeout=5, metadata=ops))
    assert over(rich, "table_creations_per_minute"), rich
    assert not await exists(calls, "q-create-over")
    # Another operator has a quota of their own; pokerctl's staff certificate is exempt.
    other = token(system, "quota-op-b", Role.OPERATOR)
    await calls.table.CreateTable(create("q-create-b0"), timeout=5, metadata=other)
    for n in range(CREATES_PER_MINUTE + 1):
        await calls.staff_table.CreateTable(create(f"q-create-staff{n}"), timeout=5)
    assert await exists(calls, "q-create-b0")


async def opened(stream: Any, limit: str) -> bool:
    """Read a watch stream's first message: True, or False if refused over ``limit``."""
    try:
        await stream.read()
    except grpc.RpcError as err:
        if over(rich_error(err), limit):
            return False
        raise
    return True


def watch(calls: Calls, table_id: str, meta: Meta) -> Any:
    return calls.table.WatchTable(tpb.WatchTableRequest(name=f"tables/{table_id}"), timeout=30, metadata=meta)


async def test_open_watch_streams_per_identity(system: LocalSystem, calls: Calls) -> None:
    await calls.staff_table.CreateTable(create("q-watch-id"), timeout=5)
    ann = token(system, "quota-watch-ann")
    streams = [watch(calls, "q-watch-id", ann) for _ in range(WATCHES_PER_IDENTITY)]
    for stream in streams:
        assert (await stream.read()).table.name == "tables/q-watch-id"
    rich = await refusal(watch(calls, "q-watch-id", ann).read())
    assert over(rich, "watch_streams_per_identity"), rich
    # Another identity is not affected.
    bob = watch(calls, "q-watch-id", token(system, "quota-watch-bob"))
    assert (await bob.read()).table.name == "tables/q-watch-id"
    bob.cancel()
    # A closed stream gives its slot back (the server notices the cancel shortly after).
    streams[0].cancel()

    async def reopened() -> Any:
        again = watch(calls, "q-watch-id", ann)
        return again if await opened(again, "watch_streams_per_identity") else None

    (await answer(reopened)).cancel()
    for stream in streams[1:]:
        stream.cancel()


async def test_open_watch_streams_per_table(system: LocalSystem, calls: Calls) -> None:
    await calls.staff_table.CreateTable(create("q-watch-t"), timeout=5)
    await calls.staff_table.CreateTable(create("q-watch-t2"), timeout=5)
    streams = [watch(calls, "q-watch-t", token(system, f"quota-tw{n}")) for n in range(WATCHES_PER_TABLE)]
    for stream in streams:
        await stream.read()
    late = token(system, "quota-tw-late")
    rich = await refusal(watch(calls, "q-watch-t", late).read())
    assert over(rich, "watch_streams_per_table"), rich
    # Another table is not affected, and the slot comes back once a stream closes.
    other = watch(calls, "q-watch-t2", late)
    await other.read()
    other.cancel()
    streams[0].cancel()

    async def reopened() -> Any:
        again = watch(calls, "q-watch-t", late)
        return again if await opened(again, "watch_streams_per_table") else None

    (await answer(reopened)).cancel()
    for stream in streams[1:]:
        stream.cancel()


async def test_requests_per_second_per_identity(system: LocalSystem, calls: Calls) -> None:
    await calls.staff_table.CreateTable(create("q-rps"), timeout=5)
    get = tpb.GetTableRequest(name="tables/q-rps")
    ann = token(system, "quota-rps-ann")
    refusals = []
    for _ in range(BURST + 5):
        try:
            await calls.table.GetTable(get, timeout=5, metadata=ann)
        except grpc.RpcError as err:
            refusals.append(rich_error(err))
    assert refusals, "the burst was not limited"
    assert all(over(r, "requests_per_second") for r in refusals), refusals
    # The limit is per identity and per service: bob, the wallet and pokerctl are unaffected.
    await calls.table.GetTable(get, timeout=5, metadata=token(system, "quota-rps-bob"))
    balance = wpb.GetBalanceRequest(account="cash/quota-rps-ann")
    rich = await refusal(calls.wallet.GetBalance(balance, timeout=5, metadata=ann))
    assert rich.reason == "UNKNOWN_ACCOUNT"  # answered, not limited
    for _ in range(BURST + 5):
        await calls.staff_table.GetTable(get, timeout=5)


async def test_anonymous_callers_share_a_quota_per_host(system: LocalSystem, calls: Calls) -> None:
    await calls.staff_table.CreateTable(create("q-anon"), timeout=5)
    get = tpb.GetTableRequest(name="tables/q-anon")
    refusals = []
    for _ in range(BURST + 5):
        try:
            await calls.table.GetTable(get, timeout=5)
        except grpc.RpcError as err:
            refusals.append(rich_error(err))
    assert refusals
    assert all(over(r, "requests_per_second") for r in refusals), refusals
    await calls.table.GetTable(get, timeout=5, metadata=token(system, "quota-anon-ann"))


def not_echoed(rich: RichError, value: str) -> None:
    assert value[:100] not in rich.message
    assert len(rich.message) < 300
    assert all(value[:100] not in v and len(v) < 300 for v in rich.metadata.values())


async def test_oversized_names_are_refused_and_not_echoed(system: LocalSystem, calls: Calls) -> None:
    big = "x" * 100_000
    rich = await refusal(calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{big}"), timeout=5))
    assert (rich.code, rich.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_TABLE_NAME")
    not_echoed(rich, big)
    rich = await refusal(
        calls.staff_table.GetHand(tpb.GetHandRequest(name=f"tables/q-x/hands/{big}"), timeout=5)
    )
    assert rich.code == grpc.StatusCode.INVALID_ARGUMENT
    not_echoed(rich, big)
    await calls.staff_table.CreateTable(create("q-names"), timeout=5)
    join = tpb.JoinTableRequest(request_id=rid(), table="tables/q-names", player_id=big, buy_in=1_000)
    rich = await refusal(calls.staff_table.JoinTable(join, timeout=5))
    assert (rich.code, rich.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PLAYER_ID")
    not_echoed(rich, big)
    join = tpb.JoinTableRequest(request_id=big, table="tables/q-names", player_id="ann", buy_in=1_000)
    rich = await refusal(calls.staff_table.JoinTable(join, timeout=5))
    assert rich.code == grpc.StatusCode.INVALID_ARGUMENT
    not_echoed(rich, big)
    rich = await refusal(
        calls.wallet.GetBalance(
            wpb.GetBalanceRequest(account=f"cash/{big}"),
            timeout=5,
            metadata=token(system, "quota-names-cashier", Role.CASHIER),
        )
    )
    assert rich.code == grpc.StatusCode.INVALID_ARGUMENT
    not_echoed(rich, big)
    rich = await refusal(
        calls.staff_dealer.PauseTable(dpb.PauseTableRequest(table=f"tables/{big}"), timeout=5)
    )
    assert rich.code == grpc.StatusCode.INVALID_ARGUMENT
    not_echoed(rich, big)
    # Over the message size limit (1 MiB): refused before any handler.
    huge = "y" * (2 * 1024 * 1024)
    rich = await refusal(calls.staff_table.GetTable(tpb.GetTableRequest(name=huge), timeout=5))
    assert rich.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    not_echoed(rich, huge)
