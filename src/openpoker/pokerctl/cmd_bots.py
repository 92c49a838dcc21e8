"""``pokerctl bots``: bots that play seats through the public gRPC API, at any number of tables.

Either name the tables (``--table ID``, repeatable) or let the command create them
(``--create N``: Hold'em, Omaha and Six Plus in turn, in no limit, pot limit and fixed limit in
turn, ids ``{prefix}1..N``). Each table gets ``--players`` bots (deposit, join with a buy-in,
post, play from the legal actions, now and then sit out and in, top up, leave and rejoin). Runs
until Ctrl-C, or until the tables have played ``--hands`` hands between them, printing a status
line every few seconds. Services: ``--table-target`` and ``--wallet-target`` (defaults
``$POKER_TABLE_TARGET`` / ``$POKER_WALLET_TARGET`` or the local default ports).

On a secure system (``--data-dir DATA`` of ``pokerctl up``) tables are created and
bots' deposits made as ``pokerctl`` (staff certificate, service ports); each bot plays as a
player with a token minted from the data folder's token key, on the table's client port
(``--table-client-target``, default the table port + 100). ``--insecure``: plaintext.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import Any

from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl import connect
from openpoker.pokerctl.bots import Behaviour, BotRun, create_table, start_bots
from openpoker.pokerctl.cmd_demo import hands_played, percentile, table_plan
from openpoker.pokerctl.connect import Connection

SERVICES = ("table", "wallet")


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
    connect.add_arguments(bots, services=SERVICES)
    bots.set_defaults(func=run)


async def status_line(stub: Any, run: BotRun, names: list[str], *, metadata: connect.Metadata = ()) -> str:
    lat = run.stats.latencies_ms
    played = await hands_played(stub, names, metadata=metadata)
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
    conn: Connection | None = None,
) -> BotRun:
    """Run bots at ``names`` until ``stop`` is set (or ``hands`` are played); returns the run."""
    conn = (
        conn if conn is not None else Connection.plaintext({"table": table_target, "wallet": wallet_target})
    )
    run = await start_bots(
        table_target=table_target,
        wallet_target=wallet_target,
        tables=names,
        players_per_table=players,
        seed=seed,
        behaviour=behaviour,
        conn=conn,
    )
    try:
        async with conn.staff_channel("table") as chan:
            stub: Any = tgrpc.TableServiceStub(chan)
            meta = conn.staff_metadata()
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=3.0)
                if report is not None:
                    report(await status_line(stub, run, names, metadata=meta))
                if hands and await hands_played(stub, names, metadata=meta) >= hands:
                    break
    finally:
        await run.stop()
    return run


async def _bots(args: argparse.Namespace) -> int:
    try:
        conn = connect.from_args(args, services=SERVICES)
    except connect.MissingCredentials as exc:
        print(f"bots: {exc}", file=sys.stderr)
        return 2
    if conn.secure and conn.issuer is None:  # fail now, not once per bot
        print("bots: each bot needs a player token: give --data-dir (DATA/pki/token.key)", file=sys.stderr)
        return 2
    table_target, wallet_target = conn.target("table"), conn.target("wallet")
    names = list(args.table)
    for name, config in table_plan(args.create, args.prefix):
        await create_table(table_target, name, config, conn=conn)
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
        conn=conn,
    )
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_bots(args))
