"""Presence reports to ``ReportConnection``: the dealer's side of disconnection protection.

Every table-service process publishes what it sees on core NATS (``poker.presence.<table_id>``,
``openpoker.presence``): a report names the players with a ``WatchTable`` stream open on
that process, at once when one's first stream opens or last ends, and again every heartbeat for
each table where anyone is connected to it.

``PresenceBook`` (pure: the caller passes the time) merges them for one table. It keeps the
latest report per source (instance name and run, the run being random per process) with a
deadline ``ttl`` seconds after it arrived; a player is **connected while any live source reports
them**. So a player watching on two instances stays connected when one of their streams ends,
and the players of an instance that stops reporting (killed, partitioned away) are disconnected
once its deadline passes (``expire``, called by ``PresenceFeed`` every ``ttl / 4``, only while
the dealer itself hears: see ``Hearing``). A source whose report names nobody counts for nobody
(its players are gone from it).

For each player the book has seen, it holds a verdict: connected or not, since when (the report's
``at_ms``; for an expiry, the dealer's clock at the expiry) and why (the report or expiry, which
names the ``ReportConnection`` request, so a retry is the same request). A verdict changes only
when the merged answer changes; heartbeats that repeat it change nothing. Players the book never
saw connected have no verdict: a seated player who never watched is left as the log says.

``DealerApp.observe_presence`` hands each report to its table's book and wakes the driver when a
verdict changed. The driver compares the verdicts with the table log it has folded
(``TableState.seats[..].disconnected``) and, for a seated player whose connection differs, sends
``ReportConnection``; the log agreeing closes the matter.

Reports are not durable: a restarted dealer knows nothing, and learns who is connected from the
next heartbeat of each instance (a player the log shows disconnected and who is watching is
then reported reconnected). A player the log shows connected whose instance died while no dealer
was listening is not learnt: the book cannot tell "never watched" from "stopped watching
unseen".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import nats.errors
from nats.aio.client import Client as Nats
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from openpoker.engine.table import TableState
from openpoker.presence import SUBJECTS, BadPresenceReport, PresenceReport
from openpoker.shell.logs import get_logger

DEFAULT_TTL = 6.0  # seconds: three of the table service's default 2 s heartbeats


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionReport:
    """A ``ReportConnection`` the dealer owes the table log."""

    player: str
    connected: bool
    at_ms: int
    step: str  # names the verdict, for an idempotent request id (the same verdict, the same id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The merged answer for one player: connected or not, since ``at_ms``, because of ``cause``."""

    connected: bool
    at_ms: int
    cause: str  # "<instance>/<run>/<seq>" of the report, or "expired/<instance>/<run>/<seq>"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Source:
    report: PresenceReport
    deadline: float  # the caller's monotonic seconds


class PresenceBook:
    """Per-source presence at one table, merged into a verdict per player (pure; no I/O)."""

    def __init__(self, *, ttl: float = DEFAULT_TTL) -> None:
        self.ttl = ttl
        self._sources: dict[tuple[str, str], _Source] = {}
        self._verdicts: dict[str, Verdict] = {}
        self._refused: set[tuple[str, Verdict]] = set()

    def __len__(self) -> int:
        return len(self._verdicts)

    def verdict(self, player: str) -> Verdict | None:
        return self._verdicts.get(player)

    def sources(self) -> list[tuple[str, str]]:
        """The sources that report anyone connected."""
        return sorted(k for k, s in self._sources.items() if s.report.players)

    def observe(self, report: PresenceReport, *, now: float) -> bool:
        """Take ``report`` (arrived at ``now``) unless its source sent a later one; True if a
        verdict changed."""
        old = self._sources.get(report.source)
        if old is not None and report.seq <= old.report.seq:
            return False  # a duplicate or a late one
        # Kept even when it names nobody, until its deadline: its seq still rules out a late one.
        self._sources[report.source] = _Source(report=report, deadline=now + self.ttl)
        affected = set(report.players)
        if old is not None:
            affected |= old.report.players
        cause = f"{report.instance}/{report.run}/{report.seq}"
        return self._judge(affected, now=now, at_ms=report.at_ms, cause=cause)

    def expire(self, *, now: float, at_ms: int) -> bool:
        """Drop the sources not heard from for ``ttl`` (their players are gone unless another
        source reports them); ``at_ms`` is the wall time to record. True if a verdict changed."""
        changed = False
        for key, src in sorted(self._sources.items()):
            if src.deadline > now:
                continue
            del self._sources[key]
            r = src.report
            cause = f"expired/{r.instance}/{r.run}/{r.seq}"
            changed |= self._judge(set(r.players), now=now, at_ms=at_ms, cause=cause)
        return changed

    def next_deadline(self) -> float | None:
        return min((s.deadline for s in self._sources.values()), default=None)

    def _judge(self, players: set[str], *, now: float, at_ms: int, cause: str) -> bool:
        changed = False
        for player in sorted(players):
            connected = any(player in s.report.players and s.deadline > now for s in self._sources.values())
            old = self._verdicts.get(player)
            if old is not None and old.connected == connected:
                continue
            if old is None and not connected:
                continue  # never seen connected: nothing to say
            if old is not None:
                self._refused.discard((player, old))
            self._verdicts[player] = Verdict(connected=connected, at_ms=at_ms, cause=cause)
            changed = True
        return changed

    def refused(self, player: str, verdict: Verdict) -> None:
        """The table refused to record ``verdict`` for good (the player left, or the log already
        says so): owe nothing for it until the verdict changes."""
        if self._verdicts.get(player) == verdict:
            self._refused.add((player, verdict))

    def due(self, state: TableState) -> list[tuple[ConnectionReport, Verdict]]:
        """Verdicts about seated players that the log does not show yet, by seat."""
        out: list[tuple[ConnectionReport, Verdict]] = []
        for _, occupant in sorted(state.seats.items()):
            player = occupant.player
            v = self._verdicts.get(player)
            if v is None or occupant.disconnected != v.connected or (player, v) in self._refused:
                continue  # nothing observed, the log already agrees, or the table said no
            step = f"presence/{player}/{int(v.connected)}/{v.at_ms}/{v.cause}"
            out.append((ConnectionReport(player=player, connected=v.connected, at_ms=v.at_ms, step=step), v))
        return out


class Hearing:
    """Whether the dealer's silence detector may judge (pure; the caller passes the time).

    Silence means an instance is gone only if the dealer could have heard it: after the dealer
    starts, or after its own NATS connection failed (``deaf``), sources are expired only once it
    has heard continuously for a whole TTL, which gives every live instance a chance to report.
    """

    def __init__(self, *, ttl: float, now: float) -> None:
        self.ttl = ttl
        self._since: float | None = now

    def deaf(self) -> None:
        self._since = None

    def may_judge(self, now: float) -> bool:
        """Called once the dealer knows it hears (a round trip to NATS just succeeded)."""
        if self._since is None:
            self._since = now
        return now - self._since >= self.ttl


ObserveReport = Callable[[PresenceReport], None]  # DealerApp.observe_presence
Expire = Callable[[], None]  # DealerApp.expire_presence


class PresenceFeed:
    """A core NATS subscription to every table's presence subject, and the expiry sweep."""

    def __init__(self, nc: Nats, observe: ObserveReport, expire: Expire, *, ttl: float) -> None:
        self._nc = nc
        self._observe = observe
        self._expire = expire
        self._sweep_every = ttl / 4
        self._hearing = Hearing(ttl=ttl, now=time.monotonic())
        self._sub: Subscription | None = None
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._sub = await self._nc.subscribe(SUBJECTS, cb=self._on_message)
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="dealer-presence-expiry")

    async def _on_message(self, msg: Msg) -> None:
        try:
            report = PresenceReport.decode(msg.subject, msg.data)
        except BadPresenceReport as exc:
            get_logger().warning("dealer.bad_presence_report", subject=msg.subject, error=str(exc))
            return
        self._observe(report)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_every)
            try:
                if await self._hears():
                    self._expire()
            except Exception:  # a bug here must not end the sweep for every table
                get_logger().exception("dealer.presence_expiry_failed")

    async def _hears(self) -> bool:
        """True if silence may be judged now: NATS answers a round trip (so every report sent
        before it has been read) and the reports read are handled, for a TTL without a gap."""
        try:
            await self._nc.flush(timeout=max(1, round(self._sweep_every)))
        except (nats.errors.Error, OSError, TimeoutError):
            self._hearing.deaf()
            get_logger().warning("dealer.presence_deaf")
            return False
        # A starved dealer may wake with reports read but not yet handled: handle them first.
        for _ in range(1000):
            if self._sub is None or not self._sub.pending_msgs:
                break
            await asyncio.sleep(0)
        return self._hearing.may_judge(time.monotonic())

    async def stop(self) -> None:
        sweeper, self._sweeper = self._sweeper, None
        if sweeper is not None:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
        if self._sub is not None:
            await self._sub.unsubscribe()
            self._sub = None
