"""Hostile calls to every RPC of a running secure system (``LocalSystem(secure=True)``: real
nats-server, every service a process, TLS, tokens, sealed decks), then the money and the logs
checked (docs/testing.md#fuzzing).

The system is seeded with three tables: one with a live hand whose players never act on their
own (60 s clock), one with a finished hand and a live one, one empty; six funded players. The
fuzzer (``tests/helpers/fuzz.py``) sends ``POKER_FUZZ_CALLS`` calls (default 400), four at a time,
each drawn from ``POKER_FUZZ_SEED`` (random unless set; printed, and named in every failure).
Quotas are raised so that calls reach the handlers; QUOTA_EXCEEDED stays a valid answer.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.rng.v1 import rng_service_pb2 as rpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.dispute.check import replay_table
from openpoker.dispute.source import read_evidence
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.cmd_ledger import LedgerAudit, audit_live
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import natsauth
from openpoker.shell.natsconn import NatsTarget
from openpoker.shell.tokens import Role
from tests.helpers.fuzz import Fuzzer
from tests.helpers.fuzz_checks import Caller, Checks, SeenCards, Shot, Tally, World, rpcs
from tests.helpers.secure import Calls, token
from tests.helpers.system import local_system
from tests.helpers.waiting import answer

CALLS = int(os.environ.get("POKER_FUZZ_CALLS", "400"))
SEED = int(os.environ.get("POKER_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
CONCURRENCY = int(os.environ.get("POKER_FUZZ_CONCURRENCY", "4"))
REPRO = f"POKER_FUZZ_SEED={SEED} POKER_FUZZ_CALLS={CALLS}"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.integration,
    pytest.mark.timeout(int(180 + CALLS * 0.25)),  # the module fixture's run counts in its first test
]

ENV = {
    "POKER_QUOTA_RPS": "5000",
    "POKER_QUOTA_BURST": "10000",
    "POKER_TABLE_QUOTA_CREATES_PER_MINUTE": "5000",
    "POKER_TABLE_QUOTA_WATCHES_PER_IDENTITY": "64",
}
LIVE, PLAYED, EMPTY = "fz-live", "fz-played", "fz-empty"
PLAYERS = ("hana", "ivan", "jo", "kim", "lee", "max")
FUNDS = 20_000


@dataclass(frozen=True, slots=True)
class Run:
    tally: Tally
    violations: list[str]
    seen: list[SeenCards]
    seeded: int  # deposited before the fuzzing
    finished: tuple[str, str]  # a hand that ended before the fuzzing: (table id, hand id)


async def _seed(system: LocalSystem, calls: Calls) -> tuple[World, tuple[str, str]]:
    for player in PLAYERS:
        deposit = wpb.DepositRequest(request_id=f"fz-dep-{player}", player=player, amount=FUNDS)
        await calls.staff_wallet.Deposit(deposit, timeout=10)
    configs = {
        LIVE: table_config("holdem", "nl", clock_ms=60_000),
        PLAYED: table_config("holdem", "nl", clock_ms=60_000),
        EMPTY: table_config("omaha", "pl", clock_ms=60_000),
    }
    for table_id, config in configs.items():
        create = tpb.CreateTableRequest(request_id=f"fz-create-{table_id}", table_id=table_id, config=config)
        await calls.staff_table.CreateTable(create, timeout=10)
    for table_id, players in ((LIVE, ("hana", "ivan")), (PLAYED, ("jo", "kim"))):
        for player in players:
            join = tpb.JoinTableRequest(
                request_id=f"fz-join-{table_id}-{player}",
                table=f"tables/{table_id}",
                buy_in=buy_in_for(configs[table_id]),
                post_choice=tpb.POST_CHOICE_POST_NOW,
            )
            await calls.table.JoinTable(join, timeout=10, metadata=token(system, player))

    async def dealt(table_id: str, other_than: str = "") -> tpb.Table | None:
        got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{table_id}"), timeout=10)
        hand = got.table.current_hand.hand_id
        return got.table if hand and hand != other_than and got.table.current_hand.to_act.seat else None

    live = await answer(lambda: dealt(LIVE))
    played = await answer(lambda: dealt(PLAYED))
    first = played.current_hand.hand_id
    seat = played.current_hand.to_act.seat
    folder = next(s.player_id for s in played.seats if s.seat == seat)
    fold = tpb.ActRequest(
        request_id="fz-fold", table=f"tables/{PLAYED}", hand_id=first, action=tpb.ACTION_TYPE_FOLD
    )
    await calls.table.Act(fold, timeout=10, metadata=token(system, folder))
    second = await answer(lambda: dealt(PLAYED, other_than=first))
    world = World(
        tables=[LIVE, PLAYED, EMPTY],
        hands=[(LIVE, live.current_hand.hand_id), (PLAYED, first), (PLAYED, second.current_hand.hand_id)],
        players=list(PLAYERS),
        seated={"hana": LIVE, "ivan": LIVE, "jo": PLAYED, "kim": PLAYED},
    )
    return world, (PLAYED, first)


async def _fuzz(system: LocalSystem) -> Run:
    calls = Calls(system)
    try:
        world, finished = await _seed(system, calls)
    finally:
        await calls.close()
    fuzzer = Fuzzer(system, world, SEED)
    try:
        await fuzzer.run(CALLS, CONCURRENCY)
    finally:
        await fuzzer.close()
    return Run(fuzzer.tally, fuzzer.violations, fuzzer.seen, len(PLAYERS) * FUNDS, finished)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("fuzz"), ENV, secure=True) as local:
        yield local


@pytest.fixture(scope="module")
def run(system: LocalSystem) -> Run:
    print(f"fuzzing with {REPRO}")
    done = asyncio.run(_fuzz(system))
    tally = done.tally
    checked = f"{len(done.seen)} views of shown cards, {tally.histories} PHH texts checked"
    print(f"{tally.calls} calls, {tally.ok} OK, {checked}; by code {tally.by_code}")
    for key, n in sorted(tally.by_reason.items()):
        print(f"  {key}: {n}")
    return done


def test_the_fuzzer_finds_every_rpc_of_every_service() -> None:
    found = {(r.service, r.name) for r in rpcs()}
    assert {"table", "wallet", "dealer", "rng"} == {service for service, _ in found}
    for rpc in ("ActStream", "ActBatchStream", "WatchTable", "StartHand", "GetHandHistory"):
        assert ("table", rpc) in found
    for rpc in ("Deposit", "BuyIn", "SettleHand", "ListTableEscrows"):
        assert ("wallet", rpc) in found
    assert {("rng", "Shuffle"), ("rng", "RevealSeed"), ("dealer", "VoidHand")} <= found


def test_the_checks_catch_what_they_look_for() -> None:
    """The fuzzer's checks on answers made up to break them (else a quiet run proves nothing)."""
    by_name = {r.name: r for r in rpcs()}
    checks = Checks(World(tables=[LIVE], hands=[(LIVE, "h1")], players=["hana", "ivan"]))
    hana = Caller("player", (), role=Role.PLAYER, subject="hana")
    ivan = Caller("player", (), role=Role.PLAYER, subject="ivan")
    get = Shot(0, by_name["GetTable"], hana, [tpb.GetTableRequest(name=f"tables/{LIVE}")])
    preflop = tpb.GetTableResponse(
        table=tpb.Table(
            table_id=LIVE,
            seats=[tpb.Seat(seat=2, player_id="ivan", hole_cards=["As", "Kd"])],
            current_hand=tpb.Hand(hand_id="h1", street=tpb.STREET_PREFLOP),
        )
    )
    checks.check_answer(get, preflop)
    checks.check_answer(Shot(1, get.rpc, ivan, get.requests), preflop)  # his own cards
    shuffle = Shot(2, by_name["Shuffle"], hana, [rpb.ShuffleRequest()])
    checks.check_answer(shuffle, rpb.ShuffleResponse(sealed_deck=b"As2c3d4h5s6c7d"))
    reveal = Shot(3, by_name["RevealSeed"], hana, [rpb.RevealSeedRequest()])
    checks.check_answer(reveal, rpb.RevealSeedResponse())
    history = Shot(4, by_name["GetHandHistory"], hana, [tpb.GetHandHistoryRequest()])
    text = "players = ['hana', 'ivan']\nactions = ['d dh p1 AsKd', 'd dh p2 QhQs', 'p1 f']\n"
    ended = tpb.Hand(hand_id="h1", street=tpb.STREET_ENDED)
    checks.check_answer(history, tpb.GetHandHistoryResponse(hand=ended, text=text))
    hidden = text.replace("QhQs", "????")
    checks.check_answer(Shot(5, history.rpc, hana, history.requests), tpb.GetHandHistoryResponse(text=hidden))
    bare = grpc.aio.AioRpcError(grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(), "boom")
    checks.check_error(get, bare)
    assert [v.split(" as ")[0] for v in checks.violations] == [
        "call 0 /poker.table.v1.TableService/GetTable",
        "call 2 /poker.rng.v1.RngService/Shuffle",
        "call 3 /poker.rng.v1.RngService/RevealSeed",
        "call 4 /poker.table.v1.TableService/GetHandHistory",
        "call 0 /poker.table.v1.TableService/GetTable",
        "call 0 /poker.table.v1.TableService/GetTable",
    ], checks.violations
    assert "hole cards ('As', 'Kd') shown during the betting" in checks.violations[0]
    assert "cards in clear" in checks.violations[1]
    assert "seed revealed" in checks.violations[2]
    assert "ivan's hole cards QhQs in a history's text" in checks.violations[3]
    assert "answered INTERNAL" in checks.violations[4]
    assert "0 ErrorInfo" in checks.violations[5]


def test_no_answer_breaks_an_invariant(system: LocalSystem, run: Run) -> None:
    assert run.tally.calls >= CALLS * 0.95, run.tally  # only requests over 1 MiB are skipped
    assert not run.violations, f"{len(run.violations)} violations ({REPRO}):\n" + "\n".join(
        run.violations[:30]
    )
    assert all(p.process.poll() is None for p in system.processes.values()), "a service died"
    # The calls reached the handlers: some were accepted, and not all were refused alike.
    assert run.tally.ok > 0, run.tally
    assert len(run.tally.by_code) > 3, run.tally


async def test_cards_seen_after_the_betting_are_the_cards_shown(system: LocalSystem, run: Run) -> None:
    calls = Calls(system)
    try:
        for seen in run.seen:
            name = f"tables/{seen.table_id}/hands/{seen.hand_id}"
            got = await calls.table.GetHand(tpb.GetHandRequest(name=name), timeout=10)  # a spectator's view
            shown = {s.seat: tuple(s.hole_cards) for s in got.hand.seats}
            assert shown.get(seen.seat) == seen.cards, f"call {seen.index} saw {seen} ({REPRO})"
    finally:
        await calls.close()


def _bus(system: LocalSystem) -> NatsTarget:
    """The system's NATS as the operator's read-only ``pokerctl`` identity."""
    return NatsTarget(system.nats.url, system.nats_credentials(natsauth.POKERCTL))


async def _audit(system: LocalSystem) -> LedgerAudit | None:
    audit = await audit_live(_bus(system))
    return audit if audit.ok else None


async def test_the_ledger_audits_and_money_in_equals_money_out(system: LocalSystem, run: Run) -> None:
    try:
        audit = await answer(lambda: _audit(system))
    except AssertionError:
        audit = await audit_live(_bus(system))
        raise AssertionError(f"ledger audit breaches ({REPRO}): {audit.breaches}") from None
    report = audit.report
    assert not audit.escrow.drifts
    assert report.deposits == run.seeded + run.tally.deposits, REPRO
    assert report.withdrawals == run.tally.withdrawals, REPRO
    assert report.held_outside_world == report.deposits - report.withdrawals


async def _replays(system: LocalSystem) -> list[str] | None:
    evidence = await read_evidence(_bus(system), None)
    failed = []
    for ev in evidence:
        result = replay_table(
            ev.table_id,
            ev.log,
            reveals=ev.reveals,
            wallet=ev.wallet,
            wallet_chain_problem=ev.wallet_chain_problem,
        )
        if result.failure is not None:
            failed.append(result.failure.describe())
    return None if failed else [ev.table_id for ev in evidence]


async def test_every_table_log_folds_and_replays(system: LocalSystem, run: Run) -> None:
    try:
        tables = await answer(lambda: _replays(system))
    except AssertionError:
        evidence = await read_evidence(_bus(system), None)
        failures = [
            r.failure.describe()
            for ev in evidence
            if (r := replay_table(ev.table_id, ev.log, reveals=ev.reveals, wallet=ev.wallet)).failure
        ]
        raise AssertionError(f"replay failures ({REPRO}): {failures}") from None
    assert {LIVE, PLAYED, EMPTY} <= set(tables)


async def test_every_service_still_answers_a_normal_call(system: LocalSystem, run: Run) -> None:
    calls = Calls(system)
    try:
        hana = token(system, "hana")
        got = await calls.wallet.GetBalance(
            wpb.GetBalanceRequest(account="cash/hana"), timeout=10, metadata=hana
        )
        assert got.balance.account == "cash/hana"
        view = await calls.table.GetTable(
            tpb.GetTableRequest(name=f"tables/{LIVE}"), timeout=10, metadata=hana
        )
        assert view.table.table_id == LIVE
        auditor = token(system, "audrey", Role.AUDITOR)
        status = await calls.dealer.GetDealerStatus(
            dpb.GetDealerStatusRequest(), timeout=10, metadata=auditor
        )
        assert status.tables_followed >= 3
        _, hand_id = run.finished
        revealed = await calls.rng.RevealSeed(
            rpb.RevealSeedRequest(hand_id=hand_id), timeout=10, metadata=auditor
        )
        checked = await calls.rng.Verify(rpb.VerifyRequest(record=revealed.record), timeout=10)
        assert checked.ok, checked
    except grpc.RpcError as err:
        raise AssertionError(f"a normal call failed after the fuzzing ({REPRO}): {err}") from None
    finally:
        await calls.close()
