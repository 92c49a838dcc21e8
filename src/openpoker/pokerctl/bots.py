"""Bots that play seats through the public gRPC API (used by ``pokerctl bots``, ``pokerctl demo``,
``make run``, the end-to-end tests and the system benchmark).

A bot deposits chips in the wallet, joins its table with a buy-in (posting at once), and then
follows the table through ``WatchTable`` as its own player (so it sees only what that player may
see). Whenever the view says it is the bot's turn it picks from the legal actions and sends
``Act`` with the hand id and the version it saw (a stale view is refused with ABORTED and simply
waits for the next one); its actions go over one ``ActStream`` (``shell.streamcalls``). Between
hands it now and then sits out and back in, tops up a short stack, or leaves and rejoins; while
its table waits for players it keeps trying to come back (on every new version, and every
``IDLE_RETRY_SECONDS`` when nothing new arrives: a refusal such as the wallet still settling the
hand it left is transient). Its choices come from a seeded
``random.Random``: reproducible games, not cryptography (the deck comes from the rng service).

Connections (``pokerctl.connect``): on a secure system each bot is a player with its own player
token on the table's client port, and its deposits go to the wallet's service port as
``pokerctl`` (staff certificate); on a plaintext one the ``x-caller`` / ``x-player-id`` headers
say who calls. Without a ``conn`` the functions here take plaintext targets.

Faults (``shell.retry``): every call that fails for want of a service (UNAVAILABLE,
DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) is sent again, the same request with the same request id
(the services are idempotent by it: nothing is applied twice), after capped back-off with jitter;
a broken ``WatchTable`` is opened again and the ``ActStream`` reopens on the next act. A bot
gives up (``BotGaveUp``, its task ends with it) only when the service refuses it for good at
the start (a deposit or a seat refused: an answer, not a fault) or when it has gone ``patience``
seconds (default ``PATIENCE``; None: never) without getting its deposit, its seat or its table
view through. Refusals during play are counted (``BotStats.refused``) and the bot plays on.

Every ``Act`` round trip is timed (``BotStats.latencies_ms``); views are kept for the privacy
checks when ``record_views`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wgrpc
from openpoker.errors import OpenPokerError
from openpoker.pokerctl.connect import CALLER, Connection, Metadata
from openpoker.shell.client import rich_error
from openpoker.shell.logs import get_logger
from openpoker.shell.retry import BACKOFF, retry, retry_unary, transient
from openpoker.shell.streamcalls import StreamedCalls

DEADLINE = 5.0
# A table waiting for players sends nothing new; a bot whose way back in was refused (the wallet
# still settling the hand it left, ...) tries again this often instead of waiting for a change.
IDLE_RETRY_SECONDS = 0.5
# How long a bot keeps trying through faults to deposit, take its seat or see its table before
# it gives up: long enough to outlive a service's restart, short enough that a bots process
# pointed at a system that is not there ends (``pokerctl bots --patience``).
PATIENCE = 120.0
# An action is worth retrying only while its decision clock may still run.
ACT_PATIENCE = 10.0
# Between-hands business (sit in or out, top up, leave) is tried again at the next hand anyway.
BUSINESS_PATIENCE = 10.0

GAMES: dict[str, int] = {
    "holdem": tpb.GAME_TEXAS_HOLDEM,
    "omaha": tpb.GAME_OMAHA,
    "sixplus": tpb.GAME_SIX_PLUS_HOLDEM,
}
STRUCTURES: dict[str, int] = {
    "nl": tpb.STRUCTURE_NO_LIMIT,
    "pl": tpb.STRUCTURE_POT_LIMIT,
    "fl": tpb.STRUCTURE_FIXED_LIMIT,
}


class BotGaveUp(OpenPokerError):
    """A bot stopped: a service refused it for good, or stayed away longer than its patience."""

    reason = "BOT_GAVE_UP"
    kind = "unavailable"

    def __init__(self, *, player: str, step: str, err: grpc.RpcError, seconds: float | None = None) -> None:
        info = rich_error(err)
        why = f"{info.code.name} {info.reason}".strip()
        after = f" after {seconds:.0f} s of faults" if seconds is not None else ""
        super().__init__(
            f"{player} gave up {step}{after}: {why} {info.message}".strip(),
            player=player,
            step=step,
            code=info.code.name,
            error_reason=info.reason,
        )
        self.player = player
        self.code = info.code


def _rid() -> str:
    return str(uuid.uuid4())


def _act_message(request: tpb.ActRequest) -> tpb.ActStreamRequest:
    # The bot follows the table through WatchTable: the answer's table view would go unread.
    return tpb.ActStreamRequest(request=request, omit_table=True)


def _ms(ms: int) -> Duration:
    return Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def table_config(
    game: str,
    structure: str,
    *,
    seats: int = 6,
    big_blind: int = 2,
    clock_ms: int = 2000,
    rake_bp: int = 500,
    name: str = "",
) -> tpb.TableConfig:
    """A table for bots: blinds bb/2 and bb (fixed limit: bets bb and 2 bb), clocks of
    ``clock_ms`` + ``clock_ms`` (so a stuck bot costs little), 5 % rake capped at 2 big blinds."""
    small = max(1, big_blind // 2)
    stakes = tpb.Stakes(small_blind=small, big_blind=big_blind)
    if structure == "fl":
        stakes.small_bet, stakes.big_bet = big_blind, 2 * big_blind
    return tpb.TableConfig(
        game=GAMES[game],  # type: ignore[arg-type]
        structure=STRUCTURES[structure],  # type: ignore[arg-type]
        stakes=stakes,
        seat_count=seats,
        profile=tpb.RULES_PROFILE_SEEDS,
        rake=tpb.RakeRules(basis_points=rake_bp, caps=[2 * big_blind], no_flop_no_drop=True),
        time=tpb.TimeRules(action_time=_ms(clock_ms), countdown=_ms(clock_ms), reconnect_grace=_ms(clock_ms)),
        display_name=name,
    )


def buy_in_for(config: tpb.TableConfig) -> int:
    """A full buy-in: the table's maximum, or 100 big blinds (fixed limit: 40 big bets)."""
    if config.max_buy_in:
        return int(config.max_buy_in)
    if config.structure == tpb.STRUCTURE_FIXED_LIMIT:
        return int(40 * max(config.stakes.big_bet, config.stakes.big_blind))
    return int(100 * config.stakes.big_blind)


@dataclass(slots=True)
class BotStats:
    actions: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    deposits: int = 0
    deposited: int = 0
    joins: int = 0
    leaves: int = 0
    sit_outs: int = 0
    top_ups: int = 0

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Behaviour:
    """How often a bot does something besides playing (per hand it sees end)."""

    sit_out: float = 0.02
    leave: float = 0.01
    top_up_below: float = 0.5  # top up when the stack is under this fraction of a buy-in
    fold: float = 0.15
    raise_: float = 0.15
    bet: float = 0.2
    think_ms: int = 0  # pause before acting (``make run``: a pace a human can follow)


QUIET = Behaviour(sit_out=0.0, leave=0.0)

ViewSink = Callable[[str, tpb.WatchTableResponse], None]


class Bot:
    def __init__(
        self,
        *,
        player: str,
        table_id: str,
        tables: Any,
        wallet: Any,
        seed: int,
        stats: BotStats,
        behaviour: Behaviour = Behaviour(),
        on_view: ViewSink | None = None,
        bankroll: int = 1_000_000,
        meta: Metadata | None = None,
        wallet_meta: Metadata | None = None,
        patience: float | None = PATIENCE,
    ) -> None:
        self.player = player
        self.patience = patience
        self.table_id = table_id
        self.name = f"tables/{table_id}"
        self._tables = tables
        self._wallet = wallet
        self._rng = random.Random(seed)  # noqa: S311 - reproducible play, not secrets
        self.stats = stats
        self.behaviour = behaviour
        self._on_view = on_view
        self._bankroll = bankroll
        # Who calls: the player (a token on a secure system) and, for deposits, pokerctl.
        self._meta = meta if meta is not None else (("x-caller", CALLER), ("x-player-id", player))
        self._wallet_meta = wallet_meta if wallet_meta is not None else self._meta
        self._acted: tuple[str, int] | None = None  # (hand id, version) last acted on
        self._between: int = -1  # hands_played when we last did between-hands business
        self._retried: int = -1  # table version of the last try to come back to a waiting table
        self._sat_out_at = -1
        self._left = False
        self._config: tpb.TableConfig | None = None
        self._last: tpb.Table | None = None  # the latest view of the table
        self._viewed = False  # the current WatchTable has delivered a view
        self._business = asyncio.Lock()  # between-hands business, from the stream or the idle retry
        # Actions go over one ActStream per bot: a message on an open stream costs the table
        # service a fraction of a unary Act (docs/benchmarks.md).
        self._acts = StreamedCalls(tables.ActStream, wrap=_act_message, metadata=self._meta)

    async def _call(self, method: Any, request: Any, *, within: float | None = BUSINESS_PATIENCE) -> Any:
        return await retry_unary(
            method,
            request,
            timeout=DEADLINE,
            metadata=self._meta,
            what=f"table.{type(request).__name__.removesuffix('Request')}",
            within=within,
            player=self.player,
        )

    async def deposit(self, *, within: float | None = None) -> None:
        """Deposit the bankroll, trying through faults for ``within`` seconds (default: the
        bot's patience)."""
        await retry_unary(
            self._wallet.Deposit,
            wpb.DepositRequest(request_id=_rid(), player=self.player, amount=self._bankroll),
            timeout=DEADLINE,
            metadata=self._wallet_meta,
            what="wallet.Deposit",
            within=self.patience if within is None else within,
            player=self.player,
        )
        self.stats.deposits += 1
        self.stats.deposited += self._bankroll

    async def join(self, *, within: float | None = None) -> None:
        within = self.patience if within is None else within
        if self._config is None:
            got = await self._call(self._tables.GetTable, tpb.GetTableRequest(name=self.name), within=within)
            self._config = got.table.config
        try:
            await self._call(
                self._tables.JoinTable,
                tpb.JoinTableRequest(
                    request_id=_rid(),
                    table=self.name,
                    player_id=self.player,
                    buy_in=buy_in_for(self._config),
                    post_choice=tpb.POST_CHOICE_POST_NOW,
                ),
                within=within,
            )
        except grpc.RpcError as err:
            # Still seated from an earlier run on the same data folder: play that seat.
            if rich_error(err).reason != "ALREADY_SEATED":
                raise
        self.stats.joins += 1
        self._left = False

    async def run(self) -> None:
        """Deposit, join, then play from the watch stream until cancelled; raises ``BotGaveUp``
        when a service refuses the bot for good or stays away past its patience."""
        try:
            await self.deposit()
            await self.join()
        except grpc.RpcError as err:
            raise BotGaveUp(
                player=self.player, step="joining", err=err, seconds=self.patience if transient(err) else None
            ) from None
        idle = asyncio.get_running_loop().create_task(self._retry_when_idle(), name=f"{self.player}:idle")
        try:
            await self._watch()
        finally:
            idle.cancel()
            self._acts.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await idle

    async def _watch(self) -> None:
        """Follow the table, opening ``WatchTable`` again whenever it ends or breaks (the table
        service restarting), after the shared back-off. A stream that delivered views and then
        broke is a fault whatever its status; one refused before its first view is the service's
        answer unless its status is a fault. Faults for longer than the patience: give up."""
        loop = asyncio.get_running_loop()
        failing_since = loop.time()
        tries = 0
        while True:
            self._viewed = False
            err: grpc.RpcError | None = None
            try:
                await self._follow()
            except grpc.RpcError as exc:
                task = asyncio.current_task()
                if exc.code() == grpc.StatusCode.CANCELLED and task is not None and task.cancelling():
                    raise asyncio.CancelledError from None  # our own stop, seen as the call's end
                err = exc
                self.stats.refuse(f"WATCH_{exc.code().name}")
            now = loop.time()
            if self._viewed:
                failing_since, tries = now, 0
            if err is not None and not (
                self._viewed or transient(err) or err.code() == grpc.StatusCode.CANCELLED
            ):
                raise BotGaveUp(player=self.player, step="watching its table", err=err)
            wait = BACKOFF.delay(tries)
            if err is not None and self.patience is not None and now + wait - failing_since > self.patience:
                info = rich_error(err)
                get_logger().warning(
                    "bots.gave_up",
                    player=self.player,
                    what="table.WatchTable",
                    code=info.code.name,
                    reason=info.reason,
                )
                raise BotGaveUp(
                    player=self.player, step="watching its table", err=err, seconds=now - failing_since
                )
            tries += 1
            get_logger().debug("bots.watch_again", player=self.player, tries=tries, delay=round(wait, 3))
            await asyncio.sleep(wait)

    async def _retry_when_idle(self) -> None:
        """While the table waits for players and nothing new arrives, try coming back again."""
        while True:
            await asyncio.sleep(IDLE_RETRY_SECONDS)
            table = self._last
            if table is None or table.status != tpb.TABLE_STATUS_WAITING:
                continue
            self._retried = -1  # the version has not moved: allow another try
            await self._between_hands(table, self._my_seat(table))

    async def _follow(self) -> None:
        call = self._tables.WatchTable(
            tpb.WatchTableRequest(name=self.name, viewer_player_id=self.player), metadata=self._meta
        )
        try:
            async for msg in call:
                self._viewed = True
                if self._on_view is not None:
                    self._on_view(self.player, msg)
                await self._on_table(msg.table)
        finally:
            call.cancel()

    def _my_seat(self, table: tpb.Table) -> tpb.Seat | None:
        return next((s for s in table.seats if s.player_id == self.player), None)

    async def _on_table(self, table: tpb.Table) -> None:
        self._last = table
        seat = self._my_seat(table)
        hand = table.current_hand
        live = hand.hand_id != "" and hand.outcome == tpb.HAND_OUTCOME_IN_PROGRESS
        if live and seat is not None and hand.to_act.seat == seat.seat:
            key = (hand.hand_id, table.version)
            if self._acted != key:
                self._acted = key
                await self._act(table, hand)
            return
        if not live:
            await self._between_hands(table, seat)

    def _choose(self, legal: tpb.LegalActions) -> tuple[int, int]:
        b = self.behaviour
        allowed = set(legal.actions)
        roll = self._rng.random()
        if tpb.ACTION_TYPE_CHECK in allowed:
            if tpb.ACTION_TYPE_BET in allowed and roll < b.bet:
                return tpb.ACTION_TYPE_BET, legal.min_raise_to
            if tpb.ACTION_TYPE_RAISE in allowed and roll < b.bet:
                return tpb.ACTION_TYPE_RAISE, legal.min_raise_to
            return tpb.ACTION_TYPE_CHECK, 0
        if tpb.ACTION_TYPE_FOLD in allowed and roll < b.fold:
            return tpb.ACTION_TYPE_FOLD, 0
        if tpb.ACTION_TYPE_RAISE in allowed and roll < b.fold + b.raise_:
            return tpb.ACTION_TYPE_RAISE, legal.min_raise_to
        if tpb.ACTION_TYPE_CALL in allowed:
            return tpb.ACTION_TYPE_CALL, 0
        if tpb.ACTION_TYPE_SHOW in allowed:
            return tpb.ACTION_TYPE_SHOW, 0
        return tpb.ACTION_TYPE_FOLD, 0

    async def _act(self, table: tpb.Table, hand: tpb.Hand) -> None:
        if self.behaviour.think_ms:
            await asyncio.sleep(self.behaviour.think_ms / 1000)
        action, amount = self._choose(hand.to_act)
        request = tpb.ActRequest(
            request_id=_rid(),
            table=self.name,
            player_id=self.player,
            hand_id=hand.hand_id,
            action=action,  # type: ignore[arg-type]
            amount=amount,
            expected_version=table.version,
        )
        started = time.perf_counter()
        try:
            # The same request (same id) on every try; a broken stream is reopened by the call.
            await retry(
                lambda: self._acts.call(request, deadline=DEADLINE),
                what="table.Act",
                within=ACT_PATIENCE,
                player=self.player,
            )
        except grpc.RpcError as err:
            self.stats.refuse(rich_error(err).reason or err.code().name)
            return
        self.stats.latencies_ms.append((time.perf_counter() - started) * 1000)
        self.stats.actions += 1

    async def _between_hands(self, table: tpb.Table, seat: tpb.Seat | None) -> None:
        async with self._business:
            await self._between_hands_once(table, seat)

    async def _between_hands_once(self, table: tpb.Table, seat: tpb.Seat | None) -> None:
        # Random business once per hand; but when the table is waiting for players (too many sat
        # out or left), coming back is tried on every new version (and, with nothing new, every
        # IDLE_RETRY_SECONDS), or the table would stall.
        stalled = table.status == tpb.TABLE_STATUS_WAITING
        fresh = self._between != table.hands_played
        if not fresh and not (stalled and self._retried != table.version):
            return
        self._between = table.hands_played
        self._retried = table.version
        b = self.behaviour
        try:
            if seat is None:
                if self._left or stalled or self._rng.random() < 0.5:
                    await self._rejoin()
                return
            config = table.config
            full = buy_in_for(config)
            if seat.status == tpb.SEAT_STATUS_SITTING_OUT:
                if seat.stack == 0:
                    await self._leave()
                    return
                if stalled or self._sat_out_at < 0 or table.hands_played > self._sat_out_at + 1:
                    await self._call(
                        self._tables.SitIn,
                        tpb.SitInRequest(request_id=_rid(), table=self.name, player_id=self.player),
                    )
                    self._sat_out_at = -1
                return
            if not fresh:
                return
            roll = self._rng.random()
            if roll < b.leave:
                await self._leave()
            elif roll < b.leave + b.sit_out:
                await self._call(
                    self._tables.SitOut,
                    tpb.SitOutRequest(request_id=_rid(), table=self.name, player_id=self.player),
                )
                self._sat_out_at = table.hands_played
                self.stats.sit_outs += 1
            elif 0 < seat.stack < full * b.top_up_below:
                await self._call(
                    self._tables.TopUp,
                    tpb.TopUpRequest(
                        request_id=_rid(), table=self.name, player_id=self.player, amount=full - seat.stack
                    ),
                )
                self.stats.top_ups += 1
        except grpc.RpcError as err:
            # Another hand started meanwhile, the wallet still holds the stack, ...: next time.
            self.stats.refuse(rich_error(err).reason or err.code().name)

    async def _leave(self) -> None:
        await self._call(
            self._tables.LeaveTable,
            tpb.LeaveTableRequest(request_id=_rid(), table=self.name, player_id=self.player),
        )
        self._left = True
        self.stats.leaves += 1

    async def _rejoin(self) -> None:
        try:
            await self.join(within=BUSINESS_PATIENCE)
        except grpc.RpcError as err:
            reason = rich_error(err).reason
            self.stats.refuse(reason or err.code().name)
            if reason == "INSUFFICIENT_FUNDS":
                await self.deposit(within=BUSINESS_PATIENCE)


@dataclass(slots=True)
class BotRun:
    """Bots at several tables, with their channels; ``stop()`` cancels them and closes."""

    tasks: list[asyncio.Task[None]]
    bots: list[Bot]
    channels: list[Any]
    stats: BotStats

    async def stop(self) -> None:
        # Cancel until every bot has ended: a cancellation can be swallowed on its way (e.g. by
        # asyncio.wait_for in 3.11 when the awaited result lands at the same moment), and one
        # bot going on would keep this waiting for ever.
        while pending := [t for t in self.tasks if not t.done()]:
            for task in pending:
                task.cancel()
            await asyncio.wait(pending, timeout=1.0)
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for chan in self.channels:
            await chan.close()

    def failures(self) -> list[BaseException]:
        return [t.exception() for t in self.tasks if t.done() and not t.cancelled() and t.exception()]  # type: ignore[misc]

    def ended(self) -> list[tuple[str, BaseException | None]]:
        """The bots that have stopped by themselves, with why (None: ended without an error)."""
        return [
            (bot.player, task.exception())
            for bot, task in zip(self.bots, self.tasks, strict=True)
            if task.done() and not task.cancelled()
        ]

    def all_ended(self) -> bool:
        return all(task.done() for task in self.tasks)


def _conn(conn: Connection | None, **targets: str) -> Connection:
    return conn if conn is not None else Connection.plaintext(targets)


async def create_table(
    table_target: str,
    table_id: str,
    config: tpb.TableConfig,
    *,
    exist_ok: bool = True,
    conn: Connection | None = None,
    within: float | None = PATIENCE,
) -> None:
    """Create a table as staff (``conn``, else plaintext to ``table_target``), through faults
    for ``within`` seconds (the same request id: a retried creation is a duplicate)."""
    conn = _conn(conn, table=table_target)
    async with conn.staff_channel("table") as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        try:
            await retry_unary(
                stub.CreateTable,
                tpb.CreateTableRequest(request_id=_rid(), table_id=table_id, config=config),
                timeout=DEADLINE,
                metadata=conn.staff_metadata(),
                what="table.CreateTable",
                within=within,
            )
        except grpc.RpcError as err:
            if not (exist_ok and rich_error(err).reason == "TABLE_ALREADY_EXISTS"):
                raise


async def start_bots(
    *,
    table_target: str,
    wallet_target: str,
    tables: list[str],
    players_per_table: int,
    seed: int = 1,
    behaviour: Behaviour = Behaviour(),
    on_view: ViewSink | None = None,
    stats: BotStats | None = None,
    conn: Connection | None = None,
    patience: float | None = PATIENCE,
) -> BotRun:
    """Start ``players_per_table`` bots at each table (one channel per 16 bots); over ``conn``
    (players on the table's client port), else plaintext to the targets. Each bot tries through
    faults for ``patience`` seconds (None: for ever) before it gives up."""
    conn = _conn(conn, table=table_target, wallet=wallet_target)
    stats = stats or BotStats()
    chans: list[Any] = []
    bots: list[Bot] = []
    for t_index, table_id in enumerate(tables):
        for i in range(players_per_table):
            n = len(bots)
            if n % 16 == 0:
                chans.append((conn.client_channel("table"), conn.staff_channel("wallet")))
            tchan, wchan = chans[-1]
            player = f"bot-{table_id}-{i + 1}"
            bots.append(
                Bot(
                    player=player,
                    table_id=table_id,
                    tables=tgrpc.TableServiceStub(tchan),
                    wallet=wgrpc.WalletServiceStub(wchan),
                    seed=seed * 1_000_003 + t_index * 101 + i,
                    stats=stats,
                    behaviour=behaviour,
                    on_view=on_view,
                    meta=conn.player_metadata(player),
                    wallet_meta=conn.staff_metadata() if conn.secure else None,
                    patience=patience,
                )
            )
    tasks = [asyncio.get_running_loop().create_task(b.run(), name=b.player) for b in bots]
    flat = [c for pair in chans for c in pair]
    return BotRun(tasks=tasks, bots=bots, channels=flat, stats=stats)


async def wait_tables(
    table_target: str,
    names: list[str],
    predicate: Callable[[tpb.Table], bool],
    *,
    conn: Connection | None = None,
) -> None:
    """Poll until every table satisfies ``predicate``."""
    conn = _conn(conn, table=table_target)
    async with conn.staff_channel("table") as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        meta = conn.staff_metadata()
        while True:
            ok = True
            for name in names:
                got = await stub.GetTable(
                    tpb.GetTableRequest(name=f"tables/{name}"), timeout=DEADLINE, metadata=meta
                )
                if not predicate(got.table):
                    ok = False
                    break
            if ok:
                return
            await asyncio.sleep(0.1)
