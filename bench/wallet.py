"""Wallet on a local nats-server (R1, file storage): hands settled per second, and restart time.

Ours: ``WalletApp.execute`` of OpenHand + SettleHand for 6 players dealt in (one linked batch
each, one JetStream message each), one hand after another; then a restart: full replay of the
log versus snapshot + tail. Peer, same run: the pure ledger core alone (``decide`` + ``evolve``
in memory, no I/O), the floor the persistence sits on.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import nats

from engine.rake import compute_rake
from engine.rules import RakeRules
from services.wallet.app import WalletApp
from services.wallet.commands import BuyIn, Command, Deposit, OpenHand, PlayerAmount, SettleHand
from services.wallet.ledger import LedgerState, decide, evolve
from services.wallet.server import open_store
from shell.natsproc import NatsServer

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


def run(quick: bool) -> dict[str, Any]:
    hands = 100 if quick else 1000
    with tempfile.TemporaryDirectory() as tmp, NatsServer(data_dir=Path(tmp)) as server:
        return asyncio.run(_measure(server.url, hands))
