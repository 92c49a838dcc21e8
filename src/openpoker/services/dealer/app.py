"""The dealer's process manager: one ``TableDriver`` per table (``services.dealer.driver``),
each reacting to its table's events; the operator's levers (pause, resume, void) and counters.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from openpoker.eventstore.envelope import Envelope, StoredEnvelope
from openpoker.eventstore.loading import Finding, Tip, Verifier, check_envelope
from openpoker.presence import PresenceReport
from openpoker.services.dealer.checkpoints import Checkpoints
from openpoker.services.dealer.config import SERVICE
from openpoker.services.dealer.driver import ActiveHandInfo, Stage, TableDriver, utc_now
from openpoker.services.dealer.pausing import DEALER, OpenFailures, OpenRetry, Pause
from openpoker.services.dealer.ports import AuditPort, RngPort, TablePort, WalletPort
from openpoker.services.dealer.presence import DEFAULT_TTL, PresenceBook
from openpoker.services.dealer.tracker import TableTrack
from openpoker.shell import metrics
from openpoker.shell.logs import get_logger


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerSettings:
    """Timing of the dealer's own work (the decision clocks come from each table's rules)."""

    hand_delay: float = 0.0  # seconds between the end of a hand and the next start
    retry_delay: float = 0.2  # first back-off after a failed call; doubles up to max_retry_delay
    max_retry_delay: float = 2.0
    presence_ttl: float = DEFAULT_TTL  # a table-service instance silent this long has no players
    open_retry: OpenRetry = field(default_factory=OpenRetry)  # hands that cannot open: back-off, pause


class PauseStore:
    """Which tables are paused and why (kept across restarts by the server's KV store)."""

    async def load(self) -> dict[str, Pause]:
        return {}

    async def set(self, table_id: str, pause: Pause | None) -> None:
        return None


class DealerApp:
    def __init__(
        self,
        *,
        rng: RngPort,
        table: TablePort,
        wallet: WalletPort,
        audit: AuditPort,
        settings: DealerSettings | None = None,
        pauses: PauseStore | None = None,
        clock: Callable[[], dt.datetime] = utc_now,
        verifier: Verifier | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.rng = rng
        self.table = table
        self.wallet = wallet
        self.audit = audit
        self.settings = settings or DealerSettings()
        self.pauses = pauses or PauseStore()
        self.drivers: dict[str, TableDriver] = {}
        self.live = False
        self.on_live: Callable[[], None] | None = None  # the server's health turns SERVING
        self.stopping = False
        self.clock = clock
        self.started_at = clock()
        self.hands_completed = 0
        self.hands_voided = 0
        self.hands_void_requested = 0
        self.timeouts = 0
        self.connection_reports = 0
        self.reveals_missing = 0
        self.pending_events = 0
        self._paused: dict[str, Pause] = {}
        # With a verifier (a keyring: a secure system) every envelope is checked as the table
        # service loads it (eventstore.loading); a table whose log holds one that fails is
        # quarantined: not followed, not driven, until an operator repairs it and restarts us.
        self.verifier = verifier
        self.quarantined: dict[str, Finding] = {}
        # Tracks saved between hands, so that a restart folds only the log after them.
        self.checkpoints = checkpoints or Checkpoints()

    async def load_pauses(self) -> None:
        for table_id, pause in (await self.pauses.load()).items():
            self._record(table_id, pause)

    def driver(self, table_id: str) -> TableDriver:
        d = self.drivers.get(table_id)
        if d is None:
            d = TableDriver(
                track=TableTrack(table_id=table_id),
                app=self,
                pause=self._paused.get(table_id),
                opening=OpenFailures(self.settings.open_retry),
                presence=PresenceBook(ttl=self.settings.presence_ttl),
            )
            self.drivers[table_id] = d
            d.task = asyncio.get_running_loop().create_task(d.run(), name=f"dealer:{table_id}")
        return d

    def apply(self, table_id: str, envelope: Envelope, sequence: int, *, subject: str = "") -> None:
        """Fold one table envelope (stream order) and wake that table's driver."""
        if table_id in self.quarantined:
            return
        d = self.driver(table_id)
        if self.verifier is not None:
            track = d.track
            finding = check_envelope(
                StoredEnvelope(envelope=envelope, sequence=sequence),
                stream=table_id,
                subject=subject,
                tip=Tip(version=track.version, hash=track.last_hash),
                verifier=self.verifier,
            )
            if finding is not None:
                self.quarantine(table_id, finding)
                return
        d.track.apply(envelope, sequence)
        d.wake.set()
        self.checkpoints.note(d.track)

    def restore(self, track: TableTrack) -> None:
        """Start ``track``'s table from its checkpoint (before any of its envelopes is folded)."""
        self.driver(track.table_id).track = track
        self.checkpoints.restored(track)

    def quarantine(self, table_id: str, finding: Finding) -> None:
        """Stop following and driving ``table_id``: its log holds a foreign or corrupt message
        (the table service refuses its writes too). Logged once as ``log.corrupt``."""
        if table_id in self.quarantined:
            return
        self.quarantined[table_id] = finding
        d = self.drivers.pop(table_id, None)
        if d is not None and d.task is not None:
            d.task.cancel()
        get_logger().error("log.corrupt", table_id=table_id, detail=finding.detail, **finding.fields())
        metrics.quarantined(SERVICE, table_id, finding.problem.value)

    def observe_presence(self, report: PresenceReport) -> None:
        """A presence report from a table-service instance, merged into the table's book for its
        driver to report (tables this dealer has not seen in the log are not its business; the
        instance's next heartbeat repeats the report)."""
        d = self.drivers.get(report.table_id)
        if d is not None and d.presence.observe(report, now=time.monotonic()):
            d.wake.set()

    def expire_presence(self) -> None:
        """Drop the presence of table-service instances silent for the TTL (a crashed one's
        players are disconnected unless another instance reports them)."""
        now, at_ms = time.monotonic(), int(utc_now().timestamp() * 1000)
        for d in self.drivers.values():
            if d.presence.expire(now=now, at_ms=at_ms):
                d.wake.set()

    def go_live(self) -> None:
        """The feed has replayed the log: drivers may act from now on."""
        self.live = True
        for d in self.drivers.values():
            d.wake.set()
        if self.on_live is not None:
            self.on_live()

    async def stop(self) -> None:
        self.stopping = True
        for table_id in list(self._paused):  # this process no longer reports them
            self._record(table_id, None)
        for d in self.drivers.values():
            d.wake.set()
        tasks = [d.task for d in self.drivers.values() if d.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- operator API --------------------------------------------------------------------------

    def active_hands(self) -> list[ActiveHandInfo]:
        hands = [i for d in self.drivers.values() if (i := d.info()) is not None]
        return sorted(hands, key=lambda i: (i.started_at, i.table_id))

    def paused_tables(self) -> int:
        return sum(1 for d in self.drivers.values() if d.paused)

    def pauses_shown(self) -> list[tuple[str, Pause]]:
        """The paused tables the dealer follows, by table id."""
        return sorted((t, d.pause) for t, d in self.drivers.items() if d.pause is not None)

    async def set_paused(self, table_id: str, paused: bool) -> TableDriver | None:
        """The operator's lever: pause dealing at a table, or lift any pause (the dealer's own
        too, with its count of failed hands, so the next hand is tried at once)."""
        d = self.drivers.get(table_id)
        if d is None or d.track.state is None:
            return None
        pause = Pause(at=self.clock()) if paused else None
        await self.pauses.set(table_id, pause)
        before = self._paused.get(table_id)
        if not paused:
            d.opening.opened()
            if before is not None and before.by == DEALER:
                get_logger().info("dealer.table_resumed", table_id=table_id, reason=before.reason)
        self._record(table_id, pause)
        return d

    async def pause_by_dealer(self, d: TableDriver) -> None:
        """Pause ``d``'s table because its hands keep failing to open: an operator's case
        (``dealer.table_paused`` at error level, the metric, GetDealerStatus)."""
        o = d.opening
        pause = Pause(by=DEALER, reason=o.reason, failures=o.count, detail=o.detail, at=self.clock())
        self._record(d.table_id, pause)  # in force at once, stored or not
        stored = True
        try:
            await self.pauses.set(d.table_id, pause)
        except Exception:  # NATS away: the pause holds until this process stops
            stored = False
        get_logger().error(
            "dealer.table_paused",
            table_id=d.table_id,
            reason=o.reason,
            failures=o.count,
            detail=o.detail,
            stored=stored,
        )

    def _record(self, table_id: str, pause: Pause | None) -> None:
        """The one place a table's pause changes in memory (and in the paused gauge)."""
        before = self._paused.pop(table_id, None)
        if before is not None:
            metrics.dealer_paused(before.reason, paused=False)
        if pause is not None:
            self._paused[table_id] = pause
            metrics.dealer_paused(pause.reason, paused=True)
        d = self.drivers.get(table_id)
        if d is not None:
            d.pause = pause
            d.wake.set()

    async def void_hand(self, table_id: str, hand_id: str, reason: str) -> tuple[ActiveHandInfo, int]:
        """The operator's lever: void the hand in flight at a table (idempotent)."""
        d = self.drivers.get(table_id)
        h = None if d is None else d.track.current
        if d is None or d.track.state is None or h is None or h.hand_id != hand_id:
            # The engine remembers only the latest ids; the table answers for older hands.
            if (
                d is not None
                and d.track.state is not None
                and (
                    hand_id in d.track.state.hand_ids
                    or await self.table.hand_exists(table_id=table_id, hand_id=hand_id)
                )
            ):
                raise HandFinished(hand_id=hand_id)
            raise UnknownHand(hand_id=hand_id)
        if h.ended is not None:
            raise HandFinished(hand_id=hand_id)
        released = await d.void(h, reason=reason or "voided by an operator")
        info = ActiveHandInfo(
            table_id=table_id,
            hand_id=hand_id,
            hand_number=h.number,
            stage=Stage.VOIDING,
            started_at=d.hand_started_at or utc_now(),
            seat_to_act=None,
            action_deadline=None,
            table_version=d.track.version,
        )
        return info, released


class UnknownHand(Exception):
    def __init__(self, *, hand_id: str) -> None:
        super().__init__(hand_id)
        self.hand_id = hand_id


class HandFinished(Exception):
    def __init__(self, *, hand_id: str) -> None:
        super().__init__(hand_id)
        self.hand_id = hand_id
