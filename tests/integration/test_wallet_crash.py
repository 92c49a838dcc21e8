"""Crash test: SIGKILL the wallet process at random points while a driver retries its calls.

A real ``python -m openpoker.services.wallet`` subprocess over a real nats-server. The driver plays a
fixed script (deposits, buy-ins, hands settled or voided, cash-outs, withdrawals), retrying
each call with the same request until it gets an answer, while a killer task SIGKILLs the
wallet at random moments (seeded) and starts a new one. Afterwards:

- the ledger audit passes (conservation, no negative balance, hands closed once, rake);
- every balance is exactly what the script implies: no retried call was applied twice;
- no request id appears in two log messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import nats
import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from openpoker.engine.rake import compute_rake
from openpoker.engine.rules import RakeRules
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.ledger.store import SUBJECT
from openpoker.pokerctl.cmd_ledger import audit_live
from openpoker.shell import childproc
from openpoker.shell.client import channel
from openpoker.shell.natsproc import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = ("p0", "p1", "p2", "p3")
RAKE = RakeRules(basis_points=500, caps=((2, 60), (4, 120)))
RAKE_PB = pb.RakeRules(
    basis_points=500,
    caps=[pb.RakeCap(min_players_dealt_in=2, cap=60), pb.RakeCap(min_players_dealt_in=4, cap=120)],
    no_flop_no_drop=True,
)
META = (("x-caller", "pokerctl"),)
DEALER = (("x-caller", "dealer"),)
TABLE = (("x-caller", "table"),)  # buy-ins and cash-outs come from the table service only
T = TypeVar("T")


class WalletProcess:
    def __init__(self, nats_url: str, port: int, log: Path) -> None:
        self.port = port
        self.log = log
        self.env = {
            **os.environ,
            "POKER_INSECURE": "true",
            "POKER_NATS_URL": nats_url,
            "POKER_WALLET_PORT": str(port),
            "POKER_WALLET_SNAPSHOT_EVERY": "5",
            "POKER_GRACE_SECONDS": "0",
            "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in (".", "src")),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        assert self.process is None
        with self.log.open("ab") as out:
            self.process = childproc.popen(  # dies with this test process
                [sys.executable, "-m", "openpoker.services.wallet"],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.send_signal(signal.SIGKILL)
            process.wait()

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}


class Driver:
    """Retries every call with the very same request until the wallet answers."""

    def __init__(self, port: int) -> None:
        self.target = f"127.0.0.1:{port}"
        self.chan: grpc.aio.Channel = channel(self.target)
        self.stub = pb_grpc.WalletServiceStub(self.chan)
        self.attempts = 0
        self.answered = 0
        self.duplicates = 0
        self.progress = asyncio.Event()  # set on every answer (the killer paces itself on it)

    async def call(self, rpc: Callable[[pb_grpc.WalletServiceStub], Awaitable[T]]) -> T:
        for _ in range(400):
            self.attempts += 1
            try:
                response = await rpc(self.stub)
            except grpc.aio.AioRpcError as err:
                if err.code() not in RETRYABLE:
                    raise
            else:
                self.answered += 1
                self.progress.set()
                return response
            # A fresh channel: the old one may sit in reconnect backoff for seconds.
            await self.chan.close()
            self.chan = channel(self.target)
            self.stub = pb_grpc.WalletServiceStub(self.chan)
            await asyncio.sleep(0.05)
        raise AssertionError("the wallet never came back")

    def note(self, response: Any) -> None:
        if response.duplicate:
            self.duplicates += 1


async def script(driver: Driver, rng: random.Random) -> dict[str, int]:
    """Play the script; return the expected final balance of every account it touched."""
    expected: dict[str, int] = {}
    seat: dict[str, int] = {}

    def add(account: str, amount: int) -> None:
        expected[account] = expected.get(account, 0) + amount

    for p in PLAYERS:
        r = await driver.call(
            lambda s, p=p: s.Deposit(
                pb.DepositRequest(request_id=f"dep-{p}", player=p, amount=10_000), metadata=META, timeout=2
            )  # type: ignore[misc]
        )
        driver.note(r)
        add(f"cash/{p}", 10_000)
        r = await driver.call(
            lambda s, p=p: s.BuyIn(
                pb.BuyInRequest(request_id=f"buy-{p}", table_id="t1", player=p, amount=3_000),
                metadata=TABLE,
                timeout=2,
            )  # type: ignore[misc]
        )
        driver.note(r)
        add(f"cash/{p}", -3_000)
        seat[p] = 3_000
    rake_total = 0
    for hand in range(1, 13):
        dealt = [p for p in PLAYERS if seat[p] > 0]
        stacks = [pb.PlayerAmount(player=p, amount=seat[p]) for p in dealt]
        open_req = pb.OpenHandRequest(
            request_id=f"open-{hand}", table_id="t1", hand_number=hand, stacks=stacks, rake=RAKE_PB
        )
        driver.note(await driver.call(lambda s, q=open_req: s.OpenHand(q, metadata=DEALER, timeout=2)))  # type: ignore[misc]
        if hand % 4 == 0:
            void = pb.VoidHandRequest(request_id=f"void-{hand}", table_id="t1", hand_number=hand)
            driver.note(await driver.call(lambda s, q=void: s.VoidHand(q, metadata=DEALER, timeout=2)))  # type: ignore[misc]
            continue
        contributions = {p: rng.randint(0, seat[p]) for p in dealt}
        pot = sum(contributions.values())
        saw_flop = rng.random() < 0.7
        rake = compute_rake(RAKE, pot=pot, players_dealt_in=len(dealt), saw_flop=saw_flop)
        winner = rng.choice(dealt)
        settle = pb.SettleHandRequest(
            request_id=f"settle-{hand}",
            table_id="t1",
            hand_number=hand,
            contributions=[pb.PlayerAmount(player=p, amount=a) for p, a in contributions.items()],
            payouts=[pb.PlayerAmount(player=winner, amount=pot - rake)],
            rake=rake,
            saw_flop=saw_flop,
        )
        driver.note(await driver.call(lambda s, q=settle: s.SettleHand(q, metadata=DEALER, timeout=2)))  # type: ignore[misc]
        for p, a in contributions.items():
            seat[p] -= a
        seat[winner] += pot - rake
        rake_total += rake
    for p in PLAYERS:
        if seat[p]:
            out = pb.CashOutRequest(request_id=f"out-{p}", table_id="t1", player=p)
            driver.note(await driver.call(lambda s, q=out: s.CashOut(q, metadata=TABLE, timeout=2)))  # type: ignore[misc]
            add(f"cash/{p}", seat[p])
        add(f"escrow/t1/{p}", 0)
        take = expected[f"cash/{p}"] // 3
        wd = pb.WithdrawRequest(request_id=f"wd-{p}", player=p, amount=take)
        driver.note(await driver.call(lambda s, q=wd: s.Withdraw(q, metadata=META, timeout=2)))  # type: ignore[misc]
        add(f"cash/{p}", -take)
    expected["house/rake"] = rake_total
    expected["world"] = -sum(v for k, v in expected.items() if k != "world")
    return expected


async def ready(port: int) -> None:
    """Wait until a freshly started wallet answers (it replays its log first)."""
    for _ in range(600):
        chan = channel(f"127.0.0.1:{port}")
        try:
            await pb_grpc.WalletServiceStub(chan).GetBalance(
                pb.GetBalanceRequest(account="world"), timeout=0.5, metadata=META
            )
            return
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.05)
        finally:
            await chan.close()
    raise AssertionError("the wallet did not start")


async def killer(
    wallet: WalletProcess, driver: Driver, rng: random.Random, stop: asyncio.Event, kills: list[int]
) -> None:
    """Kill the wallet every few answered calls, a random instant into the next ones."""
    while not stop.is_set():
        await ready(wallet.port)
        target = driver.answered + rng.randint(2, 9)
        while driver.answered < target and not stop.is_set():
            driver.progress.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(driver.progress.wait(), timeout=0.5)
        if stop.is_set():
            return
        await asyncio.sleep(rng.uniform(0.0, 0.01))
        wallet.kill()
        kills.append(driver.answered)
        wallet.start()


@pytest.mark.parametrize("seed", [20261122])
async def test_kill_the_wallet_while_the_driver_retries(nats_url: str, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    wallet = WalletProcess(nats_url, free_port(), tmp_path / "wallet.log")
    wallet.start()
    driver = Driver(wallet.port)
    stop = asyncio.Event()
    kills: list[int] = []
    chaos = asyncio.create_task(killer(wallet, driver, random.Random(seed + 1), stop, kills))
    try:
        expected = await script(driver, rng)
        stop.set()
        await chaos
        for account, amount in expected.items():
            got = await driver.call(
                lambda s, a=account: s.GetBalance(pb.GetBalanceRequest(account=a), timeout=2, metadata=META)  # type: ignore[misc]
            )
            assert (account, got.balance.balance) == (account, amount)
            assert got.balance.debits_pending == 0
    finally:
        stop.set()
        if not chaos.done():
            chaos.cancel()
        await driver.chan.close()
        wallet.stop()
    assert len(kills) >= 4, f"only {len(kills)} kills: the test did not exercise crashes"

    result = await audit_live(nats_url)
    assert result.ok, result.report.breaches
    assert result.report.hands_settled == 9
    assert result.report.hands_voided == 3
    nc = await nats.connect(nats_url)
    try:
        stored = await JetStreamEventStore(nc.jetstream(), stream="WALLET_EVENTS").read(SUBJECT)
    finally:
        await nc.close()
    per_request = Counter(s.envelope.command_id for s in stored)
    assert [rid for rid, n in per_request.items() if n > 1] == []
