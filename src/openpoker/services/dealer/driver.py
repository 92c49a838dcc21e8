"""A table driver: the dealer's work at one table, reacting to the table's events.

Theory of operation
-------------------
The feed (``services.dealer.feed``) folds every table envelope into that table's
``TableTrack`` and wakes its driver. A driver never acts on a table it has not caught up with:
while the feed replays the log after a start it only folds, and after each command it sends it
waits until the log shows that command's version. Then ``step`` looks at the fold and does the
one thing that is due, in this order:

1. the table's last hand is voided but its reservations are not released: wallet ``VoidHand``;
2. the last hand started but its stacks are not known to be reserved: wallet ``OpenHand`` (a
   retry after a restart answers "duplicate"; a reservation the wallet refuses means the hand
   cannot go on, so it is voided at the table and in the wallet);
3. the last hand ended: wallet ``SettleHand`` (contributions, winnings, rake from the hand's
   events), then rng ``RevealSeed`` and the revealed seed written to the audit record;
4. a decision is pending: run the clock (``engine.table.decision_time_ms``; the clock restarts
   when the dealer first sees the decision, so a restart never shortens anyone's time) and on
   expiry send ``TimeOutSeat`` with the version the dealer has seen (a stale one is refused and
   changes nothing);
5. between hands, not paused, and ``engine.table.next_hand`` says a hand can start: rng
   ``Shuffle`` (commitment first), then table ``StartHand`` with the sealed deck and the version
   decided on.

A hand that cannot open (a refused shuffle, start or reservation: not a retryable failure) pushes
the next start back, and after a few in a row the dealer pauses the table itself
(``services.dealer.pausing``), so a table whose hands cannot open never starts and voids hands in
a tight loop.

What the dealer remembers outside the log (hands reserved, settled, released) is lost on a
restart; every step is idempotent under ids derived from the table and hand number
(``tablelog.ids``), so the last hand of each table is simply taken through the steps
again. Hands before the last one are finished: the dealer starts a hand only after the
previous one is settled or released.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from openpoker.engine.table import TableState
from openpoker.services.dealer import hand_calls
from openpoker.services.dealer.pausing import OpenFailures, OpenRetry, Pause
from openpoker.services.dealer.ports import CallFailed
from openpoker.services.dealer.presence import PresenceBook
from openpoker.services.dealer.tracker import HandRecord, TableTrack
from openpoker.services.dealer.wakeup import Wakeup
from openpoker.shell import metrics
from openpoker.shell.logs import get_logger
from openpoker.tablelog import ids

if TYPE_CHECKING:
    from openpoker.services.dealer.app import DealerApp


class Stage(StrEnum):
    SHUFFLING = "shuffling"
    RESERVING = "reserving"
    PLAYING = "playing"
    SETTLING = "settling"
    REVEALING = "revealing"
    VOIDING = "voiding"


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveHandInfo:
    table_id: str
    hand_id: str
    hand_number: int
    stage: Stage
    started_at: dt.datetime
    seat_to_act: int | None
    action_deadline: dt.datetime | None
    table_version: int


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(slots=True)
class _Clock:
    key: tuple[str, int, int]
    started: float  # monotonic
    deadline: float  # monotonic
    wall_deadline: dt.datetime


@dataclass(slots=True)
class TableDriver:
    """The dealer's work at one table (state outside the log lives here, in memory)."""

    track: TableTrack
    app: DealerApp
    pause: Pause | None = None
    opening: OpenFailures = field(default_factory=lambda: OpenFailures(OpenRetry()))
    wake: Wakeup = field(default_factory=Wakeup)
    reserved: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    stage: Stage | None = None
    hand_started_at: dt.datetime | None = None
    clock: _Clock | None = None
    wait_version: int = 0
    last_finished: float = 0.0
    failures: int = 0
    starting: tuple[str, int] | None = None  # (hand id, number) being shuffled and started
    task: asyncio.Task[None] | None = None
    last_error: str = ""
    presence: PresenceBook = field(default_factory=PresenceBook)
    wake_for: object = None  # what the last step's delay is for, when it names a clock

    @property
    def table_id(self) -> str:
        return self.track.table_id

    @property
    def paused(self) -> bool:
        return self.pause is not None

    @property
    def timer(self) -> asyncio.TimerHandle | None:
        """The driver's own wake-up timer, if one is due."""
        return self.wake.timer

    # -- loop ----------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await self._loop()
        finally:
            self.wake.arm(None)

    async def _loop(self) -> None:
        log = get_logger().bind(table_id=self.table_id)
        while not self.app.stopping:
            if not self.app.live or self.track.version < self.wait_version:
                await self.wake.sleep(None)
                continue
            try:
                self.wake_for = None
                delay = await self.step()
                self.failures = 0
                self.last_error = ""
            except CallFailed as exc:
                self.failures += 1
                self.last_error = str(exc)
                log.warning("dealer.call_failed", error=str(exc), retryable=exc.retryable)
                delay = self._backoff()
            except HandUnreservable as exc:
                # Money the wallet cannot account for: an operator's case. Say so loudly and keep
                # asking at the slowest pace (never in a tight loop).
                self.failures += 1
                self.last_error = str(exc)
                log.error("dealer.hand_unreservable", hand_id=exc.hand_id, reason=exc.reason)
                delay = self.app.settings.max_retry_delay
            except Exception as exc:  # a bug must not stop the other tables: log, back off
                self.failures += 1
                self.last_error = repr(exc)
                log.exception("dealer.step_failed")
                delay = self._backoff()
            await self.wake.sleep(delay, self.wake_for)

    def _backoff(self) -> float:
        s = self.app.settings
        return float(min(s.max_retry_delay, s.retry_delay * 2.0 ** min(self.failures - 1, 10)))

    # -- one step ------------------------------------------------------------------------------

    async def step(self) -> float | None:
        """Do what is due now; return how long to wait before looking again (None: until the
        log moves)."""
        t = self.track
        if t.state is None:
            return None
        if len(self.presence) and await self._report_presence(t.state):
            return 0  # look again once the log shows it (run waits for wait_version)
        h = t.current
        if h is not None and h.hand_id not in self.done:
            self.starting = None
            return await self._hand_step(h)
        self.stage = None
        self.starting = None
        self.clock = None
        if self.paused:
            return None
        if t.next_plan() is None:
            return None
        due = max(self.last_finished + self.app.settings.hand_delay, self.opening.not_before)
        wait = due - time.monotonic()
        if wait > 0:
            return wait
        return await self._start_next_hand()

    async def _hand_step(self, h: HandRecord) -> float | None:
        if h.voided:
            await self._release(h)
            self._finish(h)
            return 0
        if h.started is None:
            return None
        if self.hand_started_at is None:
            self.hand_started_at = utc_now()
        if h.hand_id not in self.reserved:
            self.stage = Stage.RESERVING
            try:
                await hand_calls.reserve(self.app.wallet, self.table_id, h)
            except CallFailed as exc:
                if exc.retryable:
                    raise
                if h.ended is not None:
                    # The table has finished the hand: it can no longer be voided, and it cannot
                    # be settled without its reservation. (The wallet pays a leaver out only
                    # after the hand they were dealt into is closed, so this is not a race.)
                    raise HandUnreservable(hand_id=h.hand_id, reason=exc.reason) from exc
                await self.void(h, reason=f"stacks could not be reserved: {exc.reason}")
                await self._open_failed(exc)
                return None  # the void wakes us; the next start waits for the back-off
            self.reserved.add(h.hand_id)
            self.opening.opened()
        if h.ended is not None:
            self.stage = Stage.SETTLING
            await hand_calls.settle(self.app.wallet, self.table_id, h)
            self.stage = Stage.REVEALING
            if not await hand_calls.reveal(self.app.rng, self.app.audit, self.table_id, h):
                self.app.reveals_missing += 1
            self._finish(h)
            return 0
        self.stage = Stage.PLAYING
        return await self._clock_step(h)

    async def _clock_step(self, h: HandRecord) -> float | None:
        decision = self.track.decision()
        if decision is None:
            self.clock = None
            return None
        seat, ms = decision
        key = (h.hand_id, h.events, seat)
        now = time.monotonic()
        if self.clock is None or self.clock.key != key:
            self.clock = _Clock(
                key=key,
                started=now,
                deadline=now + ms / 1000,
                wall_deadline=utc_now() + dt.timedelta(milliseconds=ms),
            )
        elif self.clock.deadline - self.clock.started < ms / 1000:
            # Extra time granted during the decision (a reconnection): extend this clock.
            extra = ms / 1000 - (self.clock.deadline - self.clock.started)
            self.clock.deadline += extra
            self.clock.wall_deadline += dt.timedelta(seconds=extra)
        left = self.clock.deadline - now
        if left > 0:
            self.wake_for = (self.clock.key, self.clock.deadline)
            return left
        try:
            version = await self.app.table.time_out_seat(
                request_id=ids.request_id(self.table_id, h.number, f"timeout/{h.events}/{seat}"),
                table_id=self.table_id,
                hand_id=h.hand_id,
                seat=seat,
                expected_version=self.track.version,
                observed_at=utc_now(),
            )
        except CallFailed as exc:
            if exc.retryable:
                raise
            # Stale (the player acted, or something else was appended): the log will show it.
            get_logger().info("dealer.timeout_refused", table_id=self.table_id, reason=exc.reason)
            return self.app.settings.retry_delay
        self.app.timeouts += 1
        self.wait_version = version
        return None

    async def _report_presence(self, state: TableState) -> bool:
        """Report the first connection change the log does not show yet; True if one was sent
        (or if the table had moved on: look again once the log shows where it is)."""
        for report, verdict in self.presence.due(state):
            decided_on = self.track.version  # the log ``due`` judged the fact against
            try:
                version = await self.app.table.report_connection(
                    request_id=ids.request_id(self.table_id, 0, report.step),
                    table_id=self.table_id,
                    player_id=report.player,
                    connected=report.connected,
                    observed_at=dt.datetime.fromtimestamp(report.at_ms / 1000, dt.UTC),
                    expected_version=decided_on,
                )
            except CallFailed as exc:
                if exc.retryable:
                    raise
                if exc.reason == "STALE_VERSION":
                    # Judged against an older log than the table's: keep the fact and judge it
                    # again on the newer log (it may be no news by then, or about a new seat).
                    self.wait_version = max(self.wait_version, decided_on + 1)
                    return True
                # The player left, or the log already says so: nothing more to do for this fact.
                get_logger().info(
                    "dealer.connection_refused",
                    table_id=self.table_id,
                    player=report.player,
                    reason=exc.reason,
                )
                self.presence.refused(report.player, verdict)
                continue
            self.app.connection_reports += 1
            self.wait_version = max(self.wait_version, version)
            return True
        return False

    async def _release(self, h: HandRecord) -> int:
        self.stage = Stage.VOIDING
        return await hand_calls.release(self.app.wallet, self.table_id, h)

    def _finish(self, h: HandRecord) -> None:
        self.done.add(h.hand_id)
        self.reserved.discard(h.hand_id)
        self.stage = None
        self.clock = None
        self.hand_started_at = None
        self.last_finished = time.monotonic()
        self.app.hands_completed += 1
        if h.voided:
            self.app.hands_voided += 1

    async def _open_failed(self, exc: CallFailed) -> float | None:
        """A hand could not open for a reason that will not pass by itself: back off, and
        pause the table after too many in a row. Returns how long to wait."""
        reason = exc.reason or exc.code
        metrics.dealer_open_failed(reason)
        self.stage = None
        self.starting = None
        pause = self.opening.failed(reason=reason, detail=str(exc), now=time.monotonic())
        get_logger().warning(
            "dealer.hand_open_failed",
            table_id=self.table_id,
            reason=reason,
            failures=self.opening.count,
            error=str(exc),
        )
        if pause:
            await self.app.pause_by_dealer(self)
            return None
        return max(0.0, self.opening.not_before - time.monotonic())

    async def _start_next_hand(self) -> float | None:
        t = self.track
        assert t.state is not None
        number = t.hands + 1
        hand_id = ids.hand_id(self.table_id, number)
        self.stage = Stage.SHUFFLING
        self.hand_started_at = utc_now()
        self.starting = (hand_id, number)
        try:
            shuffled = await self.app.rng.shuffle(
                request_id=ids.request_id(self.table_id, number, "shuffle"),
                table_id=self.table_id,
                hand_id=hand_id,
                deck_size=t.state.rules.deck_size,
            )
        except CallFailed as exc:
            if exc.retryable:
                raise
            return await self._open_failed(exc)
        decided_on = t.version  # the log moves on while we wait: keep what we decided on
        try:
            version = await self.app.table.start_hand(
                request_id=ids.request_id(self.table_id, number, f"start/{decided_on}"),
                table_id=self.table_id,
                hand_id=hand_id,
                commitment=shuffled.commitment,
                sealed_deck=shuffled.sealed_deck,
                expected_version=decided_on,
            )
        except CallFailed as exc:
            if exc.retryable:
                raise
            if exc.reason != "STALE_VERSION":
                return await self._open_failed(exc)
            # The table moved on (a player joined or left): decide again on the log as it is.
            get_logger().info("dealer.start_refused", table_id=self.table_id, reason=exc.reason)
            self.stage = None
            self.wait_version = decided_on + 1
            return None
        self.wait_version = version
        return None

    # -- operator levers -----------------------------------------------------------------------

    async def void(self, h: HandRecord, *, reason: str) -> int:
        """Void ``h`` at the table and release its reservations; returns the chips released."""
        self.stage = Stage.VOIDING
        version = await hand_calls.void_at_table(self.app.table, self.table_id, h, reason=reason)
        self.wait_version = max(self.wait_version, version)
        released = await self._release(h)
        self.app.hands_void_requested += 1
        self.wake.set()
        return released

    def info(self) -> ActiveHandInfo | None:
        t = self.track
        h = t.current
        if (h is None or h.hand_id in self.done) and self.starting is not None:
            # Being shuffled and started: in flight already (an operator waiting for a quiet
            # table must not miss it).
            hand_id, number = self.starting
            return ActiveHandInfo(
                table_id=self.table_id,
                hand_id=hand_id,
                hand_number=number,
                stage=Stage.SHUFFLING,
                started_at=self.hand_started_at or utc_now(),
                seat_to_act=None,
                action_deadline=None,
                table_version=t.version,
            )
        if h is None or h.hand_id in self.done:
            return None
        seat = None
        deadline = None
        if self.clock is not None and self.clock.key[0] == h.hand_id:
            seat = self.clock.key[2]
            deadline = self.clock.wall_deadline
        return ActiveHandInfo(
            table_id=self.table_id,
            hand_id=h.hand_id,
            hand_number=h.number,
            stage=self.stage or Stage.PLAYING,
            started_at=self.hand_started_at or utc_now(),
            seat_to_act=seat,
            action_deadline=deadline,
            table_version=t.version,
        )


class HandUnreservable(Exception):
    """A hand the table finished whose stacks the wallet refuses to reserve."""

    def __init__(self, *, hand_id: str, reason: str) -> None:
        super().__init__(f"hand {hand_id} ended at the table; the wallet refuses its reservation: {reason}")
        self.hand_id = hand_id
        self.reason = reason
