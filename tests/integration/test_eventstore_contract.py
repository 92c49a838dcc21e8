"""ONE contract for every event store: the same tests against InMemoryEventStore, against
JetStreamEventStore on a real nats-server (fixture ``nats_url``: free loopback port, temp dir),
and against JetStreamEventStore on a real 3-node cluster with R3 streams (``nats_cluster``).

Lost acks are simulated by subclassing a store's single raw-publish method: the real publish
happens (or not) and then a ``TimeoutError`` is raised, exactly what a client sees when an ack is
lost. NATS itself is never mocked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import nats
import pytest
from nats.js.errors import NoStreamResponseError

from openpoker.eventstore import (
    GENESIS,
    AppendUnresolved,
    ConcurrencyConflict,
    Draft,
    Envelope,
    EventStore,
    RecordedEvent,
    Snapshot,
    seal,
    verify_chain,
)
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, TABLE_SNAPSHOTS, ensure_stream
from openpoker.eventstore.subjects import table_subject

T0 = dt.datetime(2026, 11, 22, 3, 0, tzinfo=dt.UTC)


def draft(stream_id: str, version: int, *, epoch: int = 1, note: str = "") -> Draft:
    return Draft(
        stream_id=stream_id,
        version=version,
        command_id=f"cmd-{stream_id}-{version}-{epoch}{note}",
        owner_epoch=epoch,
        rules_version="seeds/1",
        engine_version="test",
        events=(
            RecordedEvent(type="ChipsMoved", payload=f'{{"v":{version},"n":"{note}"}}'.encode()),
            RecordedEvent(type="Noted", payload=b"{}"),
        ),
        recorded_at=T0 + dt.timedelta(seconds=version),
    )


def chain(stream_id: str, count: int, *, epoch: int = 1) -> list[Envelope]:
    out: list[Envelope] = []
    prev = GENESIS
    for version in range(1, count + 1):
        env = seal(draft(stream_id, version, epoch=epoch), prev)
        out.append(env)
        prev = env.hash
    return out


# Faults: "after" = the message is stored, then the ack is lost; "before" = lost before storing;
# "in_flight" = an earlier attempt of the same append (its ack lost) is still being stored when
# the store publishes; "unheard" = NATS answers "no responders" (no stream listens on the
# subject from where the client is yet, as on a cluster just after the stream is created; the
# memory store always listens). ``on_fault`` runs at the fault (to let another writer in).
@dataclasses.dataclass
class Faults:
    after: int = 0
    before: int = 0
    in_flight: int = 0
    unheard: int = 0
    on_fault: Callable[[], Awaitable[None]] | None = None


class LossyMemory(InMemoryEventStore):
    faults = Faults()

    async def _publish(self, *args: Any) -> Any:
        if self.faults.in_flight:  # no replication in memory: the earlier copy is simply stored
            self.faults.in_flight -= 1
            await super()._publish(*args)
        return await _lossy(self.faults, super()._publish, *args)


class LossyJetStream(JetStreamEventStore):
    faults = Faults()
    raw: Any = None  # the connection, to send a copy whose ack nobody waits for

    async def _publish(self, *args: Any) -> Any:
        if self.faults.in_flight:
            self.faults.in_flight -= 1
            subject, data, headers = args
            # Sent and not awaited: on a cluster it is still being replicated when the store's
            # own publish of the same message id arrives.
            await self.raw.publish(
                subject, data, headers={**headers, "Nats-Expected-Stream": TABLE_EVENTS.name}
            )
        if self.faults.unheard:
            self.faults.unheard -= 1
            raise NoStreamResponseError
        return await _lossy(self.faults, super()._publish, *args)


async def _lossy(faults: Faults, publish: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    if faults.before:
        faults.before -= 1
        if faults.on_fault is not None:
            await faults.on_fault()
        raise TimeoutError("ack lost (simulated, before storing)")
    result = await publish(*args)
    if faults.after:
        faults.after -= 1
        raise TimeoutError("ack lost (simulated, after storing)")
    return result


Factory = Callable[[Faults], Awaitable[Any]]


@pytest.fixture(params=["memory", "jetstream", "jetstream-r3"])
async def make_store(request: pytest.FixtureRequest) -> AsyncIterator[Factory]:
    if request.param == "memory":

        async def make_memory(faults: Faults) -> Any:
            store = LossyMemory()
            store.faults = faults
            return store

        yield make_memory
        return
    if request.param == "jetstream":
        urls = [request.getfixturevalue("nats_url")]
        replicas = 1
    else:  # a 3-node cluster with R3 streams: conflicts may be 10164, retries duplicate acks
        urls = request.getfixturevalue("nats_cluster").urls
        replicas = 3
    # The context closes the connection whatever fails, the streams' setup included: a connection
    # left open outlives its event loop and fails a later test with an unraisable warning.
    async with await nats.connect(urls) as nc:
        js = nc.jetstream()
        await ensure_stream(js, dataclasses.replace(TABLE_EVENTS, replicas=replicas))
        await ensure_stream(js, dataclasses.replace(TABLE_SNAPSHOTS, replicas=replicas))

        async def make_jetstream(faults: Faults) -> Any:
            # The lean ack path (eventstore.acks), as the table service appends.
            store = LossyJetStream(js, stream=TABLE_EVENTS.name, publish_timeout=2.0, nc=nc)
            store.faults = faults
            store.raw = nc
            return store

        yield make_jetstream


@pytest.fixture
async def store(make_store: Factory) -> EventStore:
    result: EventStore = await make_store(Faults())
    return result


A = table_subject("table-a")
B = table_subject("table-b")


async def append_all(store: EventStore, subject: str, envelopes: list[Envelope], start: int = 0) -> list[int]:
    sequences = []
    last = start
    for env in envelopes:
        result = await store.append(subject, env, expected_sequence=last)
        assert not result.duplicate
        last = result.sequence
        sequences.append(last)
    return sequences


class TestEventStoreContract:
    async def test_ordered_reads_of_one_subject_among_others(self, store: EventStore) -> None:
        a_envs, b_envs = chain("table-a", 6), chain("table-b", 6)
        a_last = b_last = 0
        a_seqs = []
        for a_env, b_env in zip(a_envs, b_envs, strict=True):  # interleave two subjects
            a_last = (await store.append(A, a_env, expected_sequence=a_last)).sequence
            b_last = (await store.append(B, b_env, expected_sequence=b_last)).sequence
            a_seqs.append(a_last)
        read = await store.read(A)
        assert [s.envelope for s in read] == a_envs  # lossless round trip, in order
        assert [s.sequence for s in read] == a_seqs
        assert a_seqs == sorted(a_seqs)
        last = await store.last(A)
        assert last is not None
        assert (last.envelope, last.sequence) == (a_envs[-1], a_seqs[-1])
        assert await store.last(table_subject("table-none")) is None
        assert await store.read(table_subject("table-none")) == []

    async def test_long_subject_reads_complete_and_in_order(self, store: EventStore) -> None:
        envs = chain("table-a", 400)
        seqs = await append_all(store, A, envs)
        read = await store.read(A)
        assert [s.sequence for s in read] == seqs
        assert verify_chain(s.envelope for s in read).checked == 400

    async def test_reads_from_a_sequence_or_a_version(self, store: EventStore) -> None:
        envs = chain("table-a", 5)
        seqs = await append_all(store, A, envs)
        after = await store.read(A, after_sequence=seqs[2])
        assert [s.envelope.version for s in after] == [4, 5]
        from_v = await store.read(A, from_version=2)
        assert [s.envelope.version for s in from_v] == [2, 3, 4, 5]
        assert await store.read(A, after_sequence=seqs[-1]) == []

    async def test_concurrent_appends_with_the_same_expectation_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        first = chain("table-a", 1)
        seq1 = (await store.append(A, first[0], expected_sequence=0)).sequence
        # 20 writers each append their own version 2 (different epochs: different message ids).
        rivals = [seal(draft("table-a", 2, epoch=1 + i, note=f"w{i}"), first[0].hash) for i in range(20)]
        outcomes = await asyncio.gather(
            *(store.append(A, env, expected_sequence=seq1) for env in rivals), return_exceptions=True
        )
        wins = [o for o in outcomes if not isinstance(o, BaseException)]
        conflicts = [o for o in outcomes if isinstance(o, ConcurrencyConflict)]
        assert len(wins) == 1
        assert len(conflicts) == 19
        assert all(c.expected_sequence == seq1 and c.subject == A for c in conflicts)
        read = await store.read(A)
        assert len(read) == 2
        assert read[1].sequence == wins[0].sequence

    async def test_stale_expectation_is_a_typed_conflict(self, store: EventStore) -> None:
        envs = chain("table-a", 3)
        seqs = await append_all(store, A, envs[:2])
        with pytest.raises(ConcurrencyConflict) as caught:
            await store.append(A, envs[2], expected_sequence=seqs[0])
        conflict = caught.value
        assert (conflict.expected_sequence, conflict.actual_sequence) == (seqs[0], seqs[1])
        assert conflict.msg_id == "table-a:3:1"
        assert conflict.error_code == 10071
        assert conflict.kind == "conflict"
        assert conflict.reason == "CONCURRENCY_CONFLICT"

    async def test_duplicate_message_id_is_stored_once(self, store: EventStore) -> None:
        env = chain("table-a", 1)[0]
        first = await store.append(A, env, expected_sequence=0)
        # A retry with the original (now stale) expectation, and one with the current one.
        again = await store.append(A, env, expected_sequence=0)
        again_current = await store.append(A, env, expected_sequence=first.sequence)
        assert (again.sequence, again.duplicate) == (first.sequence, True)
        assert (again_current.sequence, again_current.duplicate) == (first.sequence, True)
        assert len(await store.read(A)) == 1

    async def test_stale_owner_is_fenced_not_told_duplicate(self, store: EventStore) -> None:
        # Owner epoch 1 writes v1; new owner epoch 2 writes v2 (OwnerChanged). The stale owner
        # then tries its own v2: same stream and version, different epoch -> a conflict, never a
        # "duplicate" ack pointing at the new owner's message.
        v1 = chain("table-a", 1)[0]
        seq1 = (await store.append(A, v1, expected_sequence=0)).sequence
        takeover = seal(draft("table-a", 2, epoch=2, note="owner"), v1.hash)
        await store.append(A, takeover, expected_sequence=seq1)
        stale = seal(draft("table-a", 2, epoch=1), v1.hash)
        with pytest.raises(ConcurrencyConflict):
            await store.append(A, stale, expected_sequence=seq1)
        assert [s.envelope.owner_epoch for s in await store.read(A)] == [1, 2]

    async def test_lost_ack_after_storing_resolves_to_the_stored_message(self, make_store: Factory) -> None:
        store = await make_store(Faults(after=1))
        envs = chain("table-a", 2)
        result = await store.append(A, envs[0], expected_sequence=0)
        assert result.duplicate  # it had landed: found by reading back, not stored twice
        second = await store.append(A, envs[1], expected_sequence=result.sequence)
        read = await store.read(A)
        assert [s.sequence for s in read] == [result.sequence, second.sequence]
        assert [s.envelope for s in read] == envs

    async def test_a_copy_still_in_flight_resolves_to_the_stored_message(self, make_store: Factory) -> None:
        # A cluster answers the second copy "duplicate message id is in process" (10158) while
        # the first is replicated: the append may yet land, so it is resolved by reading back.
        store = await make_store(Faults())
        # First make sure the stream hears this connection's server: right after an R3 stream is
        # created a publish can meet "no responders", and the fault's unawaited copy would be
        # dropped unheard (the store's own send, retried, then stores the message itself).
        await store.append(B, chain("table-b", 1)[0], expected_sequence=0)
        store.faults.in_flight = 1
        envs = chain("table-a", 2)
        result = await store.append(A, envs[0], expected_sequence=0)
        assert result.duplicate  # stored once, by the earlier copy
        second = await store.append(A, envs[1], expected_sequence=result.sequence)
        read = await store.read(A)
        assert [s.sequence for s in read] == [result.sequence, second.sequence]
        assert [s.envelope for s in read] == envs

    async def test_no_stream_listening_yet_is_waited_out(self, make_store: Factory) -> None:
        # More "no responders" in a row than the store has attempts: nothing was stored each
        # time, so the store waits and sends again (within its publish timeout).
        store = await make_store(Faults(unheard=5))
        env = chain("table-a", 1)[0]
        result = await store.append(A, env, expected_sequence=0)
        assert not result.duplicate
        assert [s.envelope for s in await store.read(A)] == [env]

    async def test_lost_ack_before_storing_is_sent_again(self, make_store: Factory) -> None:
        store = await make_store(Faults(before=2))
        env = chain("table-a", 1)[0]
        result = await store.append(A, env, expected_sequence=0)
        assert not result.duplicate
        assert [s.envelope for s in await store.read(A)] == [env]

    async def test_lost_ack_while_another_writer_got_in_is_a_conflict(self, make_store: Factory) -> None:
        other = seal(draft("table-a", 1, epoch=7, note="other"), GENESIS)
        faults = Faults(before=1)
        store = await make_store(faults)

        async def rival_appends() -> None:
            await store.append(A, other, expected_sequence=0)

        faults.on_fault = rival_appends
        with pytest.raises(ConcurrencyConflict):
            await store.append(A, chain("table-a", 1)[0], expected_sequence=0)
        assert [s.envelope for s in await store.read(A)] == [other]

    async def test_ack_never_arriving_is_unresolved_and_stores_nothing(self, make_store: Factory) -> None:
        store = await make_store(Faults(before=10))
        with pytest.raises(AppendUnresolved) as caught:
            await store.append(A, chain("table-a", 1)[0], expected_sequence=0)
        assert caught.value.attempts == 3
        assert await store.read(A) == []

    async def test_hash_chain_verifies_and_names_an_altered_event(self, store: EventStore) -> None:
        envs = chain("table-a", 5)
        # A forged 6th envelope: content changed after sealing (hash kept).
        sixth = seal(draft("table-a", 6), envs[-1].hash)
        forged_events = (RecordedEvent(type="ChipsMoved", payload=b'{"v":6,"n":"forged"}'), sixth.events[1])
        forged = dataclasses.replace(sixth, events=forged_events)
        await append_all(store, A, [*envs, forged])
        read = [s.envelope for s in await store.read(A)]
        report = verify_chain(read)
        assert not report.ok
        assert report.first_broken_version == 6
        assert report.checked == 5
        assert verify_chain(read[:5]).ok
        # Altering an earlier event as read back is caught at that version.
        altered = list(read[:5])
        altered[2] = dataclasses.replace(altered[2], command_id="someone-else")
        assert verify_chain(altered).first_broken_version == 3

    async def test_snapshots_newest_wins(self, store: EventStore) -> None:
        assert await store.load_snapshot("table-a") is None
        first = Snapshot(stream_id="table-a", version=3, last_sequence=9, engine_version="e1", state=b"s3")
        second = Snapshot(stream_id="table-a", version=7, last_sequence=20, engine_version="e1", state=b"s7")
        other = Snapshot(stream_id="table-b", version=1, last_sequence=2, engine_version="e2", state=b"b")
        for snapshot in (first, second, other):
            await store.save_snapshot(snapshot)
        assert await store.load_snapshot("table-a") == second
        assert await store.load_snapshot("table-b") == other
