"""Watchers of the tables this instance writes, fed from its own model as each envelope lands.

``WatchTable`` on a table another instance writes follows the table's subject and folds every
envelope into a private model (``queries.Queries.watch``): one JetStream consumer, one decode
and one fold per watcher and envelope, and a read of the whole log when the watch opens. On the
owner, the cached model already holds every version as it is appended, so a ``LocalWatch`` is
fed straight from ``writer.Writer._append``: the watcher's message for version v is rendered
right after v is applied, before anything else can change the model (``published`` runs
synchronously in the appending task), so each watcher still gets exactly one message per
version, with the actions that version added, as the log path gives it.

A local watch cannot see a version it was not handed (the model caught up from the log after
another instance wrote, or it was re-loaded): it then *breaks*, and so does every local watch
of a table this instance forgets (lease lost, shutdown) and one whose client reads too slowly
(more than ``limit`` messages waiting). A broken watch hands over to the log path from the last
version it delivered, so the watcher sees the same sequence either way.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from openpoker.tablelog.model import ActionEntry, TableModel

T = TypeVar("T")
Render = Callable[[TableModel, list[ActionEntry]], T]

# Messages a local watch may hold for a client that does not read; beyond, it hands over to the
# log path (which waits on the client by itself) instead of buffering without bound.
QUEUE_LIMIT = 256


class LocalWatch(Generic[T]):
    """One watcher's messages, rendered as versions land; ``next`` waits for the next one.
    Watchers with the same ``key`` (the viewer: every spectator has None) see the same
    message, rendered once per version for all of them."""

    def __init__(self, table_id: str, render: Render[T], *, version: int, limit: int, key: object) -> None:
        self.table_id = table_id
        self.key = key
        self.version = version  # the last version rendered (delivered once ``next`` returns it)
        self.delivered = version
        self.broken = False
        self._render = render
        self._limit = limit
        self._queue: deque[tuple[int, T]] = deque()
        self._wake = asyncio.Event()

    def offer(self, model: TableModel, entries: list[ActionEntry], rendered: dict[object, object]) -> None:
        """Queue this version's message (``rendered``: this version's messages by key, shared
        by the watchers of one ``published``)."""
        if self.broken:
            return
        if model.version != self.version + 1 or len(self._queue) >= self._limit:
            self.brk()
            return
        if self.key in rendered:
            message: T = rendered[self.key]  # type: ignore[assignment]
        else:
            message = rendered[self.key] = self._render(model, entries)
        self._queue.append((model.version, message))
        self.version = model.version
        self._wake.set()

    def brk(self) -> None:
        self.broken = True
        self._wake.set()

    async def next(self) -> T | None:
        """The next message in version order; None once broken and drained of what it held
        (then resume from ``delivered`` through the log)."""
        while not self._queue:
            if self.broken:
                return None
            self._wake.clear()
            await self._wake.wait()
        version, message = self._queue.popleft()
        self.delivered = version
        return message


class LocalWatchers:
    """Every local watch, by table."""

    def __init__(self, *, limit: int = QUEUE_LIMIT) -> None:
        self._by_table: dict[str, list[LocalWatch[object]]] = {}
        self._limit = limit

    def of(self, table_id: str) -> Sequence[LocalWatch[object]]:
        return self._by_table.get(table_id, ())

    def add(self, table_id: str, render: Render[T], *, version: int, key: object) -> LocalWatch[T]:
        """A watch of ``table_id`` from ``version``; ``key`` names what ``render`` depends on
        besides the table (the viewer), so that equal keys share one message per version."""
        watch: LocalWatch[T] = LocalWatch(table_id, render, version=version, limit=self._limit, key=key)
        self._by_table.setdefault(table_id, []).append(watch)  # type: ignore[arg-type]
        return watch

    def remove(self, watch: LocalWatch[T]) -> None:
        watches = self._by_table.get(watch.table_id)
        if watches is not None and watch in watches:
            watches.remove(watch)  # type: ignore[arg-type]
            if not watches:
                del self._by_table[watch.table_id]

    def published(self, model: TableModel, entries: list[ActionEntry]) -> None:
        """``model`` has just applied one envelope, which added ``entries``."""
        rendered: dict[object, object] = {}
        for watch in self.of(model.table_id):
            try:
                watch.offer(model, entries, rendered)
            except Exception:  # a view that cannot be rendered: that watcher uses the log
                watch.brk()

    def forget(self, table_id: str) -> None:
        for watch in self.of(table_id):
            watch.brk()

    def close(self) -> None:
        for table_id in list(self._by_table):
            self.forget(table_id)


def hand_mark(model: TableModel) -> tuple[str, int]:
    """Where the live hand's actions stand: (hand id, actions so far)."""
    hand_id = model.hand_order[-1] if model.hand_order else ""
    return hand_id, len(model.hand_scan().actions.entries)


def entries_since(model: TableModel, mark: tuple[str, int]) -> list[ActionEntry]:
    """The actions added since ``mark`` (all of a hand that started since)."""
    hand_id, count = mark
    entries = model.hand_scan().actions.entries
    now = model.hand_order[-1] if model.hand_order else ""
    return entries[count:] if now == hand_id else list(entries)
