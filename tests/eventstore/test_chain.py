"""Pure parts of the event store: the hash chain, the envelope codec, subjects, the lease rule."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from openpoker.eventstore import GENESIS, Draft, Envelope, RecordedEvent, seal, verify_chain
from openpoker.eventstore.chain import canonical_bytes, compute_hash
from openpoker.eventstore.codec import decode, encode
from openpoker.eventstore.lease import should_give_up
from openpoker.eventstore.subjects import PARTITIONS, partition_of, table_subject

T0 = dt.datetime(2026, 11, 22, 3, 0, 0, 123456, tzinfo=dt.UTC)


def draft(version: int, *, epoch: int = 1, stream: str = "t1") -> Draft:
    return Draft(
        stream_id=stream,
        version=version,
        command_id=f"c{version}",
        owner_epoch=epoch,
        rules_version="seeds/1",
        engine_version="e1",
        events=(RecordedEvent(type="HandStarted", payload=b'{"hand_id":"h1"}'),),
        recorded_at=T0,
        causation_id="cause",
        correlation_id="corr",
    )


def chain(count: int) -> list[Envelope]:
    out, prev = [], GENESIS
    for version in range(1, count + 1):
        out.append(seal(draft(version), prev))
        prev = out[-1].hash
    return out


def test_codec_round_trips_every_field() -> None:
    for env in chain(3):
        assert decode(encode(env)) == env
        assert env.msg_id == f"t1:{env.version}:1"


def test_hash_is_sha256_of_canonical_bytes_and_links_the_chain() -> None:
    envs = chain(3)
    assert envs[0].prev_hash == GENESIS
    assert envs[1].prev_hash == envs[0].hash
    assert len(envs[0].hash) == 32
    assert compute_hash(envs[1], envs[1].prev_hash) == envs[1].hash
    assert canonical_bytes(envs[1], envs[1].prev_hash) == canonical_bytes(envs[1], envs[1].prev_hash)
    assert verify_chain(envs).ok
    assert verify_chain(envs).checked == 3


@pytest.mark.parametrize(
    "change",
    [
        {"command_id": "x"},
        {"owner_epoch": 9},
        {"rules_version": "phh/1"},
        {"engine_version": "e2"},
        {"recorded_at": T0 + dt.timedelta(microseconds=1)},
        {"causation_id": ""},
        {"correlation_id": "other"},
        {"events": (RecordedEvent(type="HandStarted", payload=b'{"hand_id":"h2"}'),)},
        {"events": (RecordedEvent(type="HandEnded", payload=b'{"hand_id":"h1"}'),)},
        {"events": ()},
    ],
)
def test_any_changed_field_breaks_the_chain_at_that_version(change: dict[str, object]) -> None:
    envs = chain(4)
    envs[2] = dataclasses.replace(envs[2], **change)  # type: ignore[arg-type]
    report = verify_chain(envs)
    assert report.first_broken_version == 3
    assert report.checked == 2


def test_field_boundaries_are_unambiguous() -> None:
    # Moving bytes between adjacent fields must change the hash (length prefixes).
    a = dataclasses.replace(draft(1), command_id="ab", causation_id="")
    b = dataclasses.replace(draft(1), command_id="a", causation_id="b")
    assert compute_hash(a, GENESIS) != compute_hash(b, GENESIS)


def test_gap_reorder_removal_epoch_and_stream_checks() -> None:
    envs = chain(5)
    assert verify_chain([envs[0], envs[1], envs[3]]).first_broken_version == 4  # removed v3
    assert verify_chain([envs[0], envs[2], envs[1]]).first_broken_version == 3  # reordered
    assert verify_chain(envs[1:]).first_broken_version == 2  # missing start
    assert verify_chain(envs[2:], start_hash=envs[1].hash).ok  # resume from a known hash
    lower = seal(draft(2, epoch=0), envs[0].hash)
    up = seal(draft(1, epoch=3), GENESIS)
    assert verify_chain([up, seal(draft(2, epoch=2), up.hash)]).problem.startswith("owner epoch")
    assert verify_chain([envs[0], lower]).first_broken_version == 2
    other = seal(draft(2, stream="t2"), envs[0].hash)
    assert "stream id" in verify_chain([envs[0], other]).problem
    assert verify_chain([]).ok


def test_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        seal(dataclasses.replace(draft(1), recorded_at=dt.datetime(2026, 1, 1)), GENESIS)


def test_subjects_are_stable_partitions() -> None:
    subject = table_subject("holdem-1")
    assert subject == f"poker.table.{partition_of('holdem-1')}.holdem-1"
    assert 0 <= partition_of("holdem-1") < PARTITIONS
    assert partition_of("holdem-1") == partition_of("holdem-1")
    assert len({partition_of(f"t{i}") for i in range(2000)}) > PARTITIONS // 2
    for bad in ("", "a.b", "a*", "a>", "a b"):
        with pytest.raises(ValueError, match="subject token"):
            table_subject(bad)


@pytest.mark.parametrize(
    ("now", "last_good", "conflict", "give_up"),
    [
        (100.0, 100.0, True, True),  # a definite conflict: at once
        (107.9, 100.0, False, False),  # slow renewals below 80% of a 10 s TTL: keep the lease
        (108.0, 100.0, False, True),  # 80% of the TTL without a good renewal
        (102.5, 100.0, False, False),
    ],
)
def test_lease_give_up_rule(now: float, last_good: float, conflict: bool, give_up: bool) -> None:
    assert (
        should_give_up(now=now, last_good_renewal=last_good, ttl=10.0, definite_conflict=conflict) is give_up
    )
