"""The rng gRPC API over in-memory stores: shuffle, reveal, verify, callers, failures."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from functools import partial

import grpc
import pytest

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.services.rng.sealing import SeedSealer, associated_data
from openpoker.services.rng.store import InMemoryShuffleStore, StoredShuffle
from openpoker.shell.client import rich_error
from openpoker.shuffle import canonical_deck, commitment, derive_deck, entropy
from openpoker.shuffle.errors import EntropyUnavailable
from tests.services.rng.rig import KEY, Rig, caller, cards_of, dealer, start_rig


async def shuffle(rig: Rig, hand: str = "h-1", table: str = "t-1", size: int = 52) -> pb.ShuffleResponse:
    request = pb.ShuffleRequest(request_id=f"r-{hand}", table_id=table, hand_id=hand, deck_size=size)
    response: pb.ShuffleResponse = await rig.stub.Shuffle(request, metadata=dealer())
    return response


async def failure(call: Callable[[], object]) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()  # type: ignore[misc]
    err = rich_error(info.value)
    assert err.domain == "poker.rng"
    return err.code, err.reason, dict(err.metadata)


@pytest.mark.parametrize("size", [52, 36])
async def test_shuffle_returns_commitment_and_a_full_deck(rig: Rig, size: int) -> None:
    r = await shuffle(rig, size=size)
    assert len(r.commitment) == 64
    assert r.algorithm_version == "openpoker-shuffle-v1"
    assert (r.table_id, r.hand_id, r.deck_size) == ("t-1", "h-1", size)
    assert len(set(cards_of(r))) == size


async def test_shuffle_is_idempotent_per_hand(rig: Rig) -> None:
    first = await shuffle(rig)
    again = await shuffle(rig)
    assert (again.commitment, cards_of(again)) == (first.commitment, cards_of(first))
    other = await shuffle(rig, hand="h-2")
    assert other.commitment != first.commitment


async def test_hand_id_reuse_for_another_table_or_size(rig: Rig) -> None:
    await shuffle(rig)
    code, reason, _ = await failure(lambda: shuffle(rig, table="t-2"))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "HAND_ID_REUSED")
    code, reason, _ = await failure(lambda: shuffle(rig, size=36))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "HAND_ID_REUSED")


@pytest.mark.parametrize(
    ("hand", "table", "size", "reason"),
    [("h", "t", 40, "BAD_DECK_SIZE"), ("", "t", 52, "BAD_HAND_ID"), ("h", "", 52, "INVALID_TABLE_ID")],
)
async def test_invalid_shuffle_requests(rig: Rig, hand: str, table: str, size: int, reason: str) -> None:
    code, got, _ = await failure(lambda: shuffle(rig, hand=hand, table=table, size=size))
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)


async def test_callers(rig: Rig) -> None:
    request = pb.ShuffleRequest(request_id="r", table_id="t", hand_id="h", deck_size=52)
    code, reason, _ = await failure(lambda: rig.stub.Shuffle(request))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    for who in ("auditor", "table", "player"):
        code, reason, meta = await failure(lambda who=who: rig.stub.Shuffle(request, metadata=caller(who)))  # type: ignore[misc]
        assert (code, reason, meta["caller"]) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "CALLER_NOT_ALLOWED",
            who,
        )
    await shuffle(rig, hand="h")
    rig.hand_log.end("t-1", "h")
    reveal = pb.RevealSeedRequest(hand_id="h")
    code, reason, _ = await failure(lambda: rig.stub.RevealSeed(reveal, metadata=caller("table")))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
    code, reason, _ = await failure(lambda: rig.stub.RevealSeed(reveal))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    for who in ("dealer", "auditor"):
        assert len((await rig.stub.RevealSeed(reveal, metadata=caller(who))).record.seed) == 32
    # Verify is a pure check anyone may run.
    ok = await rig.stub.Verify(
        pb.VerifyRequest(record=(await rig.stub.RevealSeed(reveal, metadata=dealer())).record)
    )
    assert ok.ok


async def test_reveal_only_after_the_hand_ended(rig: Rig) -> None:
    r = await shuffle(rig)
    request = pb.RevealSeedRequest(hand_id="h-1")
    code, reason, meta = await failure(lambda: rig.stub.RevealSeed(request, metadata=dealer()))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_NOT_ENDED")
    assert meta == {"tableId": "t-1", "handId": "h-1"}
    rig.hand_log.end("t-other", "h-1")  # the same hand id ended on another table does not count
    code, reason, _ = await failure(lambda: rig.stub.RevealSeed(request, metadata=dealer()))
    assert reason == "HAND_NOT_ENDED"
    rig.hand_log.end("t-1", "h-1")
    revealed = await rig.stub.RevealSeed(request, metadata=dealer())
    seed = revealed.record.seed
    assert revealed.table_id == "t-1"
    assert revealed.record.commitment == r.commitment
    assert hashlib.sha256(b"commit/v1" + seed + b"h-1").hexdigest() == r.commitment
    assert [str(c) for c in derive_deck(seed, "h-1", 52)] == cards_of(r)


async def test_reveal_unknown_hand(rig: Rig) -> None:
    code, reason, _ = await failure(
        lambda: rig.stub.RevealSeed(pb.RevealSeedRequest(hand_id="nope"), metadata=dealer())
    )
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "SHUFFLE_NOT_FOUND")


async def revealed_record(rig: Rig, dealt: int) -> pb.ShuffleRecord:
    r = await shuffle(rig)
    rig.hand_log.end("t-1", "h-1")
    record: pb.ShuffleRecord = (
        await rig.stub.RevealSeed(pb.RevealSeedRequest(hand_id="h-1"), metadata=dealer())
    ).record
    record.dealt.extend(pb.DealtCard(position=i, card=c) for i, c in enumerate(cards_of(r)[:dealt]))
    return record


async def test_verify_honest_and_tampered_records(rig: Rig) -> None:
    record = await revealed_record(rig, dealt=9)
    assert (await rig.stub.Verify(pb.VerifyRequest(record=record))).ok

    tampered = pb.ShuffleRecord()
    tampered.CopyFrom(record)
    original = tampered.dealt[3].card
    # Any card of the deck that was not dealt (the shuffle is random: no fixed card is safe).
    dealt = {d.card for d in record.dealt}
    tampered.dealt[3].card = next(str(c) for c in canonical_deck(52) if str(c) not in dealt)
    v = await rig.stub.Verify(pb.VerifyRequest(record=tampered))
    assert not v.ok
    assert v.failed_check == pb.VERIFY_CHECK_DECK_MISMATCH
    assert v.position == 3
    assert v.expected_card == original

    for field, value, check in [
        ("seed", bytes(32), pb.VERIFY_CHECK_COMMITMENT_MISMATCH),
        ("hand_id", "h-2", pb.VERIFY_CHECK_COMMITMENT_MISMATCH),
        ("algorithm_version", "openpoker-shuffle-v9", pb.VERIFY_CHECK_UNKNOWN_VERSION),
        ("seed", b"", pb.VERIFY_CHECK_SEED_MISSING),
    ]:
        t = pb.ShuffleRecord()
        t.CopyFrom(record)
        setattr(t, field, value)
        v = await rig.stub.Verify(pb.VerifyRequest(record=t))
        assert (v.ok, v.failed_check) == (False, check), field

    bad = pb.ShuffleRecord()
    bad.CopyFrom(record)
    bad.dealt[0].card = "Xx"
    v = await rig.stub.Verify(pb.VerifyRequest(record=bad))
    assert (v.ok, v.failed_check) == (False, pb.VERIFY_CHECK_BAD_CARD)


async def test_os_entropy_failure_refuses_to_shuffle(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(n: int) -> bytes:
        raise OSError("getrandom failed")

    monkeypatch.setattr(os, "urandom", broken)
    with pytest.raises(EntropyUnavailable):
        entropy.os_seed()
    store = InMemoryShuffleStore()
    async for rig in start_rig(store=store, seed_source=entropy.os_seed):
        code, reason, meta = await failure(partial(shuffle, rig))
        assert (code, reason, meta) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "ENTROPY_UNAVAILABLE",
            {"cause": "OSError"},
        )
        assert await store.get("h-1") is None  # nothing committed, nothing dealt


def test_os_seed_is_32_fresh_bytes() -> None:
    seeds = {entropy.os_seed() for _ in range(100)}
    assert len(seeds) == 100
    assert {len(s) for s in seeds} == {32}


class OrderSpyStore(InMemoryShuffleStore):
    """Records what reached the store, and fails on demand."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail
        self.created: list[StoredShuffle] = []

    async def create(self, record: StoredShuffle) -> StoredShuffle:
        if self.fail:
            raise ConnectionError("store down")
        self.created.append(record)
        return await super().create(record)


async def test_no_deck_without_a_stored_commitment() -> None:
    store = OrderSpyStore(fail=True)
    async for rig in start_rig(store=store):
        code, reason, _ = await failure(partial(shuffle, rig))
        assert (code, reason) == (grpc.StatusCode.INTERNAL, "INTERNAL")
    store = OrderSpyStore()
    async for rig in start_rig(store=store):
        r = await shuffle(rig)
        assert [s.commitment for s in store.created] == [r.commitment]
        assert store.created[0].sealed_seed  # stored sealed, before the deck left the service


class LateStore(InMemoryShuffleStore):
    """A store where another replica's record lands between our get and our create."""

    async def get(self, hand_id: str) -> StoredShuffle | None:
        return None


async def test_deck_comes_from_the_stored_seed_when_a_race_is_lost() -> None:
    winner_seed = bytes(range(32))
    c = commitment(winner_seed, "h-1")
    aad = associated_data(version="openpoker-shuffle-v1", table_id="t-1", hand_id="h-1", commitment=c)
    late = LateStore()
    await late.create(
        StoredShuffle(
            version="openpoker-shuffle-v1",
            table_id="t-1",
            hand_id="h-1",
            deck_size=52,
            commitment=c,
            sealed_seed=SeedSealer(KEY, "test-key").seal(winner_seed, aad),
            key_id="test-key",
        )
    )
    async for rig in start_rig(store=late):
        r = await shuffle(rig)
        assert r.commitment == c
        assert cards_of(r) == [str(x) for x in derive_deck(winner_seed, "h-1", 52)]


def test_commitment_precedes_the_deck_on_the_wire_and_no_field_carries_clear_cards() -> None:
    response = pb.ShuffleResponse(
        commitment="ab" * 32,
        algorithm_version="v",
        table_id="t",
        hand_id="h",
        deck_size=52,
        sealed_deck=b"\x01",
    )
    data = response.SerializeToString()
    assert data.index(b"ab" * 32) < data.index(b"\x01")
    fields = response.DESCRIPTOR.fields_by_name
    assert fields["commitment"].number < fields["sealed_deck"].number
    assert "cards" not in fields


class CountingStore(InMemoryShuffleStore):
    def __init__(self) -> None:
        super().__init__()
        self.gets = 0
        self.creates = 0

    async def get(self, hand_id: str) -> StoredShuffle | None:
        self.gets += 1
        return await super().get(hand_id)

    async def create(self, record: StoredShuffle) -> StoredShuffle:
        self.creates += 1
        return await super().create(record)


async def test_a_first_shuffle_is_one_create_and_a_retry_answers_the_stored_record() -> None:
    store = CountingStore()
    async for rig in start_rig(store=store):
        first = await shuffle(rig)
        assert (store.creates, store.gets) == (1, 0)  # the create is the existence check
        again = await shuffle(rig)
        assert (again.commitment, cards_of(again)) == (first.commitment, cards_of(first))
        stored = await store.get("h-1")
        assert stored is not None
        assert stored.commitment == first.commitment  # the retry's fresh record never replaced it


async def test_a_retry_is_answered_even_when_the_os_source_fails() -> None:
    broken = False

    def source() -> bytes:
        if broken:
            raise EntropyUnavailable(cause="OSError")
        return os.urandom(32)

    async for rig in start_rig(seed_source=source):
        first = await shuffle(rig)
        broken = True
        again = await shuffle(rig)  # the hand has its shuffle: no seed needed
        assert (again.commitment, cards_of(again)) == (first.commitment, cards_of(first))
        code, reason, _ = await failure(partial(shuffle, rig, hand="h-2"))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ENTROPY_UNAVAILABLE")
