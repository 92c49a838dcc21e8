"""Reads of a table: its folded model, its hands (the model's own index, then the hand index
and the log for older ones), a finished hand's envelopes, and watches of its versions."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from openpoker.engine import table
from openpoker.engine.hand_events import HandEnded, HandEvent, HandStarted
from openpoker.engine.table_events import HandScheduled, UncontestedHandShown
from openpoker.eventstore.chain import GENESIS
from openpoker.eventstore.envelope import StoredEnvelope
from openpoker.eventstore.loading import LogQuarantined, Tip, Verifier, check_envelope, fold_finding
from openpoker.services.table.errors import HandNotFinished, HandNotFound, NotOwner, TableNotFound
from openpoker.services.table.hand_index import HandIndex
from openpoker.services.table.watchers import LocalWatch, Render, entries_since, hand_mark
from openpoker.services.table.writer import Writer
from openpoker.shell.logs import get_logger
from openpoker.tablelog.events import HandVoided
from openpoker.tablelog.model import HandRecord, LogEvent, TableModel
from openpoker.tablelog.store import decode_events, fold_envelope

T = TypeVar("T")  # what a watcher renders for each version


@dataclass(frozen=True, slots=True, kw_only=True)
class HandAt:
    """A hand's log and where it is in the table log (for GetHand / GetHandHistory)."""

    record: HandRecord
    log: tuple[LogEvent, ...]
    commitment: str


class Queries:
    def __init__(self, *, writer: Writer, hands: HandIndex) -> None:
        self._writer = writer
        self._store = writer.store
        self._hands = hands
        self._log = get_logger()

    async def model(self, table_id: str) -> TableModel:
        """The folded table: from the cache when we own it, else a fresh fold of the log."""
        try:
            async with self._writer.lock(table_id):
                model, _ = await self._writer.owned(table_id)
                return model
        except (NotOwner, LogQuarantined):
            pass  # read from the log (a quarantined one: up to its foreign message)
        model_or_none = await self._store.load(table_id)
        if model_or_none is None:
            raise TableNotFound(table_id)
        return model_or_none

    async def tables(self) -> list[str]:
        return await self._store.events.tables()

    # -- hands ------------------------------------------------------------------------------

    async def hand(self, table_id: str, hand_id: str) -> tuple[TableModel, HandAt]:
        model = await self.model(table_id)
        record = model.hands.get(hand_id)
        if record is None:
            return model, await self._older_hand(model, hand_id)
        log: tuple[LogEvent, ...]
        if not record.finished or hand_id == model.hand_order[-1]:
            log = tuple(model.hand_log)
        elif hand_id in model.recent:
            log = model.recent[hand_id]
        else:
            log = tuple(await self._read_hand_log(table_id, record))
        return model, HandAt(record=record, log=log, commitment=_commitment(log))

    async def _older_hand(self, model: TableModel, hand_id: str) -> HandAt:
        """A hand older than the model's index (``model.HANDS_KEPT``), found through the hand
        index or in the log; an id the table never scheduled is answered from the index."""
        found = await self._hands.find_older(model, hand_id)
        if found is None:
            raise HandNotFound(model.table_id, hand_id)
        record, stored = found
        stored = [*stored, *await self._store.after_hand(model.table_id, stored)]
        log = tuple(_hand_log_of(stored_events=[decode_events(s.envelope) for s in stored]))
        return HandAt(record=record, log=log, commitment=_commitment(log))

    async def _read_hand_log(self, table_id: str, record: HandRecord) -> list[LogEvent]:
        stored = await self._store.read_range(
            table_id, after_sequence=record.first_sequence - 1, last_version=record.last_version
        )
        stored += await self._store.after_hand(table_id, stored)
        return _hand_log_of(stored_events=[decode_events(s.envelope) for s in stored])

    async def history(self, table_id: str, hand_id: str) -> tuple[TableModel, HandAt, list[object]]:
        """A finished hand: its log and the raw stored envelopes (first to last version)."""
        model, at = await self.hand(table_id, hand_id)
        if not at.record.finished:
            raise HandNotFinished(hand_id)
        stored = await self._store.read_range(
            table_id, after_sequence=at.record.first_sequence - 1, last_version=at.record.last_version
        )
        return model, at, [s.envelope for s in stored]

    # -- watches ----------------------------------------------------------------------------

    async def watch(
        self, table_id: str, from_version: int, render: Render[T], *, key: object = None
    ) -> AsyncGenerator[T, None]:
        """``render(table, actions added)`` for the table after ``from_version`` (or now, if 0)
        and after every later envelope. On the table's owner, a watch from now is fed from the
        cached model (``services.table.watchers``; watches with the same ``key``, the viewer,
        share one rendered message per version); otherwise, or once that breaks off, from
        the table's subject, so any instance serves it."""
        if not from_version:
            local = await self._watch_locally(table_id, render, key)
            if local is not None:
                first, watch = local
                try:
                    yield first
                    while (message := await watch.next()) is not None:
                        yield message
                finally:
                    self._writer.watchers.remove(watch)
                from_version = watch.delivered
        async with contextlib.aclosing(self.watch_log(table_id, from_version, render)) as messages:
            async for message in messages:
                yield message

    async def _watch_locally(
        self, table_id: str, render: Render[T], key: object
    ) -> tuple[T, LocalWatch[T]] | None:
        try:
            async with self._writer.lock(table_id):
                model, _ = await self._writer.owned(table_id)
                first = render(model, [])
                return first, self._writer.watchers.add(table_id, render, version=model.version, key=key)
        except NotOwner:
            return None
        except TableNotFound:
            raise
        except Exception as exc:  # leases or the log unreachable now: the log path says the rest
            self._log.info("table.watch_from_log", table_id=table_id, error=str(exc))
            return None

    async def watch_log(self, table_id: str, from_version: int, render: Render[T]) -> AsyncGenerator[T, None]:
        """The watch from the table's subject: every envelope folded into a private model. From
        now: the newest snapshot and the log after it; after a version: the log up to it."""
        subject = self._store.subject(table_id)
        if not from_version:
            loaded = await self._store.load(table_id)
            if loaded is None:
                raise TableNotFound(table_id)
            model, after = loaded, loaded.sequence
            yield render(model, [])
        else:
            model = TableModel(table_id=table_id)
            stored = await self._store.events.read(subject)
            if not stored:
                raise TableNotFound(table_id)
            after = 0
            for item in stored:
                if item.envelope.version > from_version:
                    break
                _fold_checked(model, item, subject, self._store.verifier)
                after = item.sequence
        # aclosing: a watcher that goes away unsubscribes at once (not when collected).
        async with contextlib.aclosing(self._store.events.follow(subject, after_sequence=after)) as stream:
            async for item in stream:
                if item.envelope.version <= model.version:
                    continue
                mark = hand_mark(model)
                _fold_checked(model, item, subject, self._store.verifier)
                yield render(model, entries_since(model, mark))


def _fold_checked(model: TableModel, item: StoredEnvelope, subject: str, verifier: Verifier | None) -> None:
    """Fold a watched envelope, or end the watch with ``LogQuarantined`` at a foreign or corrupt
    one (``eventstore.loading``), as a load would: never fold past it."""
    tip = Tip(version=model.version, hash=model.last_hash or GENESIS)
    finding = check_envelope(item, stream=model.table_id, subject=subject, tip=tip, verifier=verifier)
    if finding is None:
        try:
            fold_envelope(model, item)
            return
        except Exception as exc:  # any failure of foreign events to decode or fold is a finding
            finding = fold_finding(item, stream=model.table_id, subject=subject, exc=exc)
    raise LogQuarantined(finding)


def _commitment(log: Sequence[LogEvent]) -> str:
    for e in log:
        if isinstance(e, HandStarted):
            return e.commitment
    return ""


def _hand_log_of(*, stored_events: Sequence[Sequence[LogEvent]]) -> list[LogEvent]:
    """The hand's log from its envelopes: from HandScheduled to HandEnded/HandVoided, and a show
    of the hand won uncontested after its end (decided with the end, or the winner's ShowHand in
    a later envelope, before the next hand)."""
    out: list[LogEvent] = []
    hand_id = ""
    ended = False
    for events in stored_events:
        for e in events:
            if isinstance(e, HandScheduled):
                if hand_id:
                    return out  # the next hand
                hand_id = e.hand_id
            if not hand_id:
                continue
            if ended:
                if isinstance(e, UncontestedHandShown) and e.hand_id == hand_id:
                    out.append(e)
                continue
            out.append(e)
            ended = isinstance(e, HandEnded | HandVoided)
    return out


def hand_events_of(log: Sequence[LogEvent]) -> list[HandEvent]:
    return [e for e in log if isinstance(e, table.HAND_EVENT_TYPES)]
