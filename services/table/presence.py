"""Who is connected: a player's connection is their open ``WatchTable`` stream.

A game client keeps one ``WatchTable`` stream open while it plays, so the table service is where
connections are seen. ``PresenceTracker`` counts each player's open streams per table (a player
with several streams is connected while any is open) and, when the count leaves or reaches zero,
publishes a presence fact on core NATS, ``poker.presence.<table_id>``::

    {"player": "ann", "connected": false, "at_ms": 1795000000000, "instance": "table-1", "seq": 7}

``at_ms`` is when this instance saw the stream open or end; ``seq`` grows with every fact an
instance publishes (within one process), so a reader can drop a late duplicate. Facts are
published for every named viewer: whether the viewer holds a seat is the dealer's business (it
turns facts about seated players into ``ReportConnection`` calls). Publishing goes through one
queue drained by a background task, in order, never on an action's path.

A fact is not durable: a reader that was not listening misses it. The table log holds what
mattered (``PlayerDisconnected``/``PlayerReconnected``, appended by the dealer); a player
still disconnected after a dealer restart stays so until their stream opens again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from shell.logs import get_logger

SUBJECT_PREFIX = "poker.presence"
SUBJECTS = f"{SUBJECT_PREFIX}.>"

Publish = Callable[[str, bytes], Awaitable[None]]


def subject(table_id: str) -> str:
    return f"{SUBJECT_PREFIX}.{table_id}"


class BadPresenceFact(ValueError):
    """A message on a presence subject that is not a presence fact."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PresenceFact:
    table_id: str
    player: str
    connected: bool
    at_ms: int
    instance: str
    seq: int

    def encode(self) -> bytes:
        body = {
            "player": self.player,
            "connected": self.connected,
            "at_ms": self.at_ms,
            "instance": self.instance,
            "seq": self.seq,
        }
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, subject_: str, data: bytes) -> PresenceFact:
        """Raise ``BadPresenceFact`` for anything that is not a presence fact."""
        prefix = SUBJECT_PREFIX + "."
        if not subject_.startswith(prefix) or len(subject_) == len(prefix):
            raise BadPresenceFact(f"not a presence subject: {subject_!r}")
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise BadPresenceFact(f"not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise BadPresenceFact("a presence fact is a JSON object")
        player, connected = body.get("player"), body.get("connected")
        at_ms, instance, seq = body.get("at_ms"), body.get("instance", ""), body.get("seq", 0)
        if not isinstance(player, str) or not player or not isinstance(connected, bool):
            raise BadPresenceFact("a presence fact needs a player and connected")
        if not isinstance(at_ms, int) or not isinstance(instance, str) or not isinstance(seq, int):
            raise BadPresenceFact("a presence fact needs integer at_ms and seq and a string instance")
        return cls(
            table_id=subject_[len(prefix) :],
            player=player,
            connected=connected,
            at_ms=at_ms,
            instance=instance,
            seq=seq,
        )


class PresenceTracker:
    """Open watch streams per (table, player); publishes a fact when a player's first opens or
    last ends. ``publish`` None: count only (in-process tests, no NATS)."""

    def __init__(self, *, publish: Publish | None, instance: str, clock_ms: Callable[[], int]) -> None:
        self._publish = publish
        self._instance = instance
        self._clock_ms = clock_ms
        self._open: dict[tuple[str, str], int] = {}
        self._seq = 0
        self._queue: asyncio.Queue[PresenceFact] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def streams(self, table_id: str, player: str) -> int:
        return self._open.get((table_id, player), 0)

    def opened(self, table_id: str, player: str) -> None:
        key = (table_id, player)
        n = self._open.get(key, 0)
        self._open[key] = n + 1
        if n == 0:
            self._emit(table_id, player, connected=True)

    def closed(self, table_id: str, player: str) -> None:
        key = (table_id, player)
        n = self._open.get(key, 0)
        if n <= 1:
            self._open.pop(key, None)
            if n == 1:
                self._emit(table_id, player, connected=False)
        else:
            self._open[key] = n - 1

    def _emit(self, table_id: str, player: str, *, connected: bool) -> None:
        if self._publish is None:
            return
        self._seq += 1
        fact = PresenceFact(
            table_id=table_id,
            player=player,
            connected=connected,
            at_ms=self._clock_ms(),
            instance=self._instance,
            seq=self._seq,
        )
        self._queue.put_nowait(fact)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain(), name="table-presence")

    async def _drain(self) -> None:
        assert self._publish is not None
        while not self._queue.empty():
            fact = self._queue.get_nowait()
            try:
                await self._publish(subject(fact.table_id), fact.encode())
            except Exception:  # a lost fact leaves the log as it was; never break a watcher
                get_logger().exception("table.presence_publish_failed", table_id=fact.table_id)

    async def close(self) -> None:
        """Publish what is queued (a clean stop ends every stream first), then stop."""
        task = self._task
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
