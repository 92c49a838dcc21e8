"""``pokerctl demo --hands N [--tables T] [--json] [--data-dir DIR]``: the whole system, end to end.

Starts nats-server and the four services on a data folder (a temporary one, removed afterwards,
unless ``--data-dir`` is given: that one is kept), creates T tables (Hold'em, Omaha and Six Plus
in turn, in no limit, pot limit and fixed limit in turn), seats bots that play through the gRPC
API until the tables have played N hands between them, then pauses dealing, lets the hands in
flight finish, stops the bots and checks chip conservation across the wallet and the tables
(``pokerctl.chips``). It stops everything and prints one summary::

    {"hands": ..., "tables": ..., "seconds": ..., "hands_per_s": ..., "actions": ...,
     "action_latency_ms": {"p50": ..., "p99": ...}, "chips_conserved": true, "data_dir": ...}

Exit 0 only if every hand completed and chips were conserved.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dgrpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tgrpc
from pokerctl.bots import QUIET, Behaviour, BotRun, create_table, start_bots, table_config
from pokerctl.chips import ChipReport, check_chips, house_balance
from pokerctl.local import LocalSystem, StartError
from shell.client import channel

GAME_CYCLE = ("holdem", "omaha", "sixplus")
DEFAULT_BEHAVIOUR = Behaviour()
STRUCTURE_CYCLE = ("nl", "pl", "fl")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser(
        "demo",
        help="start everything, play N hands with bots, check chips, stop",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--hands", type=int, required=True, help="hands to play (all tables together)")
    demo.add_argument("--tables", type=int, default=1, help="tables (default 1)")
    demo.add_argument("--players", type=int, default=4, help="bots per table (default 4)")
    demo.add_argument("--json", action="store_true", help="print only the JSON summary")
    demo.add_argument("--data-dir", type=Path, default=None, help="data folder to use and keep")
    demo.add_argument("--seed", type=int, default=1, help="bots' random seed")
    demo.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")
    demo.set_defaults(func=run)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


@dataclass(slots=True)
class Played:
    hands: int
    seconds: float
    report: ChipReport
    bots: BotRun


def table_plan(count: int, prefix: str) -> list[tuple[str, tpb.TableConfig]]:
    out = []
    for i in range(count):
        game = GAME_CYCLE[i % len(GAME_CYCLE)]
        structure = STRUCTURE_CYCLE[(i // len(GAME_CYCLE)) % len(STRUCTURE_CYCLE)]
        out.append((f"{prefix}{i + 1}", table_config(game, structure, name=f"{game} {structure}")))
    return out


async def hands_played(tables: Any, names: list[str]) -> int:
    total = 0
    for name in names:
        got = await tables.GetTable(tpb.GetTableRequest(name=f"tables/{name}"), timeout=5.0)
        total += int(got.table.hands_played)
    return total


async def quiesce(dealer_target: str, names: list[str]) -> None:
    """Pause dealing at every table and wait for the hands in flight to finish."""
    async with channel(dealer_target) as chan:
        dealer: Any = dgrpc.DealerServiceStub(chan)
        for name in names:
            await dealer.PauseTable(
                dpb.PauseTableRequest(request_id=str(uuid.uuid4()), table=f"tables/{name}"), timeout=5.0
            )
        while True:
            got = await dealer.ListActiveHands(dpb.ListActiveHandsRequest(page_size=500), timeout=5.0)
            if not any(h.table_id in names for h in got.hands):
                return
            await asyncio.sleep(0.05)


async def play(
    targets: dict[str, str],
    *,
    hands: int,
    tables: int,
    players: int,
    seed: int,
    prefix: str = "demo-",
    behaviour: Behaviour = DEFAULT_BEHAVIOUR,
    on_view: Any = None,
    check: bool = True,
) -> Played:
    """Create the tables, play ``hands`` hands with bots, quiesce, check chips (the bots are
    stopped before returning; their stats stay in ``Played.bots``)."""
    plan = table_plan(tables, prefix)
    names = [name for name, _ in plan]
    for name, config in plan:
        await create_table(targets["table"], name, config)
    house_before = await house_balance(targets["wallet"])
    started = time.perf_counter()
    bots = await start_bots(
        table_target=targets["table"],
        wallet_target=targets["wallet"],
        tables=names,
        players_per_table=players,
        seed=seed,
        behaviour=behaviour,
        on_view=on_view,
    )
    try:
        async with channel(targets["table"]) as chan:
            stub: Any = tgrpc.TableServiceStub(chan)
            while await hands_played(stub, names) < hands:
                failures = bots.failures()
                if failures:
                    raise RuntimeError(f"a bot failed: {failures[0]!r}")
                await asyncio.sleep(0.05)
        await quiesce(targets["dealer"], names)
        seconds = time.perf_counter() - started
    finally:
        await bots.stop()
    report = ChipReport(conserved=True)
    if check:
        report = await check_chips(
            table_target=targets["table"],
            wallet_target=targets["wallet"],
            table_ids=names,
            players={n: {b.player for b in bots.bots if b.table_id == n} for n in names},
            deposits=bots.stats.deposited,
            house_before=house_before,
        )
    async with channel(targets["table"]) as chan:
        total = await hands_played(tgrpc.TableServiceStub(chan), names)
    return Played(hands=total, seconds=seconds, report=report, bots=bots)


def summary(played: Played, *, tables: int, data_dir: Path) -> dict[str, Any]:
    lat = played.bots.stats.latencies_ms
    return {
        "hands": played.hands,
        "tables": tables,
        "seconds": round(played.seconds, 3),
        "hands_per_s": round(played.hands / played.seconds, 2) if played.seconds else 0.0,
        "actions": played.bots.stats.actions,
        "action_latency_ms": {"p50": round(percentile(lat, 50), 3), "p99": round(percentile(lat, 99), 3)},
        "chips_conserved": played.report.conserved,
        "data_dir": str(data_dir),
    }


async def _demo(args: argparse.Namespace) -> int:
    keep = args.data_dir is not None
    data_dir = Path(args.data_dir) if keep else Path(tempfile.mkdtemp(prefix="pokerctl-demo-"))
    system = LocalSystem(data_dir=data_dir, free_ports=True)

    def say(text: str) -> None:
        if not args.json:
            print(text, file=sys.stderr, flush=True)

    try:
        say(f"starting nats-server and the services on {data_dir}")
        try:
            await system.start()
        except StartError as exc:
            print(f"start failed: {exc}", file=sys.stderr)
            return 1
        say(f"playing {args.hands} hands at {args.tables} table(s) with {args.players} bots each")
        played = await asyncio.wait_for(
            play(
                system.targets,
                hands=args.hands,
                tables=args.tables,
                players=args.players,
                seed=args.seed,
                prefix=f"demo-{uuid.uuid4().hex[:6]}-" if keep else "demo-",
                behaviour=DEFAULT_BEHAVIOUR if args.players > 2 else QUIET,
            ),
            timeout=args.timeout,
        )
    finally:
        await system.stop()
        if not keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    out = summary(played, tables=args.tables, data_dir=data_dir)
    for problem in played.report.problems:
        say(f"chips: {problem}")
    print(json.dumps(out), flush=True)
    completed = played.hands >= args.hands and not any("not finished" in p for p in played.report.problems)
    return 0 if completed and played.report.conserved else 1


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_demo(args))
