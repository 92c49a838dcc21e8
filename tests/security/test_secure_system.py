"""Attacks on a running system with TLS on (``LocalSystem(secure=True)``: real nats-server, every
service a process, the local PKI under the data folder). Each refusal is checked for its code and
reason, and that nothing changed."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from openpoker.api.rng.v1 import rng_service_pb2 as rpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import pki
from openpoker.shell.client import bearer_metadata, channel, rich_error
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import Role, TokenIssuer
from tests.helpers.secure import Calls, ca_only, token
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PLAYED = "secure-played"  # two players: the dealer deals there
TABLE = "secure-quiet"  # alice alone: nothing moves unless an attack gets through


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("secure"), secure=True) as local:
        yield local


def rid() -> str:
    return str(uuid.uuid4())


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        await call
    rich = rich_error(err.value)
    return rich.code, rich.reason


async def version(calls: Calls, table: str = TABLE) -> int:
    got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{table}"), timeout=5)
    return int(got.table.version)


async def health(target: str, tls: TlsFiles | None) -> grpc.StatusCode:
    chan = channel(target, tls)
    async with chan:
        stub: Any = health_pb2_grpc.HealthStub(chan)
        try:
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=3)
        except grpc.RpcError as err:
            code: grpc.StatusCode = err.code()
            return code
    return grpc.StatusCode.OK


async def test_plaintext_is_refused_on_every_listener(system: LocalSystem) -> None:
    for target in (*system.targets.values(), *system.client_targets.values()):
        assert await health(target, None) == grpc.StatusCode.UNAVAILABLE, target


async def test_service_ports_need_a_certificate_from_our_ca(system: LocalSystem, tmp_path: Path) -> None:
    other = pki.ensure_local_pki(tmp_path)
    assert system.pki is not None
    foreign = TlsFiles(ca=system.pki.ca_cert, cert=other.cert("dealer"), key=other.key("dealer"))
    for target in system.targets.values():
        assert await health(target, foreign) == grpc.StatusCode.UNAVAILABLE
        assert await health(target, ca_only(system)) == grpc.StatusCode.UNAVAILABLE
        assert await health(target, system.tls) == grpc.StatusCode.OK
    for target in system.client_targets.values():
        assert await health(target, ca_only(system)) == grpc.StatusCode.OK


async def _seated_table(
    system: LocalSystem, calls: Calls, table: str = TABLE, players: tuple[str, ...] = ("alice",)
) -> None:
    config = table_config("holdem", "nl", clock_ms=60_000)
    await calls.staff_table.CreateTable(
        tpb.CreateTableRequest(request_id=f"create-{table}", table_id=table, config=config), timeout=5
    )
    for player in players:
        await calls.staff_wallet.Deposit(
            wpb.DepositRequest(request_id=f"dep-{player}", player=player, amount=10_000), timeout=5
        )
        await calls.table.JoinTable(
            tpb.JoinTableRequest(
                request_id=f"join-{table}-{player}",
                table=f"tables/{table}",
                buy_in=buy_in_for(config),
                post_choice=tpb.POST_CHOICE_POST_NOW,
            ),
            timeout=5,
            metadata=token(system, player),
        )


async def test_services_play_hands_over_mutual_tls(system: LocalSystem, calls: Calls) -> None:
    await _seated_table(system, calls, PLAYED, ("carol", "dave"))

    # The dealer shuffles at rng, reserves at the wallet and starts the hand at the table: all
    # over mutual TLS with its own certificate. Watch the table until a hand is dealt.
    watch = tpb.WatchTableRequest(name=f"tables/{PLAYED}")
    dealt = False
    async for update in calls.table.WatchTable(watch, timeout=30, metadata=token(system, "carol")):
        if update.table.current_hand.hand_id or update.table.hands_played > 0:
            dealt = True
            break
    assert dealt


async def test_a_forged_dealer_header_is_not_the_dealer(system: LocalSystem, calls: Calls) -> None:
    await _seated_table(system, calls)
    before = await version(calls)
    forged = (("x-caller", "dealer"), *token(system, "alice"))
    start = tpb.StartHandRequest(
        request_id=rid(),
        table=f"tables/{TABLE}",
        hand_id=f"h-{rid()}",
        deck_commitment="c" * 64,
        sealed_deck=b"As" * 26,
    )
    assert await refused(calls.table.StartHand(start, timeout=5, metadata=forged)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "CALLER_NOT_DEALER",
    )
    shuffle = rpb.ShuffleRequest(request_id=rid(), table_id=TABLE, hand_id=f"h-{rid()}", deck_size=52)
    code, _ = await refused(calls.rng.Shuffle(shuffle, timeout=5, metadata=forged))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert await version(calls) == before


async def test_a_player_acts_and_views_only_as_themself(system: LocalSystem, calls: Calls) -> None:
    await _seated_table(system, calls)
    alice = token(system, "alice")
    view_bob = tpb.GetTableRequest(name=f"tables/{TABLE}", viewer_player_id="bob")
    assert await refused(calls.table.GetTable(view_bob, timeout=5, metadata=alice)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    before = await version(calls)
    leave = tpb.LeaveTableRequest(request_id=rid(), table=f"tables/{TABLE}", player_id="bob")
    assert await refused(calls.table.LeaveTable(leave, timeout=5, metadata=alice)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    # A header naming bob changes nothing: the token is alice.
    as_bob = (("x-player-id", "bob"), *alice)
    got = await calls.table.GetTable(tpb.GetTableRequest(name=f"tables/{TABLE}"), timeout=5, metadata=as_bob)
    assert got.table.name == f"tables/{TABLE}"
    assert await version(calls) == before


@pytest.mark.parametrize("role", [Role.CASHIER, Role.AUDITOR, Role.OPERATOR, None])
async def test_no_other_role_and_no_token_sits_in_a_players_seat(
    system: LocalSystem, calls: Calls, role: Role | None
) -> None:
    await _seated_table(system, calls)
    meta = token(system, "staff-1", role) if role is not None else ()
    before = await version(calls)
    view_alice = tpb.GetTableRequest(name=f"tables/{TABLE}", viewer_player_id="alice")
    assert await refused(calls.table.GetTable(view_alice, timeout=5, metadata=meta)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    leave = tpb.LeaveTableRequest(request_id=rid(), table=f"tables/{TABLE}", player_id="alice")
    code, _ = await refused(calls.table.LeaveTable(leave, timeout=5, metadata=meta))
    assert code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)
    assert await version(calls) == before


async def test_bad_tokens_are_unauthenticated(system: LocalSystem, calls: Calls, tmp_path: Path) -> None:
    await _seated_table(system, calls)
    before = await version(calls)
    leave = tpb.LeaveTableRequest(request_id=rid(), table=f"tables/{TABLE}")
    old = token(system, "alice", now=dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    assert await refused(calls.table.LeaveTable(leave, timeout=5, metadata=old)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_EXPIRED",
    )
    other = pki.ensure_local_pki(tmp_path)
    kid, key = pki.load_token_key(other)
    foreign = bearer_metadata(TokenIssuer(key=key, kid=kid).issue("alice", Role.OPERATOR))
    assert await refused(calls.table.LeaveTable(leave, timeout=5, metadata=foreign)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )
    assert await refused(calls.table.LeaveTable(leave, timeout=5)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )
    assert await version(calls) == before


async def test_a_player_cannot_mint_or_move_money(system: LocalSystem, calls: Calls) -> None:
    alice = token(system, "alice")
    deposit = wpb.DepositRequest(request_id=rid(), player="alice", amount=1_000_000)
    code, reason = await refused(calls.wallet.Deposit(deposit, timeout=5, metadata=alice))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
    forged = (("x-caller", "table"), *alice)
    buy_in = wpb.BuyInRequest(request_id=rid(), player="alice", table_id=TABLE, amount=100)
    code, _ = await refused(calls.wallet.BuyIn(buy_in, timeout=5, metadata=forged))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    anonymous = await refused(calls.wallet.Deposit(deposit, timeout=5))
    assert anonymous[0] == grpc.StatusCode.UNAUTHENTICATED


def test_keys_on_disk_are_private(system: LocalSystem) -> None:
    assert system.pki is not None
    for key in system.pki.root.glob("*.key"):
        assert key.stat().st_mode & 0o077 == 0, key


async def test_the_staff_certificate_sits_in_no_players_seat(system: LocalSystem, calls: Calls) -> None:
    """pokerctl's certificate holds the operator role: it cannot view cards or act for a player."""
    await _seated_table(system, calls)
    before = await version(calls)
    view_alice = tpb.GetTableRequest(name=f"tables/{TABLE}", viewer_player_id="alice")
    assert await refused(calls.staff_table.GetTable(view_alice, timeout=5)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    leave = tpb.LeaveTableRequest(request_id=rid(), table=f"tables/{TABLE}", player_id="alice")
    assert await refused(calls.staff_table.LeaveTable(leave, timeout=5)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    assert await version(calls) == before
