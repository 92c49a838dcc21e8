"""Who is connected: a player's connection is their open ``WatchTable`` stream.

A game client keeps one ``WatchTable`` stream open while it plays, so the table service is where
connections are seen. ``PresenceTracker`` counts each player's open streams per table (a player
with several streams on this instance is connected here while any is open) and publishes what
this instance sees as a presence report on core NATS, ``poker.presence.<table_id>``::

    {"instance": "table-1", "run": "9f2c41d07ab3", "seq": 7, "at_ms": 1795000000000,
     "players": ["ann", "bob"]}

A report is this instance's whole view of one table: the players with at least one stream open
here. It is published

* at once when a player's first stream here opens or their last one ends (the edge: low latency);
* every ``heartbeat`` seconds for each table where anyone is connected here (liveness: a reader
  that stops hearing from an instance for longer than its TTL treats that instance's players as
  gone, which is how a crashed instance's streams end; a lost edge report is repaired too).

``run`` is random per process, so a restarted instance that keeps its configured name is a new
source (its ``seq`` starts again at 1) and the dead one simply expires. ``seq`` grows with every
report a process publishes, so a reader drops a duplicate or a late one. The dealer merges the
reports of every instance (``services.dealer.presence``): a player is connected while any live
instance reports them. Reports are published for every named viewer; whether the viewer holds
a seat is the dealer's business. Publishing goes through one queue drained by a background task,
in order, never on an action's path.

A report is not durable: a reader that was not listening misses it, and learns the state again
from the next heartbeat. The table log holds what mattered (``PlayerDisconnected`` /
``PlayerReconnected``, appended by the dealer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeGuard

from openpoker.shell.logs import get_logger

SUBJECT_PREFIX = "poker.presence"
SUBJECTS = f"{SUBJECT_PREFIX}.>"
DEFAULT_HEARTBEAT = 2.0  # seconds; the dealer's TTL should be a few of these

Publish = Callable[[str, bytes], Awaitable[None]]


def subject(table_id: str) -> str:
    return f"{SUBJECT_PREFIX}.{table_id}"


class BadPresenceReport(ValueError):
    """A message on a presence subject that is not a presence report."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PresenceReport:
    """The players one table-service process (``instance``, ``run``) sees connected at a table."""

    table_id: str
    instance: str
    run: str
    seq: int
    at_ms: int
    players: frozenset[str]

    @property
    def source(self) -> tuple[str, str]:
        return (self.instance, self.run)

    def encode(self) -> bytes:
        body = {
            "instance": self.instance,
            "run": self.run,
            "seq": self.seq,
            "at_ms": self.at_ms,
            "players": sorted(self.players),
        }
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, subject_: str, data: bytes) -> PresenceReport:
        """Raise ``BadPresenceReport`` for anything that is not a presence report."""
        prefix = SUBJECT_PREFIX + "."
        if not subject_.startswith(prefix) or len(subject_) == len(prefix):
            raise BadPresenceReport(f"not a presence subject: {subject_!r}")
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise BadPresenceReport(f"not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise BadPresenceReport("a presence report is a JSON object")
        instance, run, seq, at_ms = body.get("instance"), body.get("run"), body.get("seq"), body.get("at_ms")
        players = body.get("players")
        if not isinstance(instance, str) or not instance or not isinstance(run, str):
            raise BadPresenceReport("a presence report needs an instance and a run")
        if not _is_int(seq) or not _is_int(at_ms):
            raise BadPresenceReport("a presence report needs integer seq and at_ms")
        if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
            raise BadPresenceReport("a presence report needs a list of player names")
        return cls(
            table_id=subject_[len(prefix) :],
            instance=instance,
            run=run,
            seq=seq,
            at_ms=at_ms,
            players=frozenset(players),
        )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class PresenceTracker:
    """Open watch streams per (table, player); publishes this instance's view of a table when a
    player's first stream opens or last ends, and every ``heartbeat`` seconds for each table
    where someone is connected. ``publish`` None: count only (in-process tests, no NATS)."""

    def __init__(
        self,
        *,
        publish: Publish | None,
        instance: str,
        clock_ms: Callable[[], int],
        heartbeat: float = DEFAULT_HEARTBEAT,
        run: str | None = None,
    ) -> None:
        self._publish = publish
        self._instance = instance
        self._run = uuid.uuid4().hex[:12] if run is None else run
        self._clock_ms = clock_ms
        self._heartbeat = heartbeat
        self._open: dict[str, dict[str, int]] = {}  # table -> player -> open streams
        self._seq = 0
        self._queue: asyncio.Queue[PresenceReport] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._beat: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def run(self) -> str:
        return self._run

    def streams(self, table_id: str, player: str) -> int:
        return self._open.get(table_id, {}).get(player, 0)

    def connected(self, table_id: str) -> frozenset[str]:
        return frozenset(self._open.get(table_id, ()))

    def opened(self, table_id: str, player: str) -> None:
        players = self._open.setdefault(table_id, {})
        n = players.get(player, 0)
        players[player] = n + 1
        if n == 0:
            self._emit(table_id)

    def closed(self, table_id: str, player: str) -> None:
        players = self._open.get(table_id)
        n = 0 if players is None else players.get(player, 0)
        if players is None or n == 0:
            return  # a stray close
        if n > 1:
            players[player] = n - 1
            return
        del players[player]
        if not players:
            del self._open[table_id]
        self._emit(table_id)

    def _emit(self, table_id: str) -> None:
        if self._publish is None or self._closed:
            return
        self._seq += 1
        report = PresenceReport(
            table_id=table_id,
            instance=self._instance,
            run=self._run,
            seq=self._seq,
            at_ms=self._clock_ms(),
            players=self.connected(table_id),
        )
        self._queue.put_nowait(report)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain(), name="table-presence")
        if self._beat is None and self._heartbeat > 0:
            self._beat = loop.create_task(self._beat_forever(), name="table-presence-heartbeat")

    async def _beat_forever(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat)
            for table_id in list(self._open):
                self._emit(table_id)

    async def _drain(self) -> None:
        assert self._publish is not None
        while not self._queue.empty():
            report = self._queue.get_nowait()
            try:
                await self._publish(subject(report.table_id), report.encode())
            except Exception:  # the next heartbeat repeats the state; never break a watcher
                get_logger().exception("table.presence_publish_failed", table_id=report.table_id)

    async def close(self) -> None:
        """Stop the heartbeat and publish what is queued (a clean stop ends every stream first,
        so the last reports say nobody is connected here), then stop."""
        beat, self._beat = self._beat, None
        if beat is not None:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        self._closed = True
        task = self._task
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
