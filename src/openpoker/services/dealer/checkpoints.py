"""Where checkpoints live: the KV bucket ``poker-dealer``, key ``checkpoint.<table_id>``
(``checkpoint.FORMAT`` JSON), beside the pauses (``paused``).

``Checkpoints.note`` is called after every envelope the app folds; between hands, and at most
once per ``checkpoint.EVERY`` table versions (at once for a table without one), it encodes the
track and queues it; ``run`` writes the queue in the background, the newest per table only, and
checkpoints tables gone quiet between hands (``sweep``), so an idle table's next start reads
nothing. A
failed write is logged and dropped: the next checkpoint replaces it, and a missing one only
makes the next start fold more of that table's log.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable

from nats.errors import Error as NatsError
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from openpoker.services.dealer import checkpoint
from openpoker.services.dealer.tracker import TableTrack
from openpoker.shell.logs import get_logger

PREFIX = "checkpoint."
FLUSH_EVERY = 0.2  # seconds between writes of the queue (a table's newest checkpoint only)
SWEEP_EVERY = 5.0  # seconds between looks for tables gone quiet since their last checkpoint


class Checkpoints:
    def __init__(self, kv: KeyValue | None = None, *, every: int = checkpoint.EVERY) -> None:
        self._kv = kv
        self.every = every
        self._saved: dict[str, int] = {}  # table id -> version of its last checkpoint taken
        self._queue: dict[str, bytes] = {}
        self._seen: dict[str, int] = {}  # table id -> version at the last sweep
        self._ready = asyncio.Event()
        self.written = 0

    def note(self, track: TableTrack) -> None:
        """Take a checkpoint of ``track`` if one is due (pure but for the queue)."""
        if self._kv is None or not checkpoint.between_hands(track):
            return
        saved = self._saved.get(track.table_id)
        if saved is not None and track.version - saved < self.every:
            return
        self._saved[track.table_id] = track.version
        self._queue[track.table_id] = checkpoint.encode(track)
        self._ready.set()

    def restored(self, track: TableTrack) -> None:
        """``track`` came from its checkpoint: the next one is due ``every`` versions later."""
        self._saved[track.table_id] = track.version

    async def get(self, table_id: str) -> bytes | None:
        """The stored checkpoint of ``table_id`` (undecoded), if any. Looked up by key for each
        table in the log, not listed: a bucket's key listing (a watch) can come back short."""
        kv = self._kv
        if kv is None:
            return None
        try:
            entry = await kv.get(PREFIX + table_id)
        except KeyNotFoundError:
            return None
        return entry.value or None

    def final(self, tracks: Iterable[TableTrack]) -> None:
        """Checkpoint every table between hands at its version (a clean stop: the next start
        reads only what was written after it)."""
        for track in tracks:
            if self._saved.get(track.table_id) != track.version:
                self._saved.pop(track.table_id, None)
                self.note(track)

    def sweep(self, tracks: Iterable[TableTrack]) -> None:
        """Checkpoint the tables that have gone quiet between hands since their last checkpoint
        (a table idle for long would otherwise leave up to ``every`` versions to read at the next
        start): those whose version has not moved since the previous sweep."""
        for track in tracks:
            seen, self._seen[track.table_id] = self._seen.get(track.table_id), track.version
            saved = self._saved.get(track.table_id)
            if seen == track.version and saved is not None and saved < track.version:
                self._saved.pop(track.table_id)  # due at once
                self.note(track)

    async def run(self, tracks: Callable[[], Iterable[TableTrack]] = tuple) -> None:
        """Write queued checkpoints, and sweep ``tracks()`` every ``SWEEP_EVERY``, until
        cancelled."""
        loop = asyncio.get_running_loop()
        swept = loop.time()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), SWEEP_EVERY)
            if loop.time() - swept >= SWEEP_EVERY:
                swept = loop.time()
                self.sweep(tracks())
            self._ready.clear()
            await self.flush()
            await asyncio.sleep(FLUSH_EVERY)

    async def flush(self) -> None:
        kv = self._kv
        queue, self._queue = self._queue, {}
        if kv is None:
            return
        for table_id, data in queue.items():
            try:
                await kv.put(PREFIX + table_id, data)
                self.written += 1
            except (NatsError, TimeoutError) as exc:  # NATS away: a later checkpoint replaces it
                self._saved.pop(table_id, None)
                get_logger().warning("dealer.checkpoint_unsaved", table_id=table_id, error=repr(exc))
