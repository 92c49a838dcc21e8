"""The hand-end check reads the table's event log (in-memory event store here)."""

from __future__ import annotations

from openpoker.eventstore.envelope import StoredEnvelope
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.services.rng.handlog import EventLogHandLog
from tests.services.rng.tablelog import TableWriter


async def test_hand_ended_only_for_that_table_and_hand() -> None:
    store = InMemoryEventStore()
    log = EventLogHandLog(store)
    t1 = TableWriter(store, "t-1")
    t2 = TableWriter(store, "t-2")
    assert not await log.hand_ended("t-1", "h-1")  # empty subject
    await t1.play_hand("h-1", end=False)
    assert not await log.hand_ended("t-1", "h-1")  # live hand
    await t2.play_hand("h-1")
    assert not await log.hand_ended("t-1", "h-1")  # ended elsewhere
    assert await log.hand_ended("t-2", "h-1")
    await t1.append(("HandEnded", {"type": "HandEnded", "hand_id": "h-1"}))
    assert await log.hand_ended("t-1", "h-1")
    assert not await log.hand_ended("t-1", "h-2")


async def test_other_events_and_bad_payloads_do_not_end_a_hand() -> None:
    store = InMemoryEventStore()
    log = EventLogHandLog(store)
    t = TableWriter(store, "t-1")
    await t.append(("HandVoided", {"hand_id": "h-1"}), ("HandEndedSoon", {"hand_id": "h-1"}))
    await t.append(("HandEnded", {"hand": "h-1"}))
    assert not await log.hand_ended("t-1", "h-1")


async def test_position_marks_the_log_end_and_the_reveal_reads_only_after_it() -> None:
    store = InMemoryEventStore()
    log = EventLogHandLog(store)
    t = TableWriter(store, "t-1")
    assert await log.position("t-1") == 0
    await t.play_hand("h-1")
    at_shuffle = await log.position("t-1")
    assert at_shuffle > 0
    # h-1 ended before the mark: a search from the mark does not see it, so reads start there.
    assert await log.hand_ended("t-1", "h-1")
    assert not await log.hand_ended("t-1", "h-1", after=at_shuffle)
    await t.play_hand("h-2")
    assert await log.hand_ended("t-1", "h-2", after=at_shuffle)
    assert await log.position("t-1") > at_shuffle


class CountingStore(InMemoryEventStore):
    """Counts the reads the hand log makes (last envelope, and reads of a range)."""

    def __init__(self) -> None:
        super().__init__()
        self.lasts = 0
        self.reads = 0

    async def last(self, subject: str) -> StoredEnvelope | None:
        self.lasts += 1
        return await super().last(subject)

    async def read(
        self, subject: str, *, after_sequence: int = 0, from_version: int = 1
    ) -> list[StoredEnvelope]:
        self.reads += 1
        return await super().read(subject, after_sequence=after_sequence, from_version=from_version)


async def test_a_hand_ended_by_the_last_envelope_needs_no_range_read() -> None:
    store = CountingStore()
    log = EventLogHandLog(store)
    t = TableWriter(store, "t-1")
    await t.play_hand("h-1")
    assert await log.hand_ended("t-1", "h-1")
    assert (store.lasts, store.reads) == (1, 0)


async def test_a_hand_ended_before_later_envelopes_is_found_by_the_range_read() -> None:
    store = CountingStore()
    log = EventLogHandLog(store)
    t = TableWriter(store, "t-1")
    mark = await log.position("t-1")
    await t.play_hand("h-1")
    await t.append(("PlayerJoined", {"type": "PlayerJoined", "player": "p"}))  # after the end
    assert await log.hand_ended("t-1", "h-1", after=mark)
    assert store.reads == 1
    await t.play_hand("h-2", end=False)
    assert not await log.hand_ended("t-1", "h-2", after=mark)


async def test_position_answers_from_the_last_sequence_seen_and_stays_a_valid_start() -> None:
    store = CountingStore()
    log = EventLogHandLog(store)
    t = TableWriter(store, "t-1")
    await t.play_hand("h-1")
    first = await log.position("t-1")
    assert first == t.sequence
    lasts = store.lasts
    await t.append(("PlayerJoined", {"type": "PlayerJoined", "player": "p"}))
    mark = await log.position("t-1")  # remembered: no read, and behind the log's real end
    assert (mark, store.lasts) == (first, lasts)
    await t.play_hand("h-2")
    assert await log.hand_ended("t-1", "h-2", after=mark)  # the hand is still found after it
    assert await log.position("t-1") == t.sequence  # the reveal moved the mark to what it saw
