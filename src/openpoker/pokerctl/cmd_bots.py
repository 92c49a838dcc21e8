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

Faults do not stop the bots: a call that fails with UNAVAILABLE, DEADLINE_EXCEEDED or
RESOURCE_EXHAUSTED is sent again with the same request id after back-off (50 ms doubling to
2 s, with jitter), and a broken table stream is opened again, so a run outlives a service's
restart. A bot gives up when a service refuses it (its deposit or seat refused) or stays away
longer than ``--patience`` seconds (default 120; 0 waits for ever); each give-up is printed on
stderr. Exit 0 when stopped (Ctrl-C, or ``--hands`` played) with every bot playing, 1 when a bot
gave up (at once, with a message, when every bot has), 2 when the input or credentials are wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import Any

import grpc

from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl import connect
from openpoker.pokerctl.bots import PATIENCE, Behaviour, BotRun, create_table, start_bots
from openpoker.pokerctl.cmd_demo import hands_played, percentile, table_plan
from openpoker.pokerctl.connect import Connection
from openpoker.shell.client import rich_error
from openpoker.shell.retry import transient

SERVICES = ("table", "wallet")
STATUS_SECONDS = 3.0


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
    bots.add_argument(
        "--patience",
        type=float,
        default=PATIENCE,
        help=f"seconds a bot tries through faults before it gives up (default {PATIENCE:.0f}; 0: for ever)",
    )
    connect.add_arguments(bots, services=SERVICES)
    bots.set_defaults(func=run)


async def status_line(stub: Any, run: BotRun, names: list[str], *, metadata: connect.Metadata = ()) -> str:
    lat = run.stats.latencies_ms
    try:
        played = str(await hands_played(stub, names, metadata=metadata))
    except grpc.RpcError as err:
        if not transient(err):
            raise
        played = f"? (table service: {err.code().name})"
    gave_up = len(run.ended())
    return (
        f"tables {len(names)}  hands {played}  actions {run.stats.actions}  "
        f"act p50 {percentile(lat, 50):.1f} ms p99 {percentile(lat, 99):.1f} ms  "
        f"refused {sum(run.stats.refused.values())}" + (f"  gave up {gave_up}" if gave_up else "")
    )


async def _played_enough(stub: Any, names: list[str], hands: int, metadata: connect.Metadata) -> bool:
    try:
        return await hands_played(stub, names, metadata=metadata) >= hands
    except grpc.RpcError as err:
        if not transient(err):
            raise
        return False  # the table service is away: ask again at the next status


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _why(exc: BaseException | None) -> str:
    if isinstance(exc, grpc.RpcError):
        info = rich_error(exc)
        return f"{info.code.name} {info.reason} {info.message}".strip()
    return "ended" if exc is None else str(exc) or repr(exc)


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
    patience: float | None = PATIENCE,
    warn: Callable[[str], None] = _to_stderr,
) -> BotRun:
    """Run bots at ``names`` until ``stop`` is set, ``hands`` are played or every bot has given
    up (each give-up told to ``warn`` as it happens); returns the run."""
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
        patience=patience,
    )
    loop = asyncio.get_running_loop()
    stopping = loop.create_task(stop.wait())
    told: set[str] = set()
    try:
        async with conn.staff_channel("table") as chan:
            stub: Any = tgrpc.TableServiceStub(chan)
            meta = conn.staff_metadata()
            next_status = loop.time() + STATUS_SECONDS
            while not stop.is_set():
                # Wake for the status line, a stop, or a bot that ends (told at once).
                live = [t for t in run.tasks if not t.done()]
                await asyncio.wait(
                    [stopping, *live],
                    timeout=max(0.0, next_status - loop.time()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for player, exc in run.ended():
                    if player not in told:
                        told.add(player)
                        warn(f"bots: {player} gave up: {_why(exc)}")
                if run.all_ended():
                    warn(f"bots: every bot gave up ({len(run.tasks)}); stopping")
                    break
                if loop.time() < next_status:
                    continue
                next_status = loop.time() + STATUS_SECONDS
                if report is not None:
                    report(await status_line(stub, run, names, metadata=meta))
                if hands and await _played_enough(stub, names, hands, meta):
                    break
    finally:
        stopping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stopping
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
    patience = args.patience if args.patience > 0 else None
    names = list(args.table)
    for name, config in table_plan(args.create, args.prefix):
        try:
            await create_table(table_target, name, config, conn=conn, within=patience)
        except grpc.RpcError as err:
            print(f"bots: could not create table {name}: {_why(err)}", file=sys.stderr)
            return 1
        names.append(name)
    if not names:
        print("no tables: give --table ID or --create N", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"bots at {', '.join(names)}: {args.players} each; Ctrl-C to stop", flush=True)
    played = await play_bots(
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
        patience=patience,
    )
    gave_up = played.ended()
    if gave_up:
        print(f"bots: {len(gave_up)} of {len(played.tasks)} bots gave up", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_bots(args))
