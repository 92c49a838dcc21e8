"""Wallet on a local nats-server (R1, file storage): hands settled per second, and restart time.

Ours: ``WalletApp.execute`` of OpenHand + SettleHand for 6 players dealt in (one linked batch
each, one JetStream message each), one hand after another; then a restart: full replay of the
log versus snapshot + tail. Peer, same run: the pure ledger core alone (``decide`` + ``evolve``
in memory, no I/O), the floor the persistence sits on.

Service process (``service_*``): ONE ``python -m openpoker.services.wallet`` (info-level JSON
logs to a file, as ``pokerctl up`` and ``bench system`` run it) called over gRPC exactly as the dealer
calls it per hand (``OpenHand`` then ``SettleHand``, heads-up, 20 tables at once, one hand after
another at each); the figure is the wallet process's CPU (user + system, ``/proc``) over the
measured hands divided by their number. Before them, as many hands are played unmeasured (a
warm-up, and a ledger of some age: a snapshot's cost grows with the ledger).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import nats

from bench.services import _free_port, _measured, _serving, _spawn
from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from openpoker.engine.rake import compute_rake
from openpoker.engine.rules import RakeRules
from openpoker.ledger.commands import BuyIn, Command, Deposit, OpenHand, PlayerAmount, SettleHand
from openpoker.ledger.decider import LedgerState, decide, evolve
from openpoker.services.wallet.app import WalletApp
from openpoker.services.wallet.server import open_store
from openpoker.shell.client import channel
from openpoker.shell.natsproc import NatsServer

PLAYERS = tuple(f"p{i}" for i in range(6))
RAKE = RakeRules(basis_points=500, caps=((2, 125), (5, 275)))
STACK = 1_000_000


def _setup() -> list[Command]:
    out: list[Command] = []
    for p in PLAYERS:
        out.append(Deposit(request_id=f"d-{p}", player=p, amount=STACK))
        out.append(BuyIn(request_id=f"b-{p}", table_id="t1", player=p, amount=STACK))
    return out


def _hand(n: int, seats: dict[str, int]) -> tuple[OpenHand, SettleHand]:
    stacks = tuple(PlayerAmount(player=p, amount=seats[p]) for p in PLAYERS)
    opened = OpenHand(request_id=f"o{n}", table_id="t1", hand_no=n, stacks=stacks, rake=RAKE)
    bet = 100 + n % 50
    pot = bet * len(PLAYERS)
    rake = compute_rake(RAKE, pot=pot, players_dealt_in=len(PLAYERS), saw_flop=True)
    winner = PLAYERS[n % len(PLAYERS)]
    settle = SettleHand(
        request_id=f"s{n}",
        table_id="t1",
        hand_no=n,
        contributions=tuple(PlayerAmount(player=p, amount=bet) for p in PLAYERS),
        payouts=(PlayerAmount(player=winner, amount=pot - rake),),
        rake=rake,
        saw_flop=True,
    )
    for p in PLAYERS:
        seats[p] -= bet
    seats[winner] += pot - rake
    return opened, settle


def _pure(hands: int) -> float:
    state = LedgerState()
    seats = dict.fromkeys(PLAYERS, STACK)
    commands = _setup()
    for n in range(1, hands + 1):
        commands.extend(_hand(n, seats))
    started = time.perf_counter()
    for command in commands:
        for event in decide(state, command).events:
            evolve(state, event)
    return hands / (time.perf_counter() - started)


async def _measure(url: str, hands: int) -> dict[str, Any]:
    nc = await nats.connect(url)
    try:
        app = WalletApp(await open_store(nc), currency="CHIPS", snapshot_every=10**9)
        await app.start()
        for command in _setup():
            await app.execute(command)
        seats = dict.fromkeys(PLAYERS, STACK)
        started = time.perf_counter()
        for n in range(1, hands + 1):
            opened, settle = _hand(n, seats)
            await app.execute(opened)
            await app.execute(settle)
        elapsed = time.perf_counter() - started
        store = app.store
        started = time.perf_counter()
        await store.load(use_snapshot=False)
        full_replay = time.perf_counter() - started
        await app.snapshot()
        started = time.perf_counter()
        await store.load(use_snapshot=True)
        from_snapshot = time.perf_counter() - started
    finally:
        await nc.close()
    return {
        "hands": hands,
        "players_dealt_in": len(PLAYERS),
        "hands_settled_per_s": round(hands / elapsed),
        "restart_full_replay_ms": round(full_replay * 1000),
        "restart_from_snapshot_ms": round(from_snapshot * 1000),
        "peer_pure_core_hands_per_s": round(_pure(hands)),
    }


SERVICE_STACK = 10_000
SERVICE_RAKE = pb.RakeRules(basis_points=500, caps=[pb.RakeCap(min_players_dealt_in=2, cap=50)])


async def _service_table(stub: Any, table_id: str, seats: dict[str, int], first: int, hands: int) -> None:
    """The dealer's two wallet calls per hand at a heads-up table (``seats`` move as won)."""
    players = sorted(seats)
    dealer = (("x-caller", "dealer"),)
    for n in range(first, first + hands):
        stacks = [pb.PlayerAmount(player=p, amount=seats[p]) for p in players]
        await stub.OpenHand(
            pb.OpenHandRequest(
                request_id=f"{table_id}-{n}-open",
                table_id=table_id,
                hand_number=n,
                stacks=stacks,
                rake=SERVICE_RAKE,
            ),
            metadata=dealer,
        )
        bet = 2 + n % 5
        rake = compute_rake(
            RakeRules(basis_points=500, caps=((2, 50),)), pot=2 * bet, players_dealt_in=2, saw_flop=True
        )
        winner = players[n % 2]
        await stub.SettleHand(
            pb.SettleHandRequest(
                request_id=f"{table_id}-{n}-settle",
                table_id=table_id,
                hand_number=n,
                contributions=[pb.PlayerAmount(player=p, amount=bet) for p in players],
                payouts=[pb.PlayerAmount(player=winner, amount=2 * bet - rake)],
                rake=rake,
                saw_flop=True,
            ),
            metadata=dealer,
        )
        for p in players:
            seats[p] -= bet
        seats[winner] += 2 * bet - rake


async def _service(url: str, data: Path, tables: int, hands: int) -> dict[str, Any]:
    port = _free_port()
    env = {
        **os.environ,
        "POKER_NATS_URL": url,
        "POKER_WALLET_PORT": str(port),
        "POKER_LOG_LEVEL": "info",
        "POKER_LOG_FORMAT": "json",
    }
    proc = _spawn("openpoker.services.wallet", env, log=data / "wallet.log")
    try:
        target = f"127.0.0.1:{port}"
        await _serving(target)
        async with channel(target) as chan:
            stub: Any = pb_grpc.WalletServiceStub(chan)
            names = [f"bench-wallet-{t}" for t in range(tables)]
            for table_id in names:
                for player in (f"{table_id}-a", f"{table_id}-b"):
                    await stub.Deposit(
                        pb.DepositRequest(request_id=f"d-{player}", player=player, amount=SERVICE_STACK),
                        metadata=(("x-caller", "cashier"),),
                    )
                    await stub.BuyIn(
                        pb.BuyInRequest(
                            request_id=f"b-{player}", table_id=table_id, player=player, amount=SERVICE_STACK
                        ),
                        metadata=(("x-caller", "table"),),
                    )
            seats = {t: {f"{t}-a": SERVICE_STACK, f"{t}-b": SERVICE_STACK} for t in names}
            # Warm-up, and a ledger that is not new: as many hands before the measured ones.
            await asyncio.gather(*(_service_table(stub, t, seats[t], 1, hands) for t in names))
            measured = asyncio.gather(*(_service_table(stub, t, seats[t], 1 + hands, hands) for t in names))
            elapsed, cpu = await _measured(proc.pid, measured)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    total = tables * hands
    return {
        "service_tables": tables,
        "service_hands": total,
        "service_hands_before": total,
        "service_wallet_cpu_s": round(cpu, 2),
        "service_wallet_cpu_ms_per_hand": round(1000 * cpu / total, 3),
        "service_hands_per_s": round(total / elapsed, 1),
    }


def run(quick: bool) -> dict[str, Any]:
    hands = 100 if quick else 1000
    with tempfile.TemporaryDirectory() as tmp, NatsServer(data_dir=Path(tmp)) as server:
        result = asyncio.run(_measure(server.url, hands))
    tables, per_table = (4, 25) if quick else (20, 100)
    with tempfile.TemporaryDirectory() as tmp, NatsServer(data_dir=Path(tmp) / "nats") as server:
        result.update(asyncio.run(_service(server.url, Path(tmp), tables, per_table)))
    return result


def run_service_only(quick: bool) -> dict[str, Any]:
    """Only the service-process figure (``python -c 'import bench.wallet as w; ...'``)."""
    tables, per_table = (4, 25) if quick else (20, 100)
    with tempfile.TemporaryDirectory() as tmp, NatsServer(data_dir=Path(tmp) / "nats") as server:
        return asyncio.run(_service(server.url, Path(tmp), tables, per_table))
