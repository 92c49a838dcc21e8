"""The hand index (``store.HANDS_BUCKET``): where each finished hand is in the table log, for
hands older than a model's own index (``tablelog.model.HANDS_KEPT``).

Every finished hand gets an entry in the hand index (``TableEvents.save_hand``), and
``indexed_through`` counts the hands, from the first, that all have theirs; it only moves after
their entries are written. So while it covers every hand older than a model's index, an id
without an entry is no hand of the table: StartHand refuses a reused old id (DUPLICATE_HAND_ID),
and GetHand and VoidHand answer an unknown one, with one KV read and no log read (the engine
remembers only the latest ``engine.table.HAND_IDS_KEPT`` ids). When it does not (a table indexed
before the count existed, a lost bucket, an owner that stopped before writing), the log is read once to
write every older entry (``HandIndex.reindex``).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from collections.abc import Mapping

from openpoker.engine import table
from openpoker.eventstore.envelope import StoredEnvelope
from openpoker.services.table.background import Background, settled
from openpoker.shell.logs import get_logger
from openpoker.tablelog import model as table_model
from openpoker.tablelog.model import HandRecord, TableModel
from openpoker.tablelog.store import TableStore


class HandIndex:
    def __init__(
        self, *, store: TableStore, models: Mapping[str, TableModel], background: Background
    ) -> None:
        self._store = store
        self._models = models  # the writer's cached models (read only here)
        self._background = background
        # Per table, how many hands from the first are known to have their entry
        # (``TableEvents.load_indexed_through``), and what the bucket holds as far as we know.
        self._indexed: dict[str, int] = {}
        self._indexed_saved: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._reindexing: dict[str, asyncio.Task[int]] = {}
        self._log = get_logger()

    def later(self, table_id: str) -> None:
        """``update`` in the background."""
        self._background.spawn(self.update(table_id))

    async def update(self, table_id: str) -> None:
        """Write the entries of the finished hands the owned model indexes that are not counted
        yet, then count them (after each finished hand, and when taking a table over)."""
        try:
            lock = self._locks.setdefault(table_id, asyncio.Lock())
            async with lock:
                model = self._models.get(table_id)
                if model is None or not model.hand_order:
                    return
                through = await self._indexed_through(table_id)
                # Copies, taken at once: the model goes on changing under the table's lock. Only
                # of the hands not counted yet, newest first until a counted one (one or two
                # after a hand, where copying the whole index cost ~3.7 ms once it held 1,000).
                records: list[HandRecord] = []
                for h in reversed(model.hand_order):
                    record = model.hands[h]
                    if record.number <= through:
                        break
                    records.append(dataclasses.replace(record))
                if not records:
                    return
                records.reverse()
                if through < records[0].number - 1:  # older hands only the log has: count them first
                    through = await self.reindex(table_id, records[0].first_sequence)
                await self._store.save_hands(
                    table_id, [r for r in records if r.number > through and r.finished]
                )
                for r in records:
                    if r.number == through + 1 and r.finished:
                        through = r.number
                await self._count_indexed(table_id, through)
        except Exception as exc:  # a cache: the next finished hand (or owner) writes them again
            self._log.warning("table.hand_index_failed", table_id=table_id, error=str(exc))

    async def _indexed_through(self, table_id: str) -> int:
        known = self._indexed.get(table_id)
        if known is None:
            try:
                known = await self._store.events.load_indexed_through(table_id)
            except Exception as exc:  # a cache: as if nothing were counted (the log is read)
                self._log.warning("table.hand_index_failed", table_id=table_id, error=str(exc))
                return 0
            self._indexed_saved[table_id] = known
            known = self._indexed[table_id] = max(known, self._indexed.get(table_id, 0))
        return known

    async def _count_indexed(self, table_id: str, through: int) -> None:
        if through > self._indexed.get(table_id, 0):
            self._indexed[table_id] = through
            # The stored count may lag this one: a reader needs it only to cover the hands older
            # than its model's index (``HANDS_KEPT``), so it is written once per tenth of that
            # index, not after every hand (one KV put per hand less; a lag can only make a
            # reader read the log).
            if through - self._indexed_saved.get(table_id, 0) >= max(1, table_model.HANDS_KEPT // 10):
                await self._store.events.save_indexed_through(table_id, through)
                self._indexed_saved[table_id] = through

    async def reindex(self, table_id: str, before_sequence: int) -> int:
        """Write the entry of every hand before ``before_sequence`` from the log, once however
        many callers wait for it (it runs on if they go away); returns the count of hands
        indexed from the first."""
        task = self._reindexing.get(table_id)
        if task is None:
            task = self._background.spawn(
                self._reindex_now(table_id, before_sequence), context=contextvars.Context()
            )
            self._reindexing[table_id] = task
            task.add_done_callback(settled)
            task.add_done_callback(
                lambda t: (
                    self._reindexing.pop(table_id, None) if self._reindexing.get(table_id) is t else None
                )
            )
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the log is still there: callers read it (find_hand's scan)
            self._log.warning("table.hand_reindex_failed", table_id=table_id, error=str(exc))
            return self._indexed.get(table_id, 0)

    async def _reindex_now(self, table_id: str, before_sequence: int) -> int:
        through = await self._store.reindex(table_id, before_sequence=before_sequence)
        self._log.info("table.hands_reindexed", table_id=table_id, hands=through)
        await self._count_indexed(table_id, through)
        return max(through, self._indexed.get(table_id, 0))

    async def find_older(
        self, model: TableModel, hand_id: str
    ) -> tuple[HandRecord, list[StoredEnvelope]] | None:
        """The hand ``hand_id`` if it is older than the model's index (``model.HANDS_KEPT``):
        from the hand index, counted complete, or else the log. None if the table has no such
        hand (checked without reading the log once the index is counted complete)."""
        oldest = model.oldest_indexed
        older = model.hands_total - len(model.hand_order)  # hands only the log and the index hold
        if oldest is None or older <= 0:
            return None
        through = await self._indexed_through(model.table_id)
        if through < older:
            through = await self.reindex(model.table_id, oldest.first_sequence)
        return await self._store.find_hand(
            model.table_id, hand_id, before_sequence=oldest.first_sequence, complete=through >= older
        )

    async def refuse_used_hand_id(self, model: TableModel, hand_id: str) -> None:
        """StartHand's check of an id the engine no longer remembers (it keeps the latest
        ``engine.table.HAND_IDS_KEPT``): the model's index, then older hands; refused as the
        engine refuses its own (DUPLICATE_HAND_ID)."""
        state = model.state
        if state is None or state.hand is not None or hand_id in state.hand_ids:
            return  # the engine refuses these itself (HAND_IN_PROGRESS, DUPLICATE_HAND_ID)
        if hand_id in model.hands or await self.find_older(model, hand_id) is not None:
            raise table.DuplicateHandId(hand_id=hand_id)
