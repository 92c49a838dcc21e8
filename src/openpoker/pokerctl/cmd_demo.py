"""``pokerctl demo --hands N [--tables T] [--json] [--data-dir DIR] [--insecure]``: the whole system.

Starts nats-server and the four services on a data folder (a temporary one, removed afterwards,
unless ``--data-dir`` is given: that one is kept), creates T tables (Hold'em, Omaha and Six Plus
in turn, in no limit, pot limit and fixed limit in turn), seats bots that play through the gRPC
API until the tables have played N hands between them, then pauses dealing, lets the hands in
flight finish, stops the bots and checks chip conservation across the wallet and the tables
(``pokerctl.chips``). It stops everything and prints one summary::

    {"hands": ..., "tables": ..., "seconds": ..., "hands_per_s": ..., "actions": ...,
     "action_latency_ms": {"p50": ..., "p99": ...}, "chips_conserved": true, "data_dir": ...}

The system runs secure (TLS, the local PKI under the data folder; the bots are players with
tokens, ``pokerctl`` staff with its certificate) unless ``--insecure`` (plaintext, as the
benchmark without security). Exit 0 only if every hand completed and chips were conserved. A
table that deals no hand for ``--stall-seconds`` (default 60) stops the run with an error naming
the table and its state.
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as dgrpc
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl.bots import QUIET, Behaviour, BotRun, create_table, start_bots, table_config
from openpoker.pokerctl.chips import ChipReport, check_chips, house_balance
from openpoker.pokerctl.connect import Connection
from openpoker.pokerctl.local import LocalSystem, StartError

GAME_CYCLE = ("holdem", "omaha", "sixplus")
DEFAULT_BEHAVIOUR = Behaviour()
STRUCTURE_CYCLE = ("nl", "pl", "fl")
# A table that deals no hand for this long is stuck: bots' clocks are seconds, a hand takes a few.
STALL_SECONDS = 60.0


class TableStalled(RuntimeError):
    """A table dealt no hand for ``seconds``; the message says how the table and dealer stand."""

    def __init__(self, *, table_id: str, seconds: float, state: str) -> None:
        super().__init__(f"table {table_id} dealt no hand for {seconds:.0f} s: {state}")
        self.table_id = table_id
        self.seconds = seconds
        self.state = state


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
    demo.add_argument("--insecure", action="store_true", help="run the system plaintext (no TLS, no tokens)")
    demo.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")
    demo.add_argument(
        "--stall-seconds",
        type=float,
        default=STALL_SECONDS,
        help=f"fail when a table deals no hand for this long (default {STALL_SECONDS:g})",
    )
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


async def hands_played(tables: Any, names: list[str], *, metadata: tuple[tuple[str, str], ...] = ()) -> int:
    total = 0
    for name in names:
        got = await tables.GetTable(
            tpb.GetTableRequest(name=f"tables/{name}"), timeout=5.0, metadata=metadata
        )
        total += int(got.table.hands_played)
    return total


def _enum(name: str) -> str:
    """``SEAT_STATUS_SITTING_OUT`` -> ``sitting_out``."""
    for prefix in ("SEAT_STATUS_", "HAND_STAGE_", "TABLE_STATUS_"):
        name = name.removeprefix(prefix)
    return name.lower()


def describe(table: tpb.Table, active: list[dpb.ActiveHand]) -> str:
    """One line on where a table stands: status, version, seats and the dealer's hand."""
    seats = ", ".join(
        f"{s.seat}:{s.player_id} {_enum(tpb.SeatStatus.Name(s.status))} {s.stack}"
        + (" disconnected" if s.disconnected else "")
        + (" owes" if s.owes_big_blind or s.owes_small_blind else "")
        for s in table.seats
        if s.player_id
    )
    dealer = "; ".join(
        f"{h.hand_id} {_enum(dpb.HandStage.Name(h.stage))}"
        + (f" seat {h.seat_to_act} to act" if h.HasField("action_deadline") else "")
        for h in active
        if h.table_id == table.table_id
    )
    status = _enum(tpb.TableStatus.Name(table.status))
    return (
        f"status {status}, version {table.version}, hands played {table.hands_played}, "
        f"seats [{seats or 'none'}], dealer's hand in flight: {dealer or 'none'}"
    )


class StallWatch:
    """Per table, when its count of hands last moved; ``check`` raises ``TableStalled``."""

    def __init__(self, names: list[str], *, seconds: float, clock: Any = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        now = clock()
        self._seen: dict[str, tuple[int, float]] = dict.fromkeys(names, (-1, now))

    def stuck(self, tables: dict[str, tpb.Table]) -> list[str]:
        """The tables whose hands have not moved for ``seconds`` (updating what was seen)."""
        now = self._clock()
        out = []
        for name, table in tables.items():
            played, since = self._seen[name]
            if table.hands_played != played:
                self._seen[name] = (table.hands_played, now)
            elif now - since > self.seconds:
                out.append(name)
        return out


async def _progress(stub: Any, conn: Connection, names: list[str], watch: StallWatch) -> int:
    """Hands played at ``names``; raises ``TableStalled`` for a table that deals no more."""
    tables = {}
    meta = conn.staff_metadata()
    for name in names:
        got = await stub.GetTable(tpb.GetTableRequest(name=f"tables/{name}"), timeout=5.0, metadata=meta)
        tables[name] = got.table
    stuck = watch.stuck(tables)
    if stuck:
        async with conn.staff_channel("dealer") as chan:
            dealer: Any = dgrpc.DealerServiceStub(chan)
            got = await dealer.ListActiveHands(
                dpb.ListActiveHandsRequest(page_size=500), timeout=5.0, metadata=meta
            )
        name = stuck[0]
        state = describe(tables[name], list(got.hands))
        raise TableStalled(table_id=name, seconds=watch.seconds, state=state)
    return sum(int(t.hands_played) for t in tables.values())


async def quiesce(dealer_target: str, names: list[str], *, conn: Connection | None = None) -> None:
    """Pause dealing at every table and wait for the hands in flight to finish."""
    conn = conn if conn is not None else Connection.plaintext({"dealer": dealer_target})
    meta = conn.staff_metadata()
    async with conn.staff_channel("dealer") as chan:
        dealer: Any = dgrpc.DealerServiceStub(chan)
        for name in names:
            await dealer.PauseTable(
                dpb.PauseTableRequest(request_id=str(uuid.uuid4()), table=f"tables/{name}"),
                timeout=5.0,
                metadata=meta,
            )
        while True:
            got = await dealer.ListActiveHands(
                dpb.ListActiveHandsRequest(page_size=500), timeout=5.0, metadata=meta
            )
            if not any(h.table_id in names for h in got.hands):
                return
            await asyncio.sleep(0.05)


async def play(
    targets: Mapping[str, str] | Connection,
    *,
    hands: int,
    tables: int,
    players: int,
    seed: int,
    prefix: str = "demo-",
    behaviour: Behaviour = DEFAULT_BEHAVIOUR,
    on_view: Any = None,
    check: bool = True,
    stall_seconds: float = STALL_SECONDS,
) -> Played:
    """Create the tables, play ``hands`` hands with bots, quiesce, check chips (the bots are
    stopped before returning; their stats stay in ``Played.bots``). A table that deals no hand
    for ``stall_seconds`` raises ``TableStalled`` (naming the table and how it stands) instead
    of waiting forever. ``targets`` is a ``Connection`` (``Connection.of_system``) or the
    plaintext targets."""
    conn = targets if isinstance(targets, Connection) else Connection.plaintext(targets)
    plan = table_plan(tables, prefix)
    names = [name for name, _ in plan]
    for name, config in plan:
        await create_table(conn.target("table"), name, config, conn=conn)
    house_before = await house_balance(conn.target("wallet"), conn=conn)
    started = time.perf_counter()
    bots = await start_bots(
        table_target=conn.target("table"),
        wallet_target=conn.target("wallet"),
        tables=names,
        players_per_table=players,
        seed=seed,
        behaviour=behaviour,
        on_view=on_view,
        conn=conn,
    )
    try:
        watch = StallWatch(names, seconds=stall_seconds)
        async with conn.staff_channel("table") as chan:
            stub: Any = tgrpc.TableServiceStub(chan)
            while await _progress(stub, conn, names, watch) < hands:
                failures = bots.failures()
                if failures:
                    raise RuntimeError(f"a bot failed: {failures[0]!r}")
                await asyncio.sleep(0.05)
        await quiesce(conn.target("dealer"), names, conn=conn)
        seconds = time.perf_counter() - started
    finally:
        await bots.stop()
    report = ChipReport(conserved=True)
    if check:
        report = await check_chips(
            table_target=conn.target("table"),
            wallet_target=conn.target("wallet"),
            table_ids=names,
            players={n: {b.player for b in bots.bots if b.table_id == n} for n in names},
            deposits=bots.stats.deposited,
            house_before=house_before,
            conn=conn,
        )
    async with conn.staff_channel("table") as chan:
        total = await hands_played(tgrpc.TableServiceStub(chan), names, metadata=conn.staff_metadata())
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
    system = LocalSystem(data_dir=data_dir, free_ports=True, secure=not args.insecure)

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
                Connection.of_system(system),
                hands=args.hands,
                tables=args.tables,
                players=args.players,
                seed=args.seed,
                prefix=f"demo-{uuid.uuid4().hex[:6]}-" if keep else "demo-",
                behaviour=DEFAULT_BEHAVIOUR if args.players > 2 else QUIET,
                stall_seconds=args.stall_seconds,
            ),
            timeout=args.timeout,
        )
    except TableStalled as exc:
        print(f"stalled: {exc}", file=sys.stderr)
        return 1
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
