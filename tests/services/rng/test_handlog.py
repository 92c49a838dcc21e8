"""The hand-end check reads the table's event log (in-memory event store here)."""

from __future__ import annotations

from eventstore.memory import InMemoryEventStore
from services.rng.handlog import EventLogHandLog
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
