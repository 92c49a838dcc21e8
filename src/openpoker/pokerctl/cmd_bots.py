"""``pokerctl bots``: bots that play seats through the public gRPC API, at any number of tables.

Either name the tables (``--table ID``, repeatable) or let the command create them
(``--create N``: Hold'em, Omaha and Six Plus in turn, in no limit, pot limit and fixed limit in
turn, ids ``{prefix}1..N``). Each table gets ``--players`` bots (deposit, join with a buy-in,
post, play from the legal actions, now and then sit out and in, top up, leave and rejoin). Runs
until Ctrl-C, or until the tables have played ``--hands`` hands between them, printing a status
line every few seconds. Services: ``--table-target`` and ``--wallet-target`` (defaults
``$POKER_TABLE_TARGET`` / ``$POKER_WALLET_TARGET`` or the local default ports).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl.bots import Behaviour, BotRun, create_table, start_bots
from openpoker.pokerctl.cmd_demo import hands_played, percentile, table_plan
from openpoker.shell.client import channel
from openpoker.shell.config import DEFAULT_PORTS


def _target(service: str) -> str:
    return os.environ.get(f"POKER_{service.upper()}_TARGET", f"127.0.0.1:{DEFAULT_PORTS[service]}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bots = sub.add_parser(
        "bots",
        help="play seats with bots through the gRPC API",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bots.add_argument("--table", action="append", default=[], help="a table to play at (repeatable)")
    bots.add_argument("--create", type=int, default=0, help="create N tables and play at them")
    bots.add_argument("--prefix", default="bots-", help="id prefix of created tables")
    bots.add_argument("--players", type=int, default=4, help="bots per table (default 4)")
    bots.add_argument("--hands", type=int, default=0, help="stop after this many hands (0 = never)")
    bots.add_argument("--think-ms", type=int, default=0, help="pause before each action")
    bots.add_argument("--seed", type=int, default=1, help="random seed of the bots' choices")
    bots.add_argument("--table-target", default=None)
    bots.add_argument("--wallet-target", default=None)
    bots.set_defaults(func=run)


async def status_line(stub: Any, run: BotRun, names: list[str]) -> str:
    lat = run.stats.latencies_ms
    played = await hands_played(stub, names)
    return (
        f"tables {len(names)}  hands {played}  actions {run.stats.actions}  "
        f"act p50 {percentile(lat, 50):.1f} ms p99 {percentile(lat, 99):.1f} ms  "
        f"refused {sum(run.stats.refused.values())}"
    )


async def play_bots(
    *,
    table_target: str,
    wallet_target: str,
    names: list[str],
    players: int,
    behaviour: Behaviour,
    seed: int,
    stop: asyncio.Event,
    hands: int = 0,
    report: Any = None,
) -> BotRun:
    """Run bots at ``names`` until ``stop`` is set (or ``hands`` are played); returns the run."""
    run = await start_bots(
        table_target=table_target,
        wallet_target=wallet_target,
        tables=names,
        players_per_table=players,
        seed=seed,
        behaviour=behaviour,
    )
    try:
        async with channel(table_target) as chan:
            stub: Any = tgrpc.TableServiceStub(chan)
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=3.0)
                if report is not None:
                    report(await status_line(stub, run, names))
                if hands and await hands_played(stub, names) >= hands:
                    break
    finally:
        await run.stop()
    return run


async def _bots(args: argparse.Namespace) -> int:
    table_target = args.table_target or _target("table")
    wallet_target = args.wallet_target or _target("wallet")
    names = list(args.table)
    for name, config in table_plan(args.create, args.prefix):
        await create_table(table_target, name, config)
        names.append(name)
    if not names:
        print("no tables: give --table ID or --create N", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"bots at {', '.join(names)}: {args.players} each; Ctrl-C to stop", flush=True)
    await play_bots(
        table_target=table_target,
        wallet_target=wallet_target,
        names=names,
        players=args.players,
        behaviour=Behaviour(think_ms=args.think_ms),
        seed=args.seed,
        stop=stop,
        hands=args.hands,
        report=lambda line: print(line, flush=True),
    )
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_bots(args))
