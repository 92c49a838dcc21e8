"""The table service signs the envelopes its tables seal in one pass with one signature
(``eventstore.batchsign``): a batch of actions for several tables over ``ActBatchStream`` gives
envelopes that share a signature, each with its inclusion proof; every table's log loads with
the signature check on, and a tampered proof quarantines the log at that version. Its snapshots
are signed too, and a forged one is not used."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.eventstore.envelope import Snapshot
from openpoker.eventstore.loading import Problem, signature_verifier
from openpoker.eventstore.signing import TABLE_WRITER, Keyring, PublicKey, Signer, check_snapshot, raw_public
from openpoker.tablelog.model import TableModel
from openpoker.tablelog.store import MemoryTableEvents, TableStore
from tests.eventstore.test_signing import T0
from tests.services.table.helpers import (
    DEALER,
    PARTITIONS,
    FakeWallet,
    Running,
    act,
    create,
    join,
    rid,
    sealed,
    serve,
    to_act,
)

TABLES = ("t1", "t2", "t3", "t4")
SIGNER = Signer.from_key(TABLE_WRITER, ed25519.Ed25519PrivateKey.generate())
KEYRING = Keyring(
    keys={
        SIGNER.key_id: PublicKey(
            key_id=SIGNER.key_id, writer=TABLE_WRITER, public=raw_public(SIGNER.key.public_key()), created=T0
        )
    }
)


def KEYRING_FILE_CHECK(snapshot: Snapshot) -> str | None:
    problem = check_snapshot(snapshot, KEYRING, writer=TABLE_WRITER)
    return None if problem is None else problem.describe()


@pytest.fixture
def cash() -> dict[str, int]:
    return {f"{t}-{side}": 1000 for t in TABLES for side in "ab"}


@pytest.fixture
def events() -> MemoryTableEvents:
    return MemoryTableEvents()


@pytest.fixture
async def signed_svc(events: MemoryTableEvents, wallet: FakeWallet) -> AsyncIterator[Running]:
    running = await serve(events, wallet, signer=SIGNER)
    try:
        yield running
    finally:
        await running.stop()


async def _deal_in_one_batch(svc: Running) -> None:
    for t in TABLES:
        await create(svc.stub, t)
        for seat, side in ((1, "a"), (2, "b")):
            await join(svc.stub, f"{t}-{side}", seat, table=f"tables/{t}")
    call = svc.stub.ActBatchStream(timeout=10, metadata=DEALER)
    starts = [
        pb.ActStreamRequest(
            start_hand=pb.StartHandRequest(
                request_id=rid(), table=f"tables/{t}", hand_id=f"{t}-h1", sealed_deck=sealed()
            )
        )
        for t in TABLES
    ]
    await call.write(pb.ActBatchStreamRequest(actions=starts))
    answer = await call.read()
    assert [a.WhichOneof("result") for a in answer.answers] == ["start_hand"] * len(TABLES)
    await call.done_writing()


async def test_hands_started_in_one_batch_share_one_signature_and_each_log_verifies(
    signed_svc: Running, events: MemoryTableEvents
) -> None:
    await _deal_in_one_batch(signed_svc)
    store = TableStore(events, partitions=PARTITIONS)
    verifier = signature_verifier(KEYRING, writer=TABLE_WRITER)
    lasts = []
    for t in TABLES:
        log = await events.read(store.subject(t))
        assert all(s.envelope.key_id == SIGNER.key_id for s in log)
        lasts.append(log[-1].envelope)
        loaded = await store.load_checked(t, verifier=verifier)
        assert loaded.finding is None
        assert loaded.model is not None
        assert loaded.model.version == log[-1].envelope.version
    # The four HandStarted envelopes were sealed in one pass: one signature, four leaves.
    assert len({e.signature for e in lasts}) == 1
    assert sorted(e.batch_index for e in lasts) == [0, 1, 2, 3]
    assert {e.batch_size for e in lasts} == {4}
    assert all(len(e.batch_proof) == 2 for e in lasts)


async def test_a_tampered_inclusion_proof_quarantines_the_log_at_its_version(
    signed_svc: Running, events: MemoryTableEvents
) -> None:
    await _deal_in_one_batch(signed_svc)
    store = TableStore(events, partitions=PARTITIONS)
    log = await events.read(store.subject("t2"))
    copy = MemoryTableEvents()
    last = log[-1].envelope
    forged = dataclasses.replace(last, batch_proof=(bytes(32), *last.batch_proof[1:]))
    sequence = 0
    for stored in [*log[:-1], dataclasses.replace(log[-1], envelope=forged)]:
        sequence = (
            await copy.append(store.subject("t2"), stored.envelope, expected_sequence=sequence)
        ).sequence
    loaded = await TableStore(copy, partitions=PARTITIONS).load_checked(
        "t2", verifier=signature_verifier(KEYRING, writer=TABLE_WRITER)
    )
    assert loaded.finding is not None
    assert loaded.finding.problem is Problem.REJECTED
    assert loaded.finding.version == last.version
    assert loaded.finding.detail == f"bad signature at version {last.version} (key {SIGNER.key_id!r})"
    assert loaded.model is not None
    assert loaded.model.version == last.version - 1


def _with_stacks_raised(doc: object) -> object:
    """The snapshot document with every "stack" a million higher (a forger's edit)."""
    if isinstance(doc, dict):
        return {
            k: (v + 1_000_000 if k == "stack" and isinstance(v, int) else _with_stacks_raised(v))
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [_with_stacks_raised(v) for v in doc]
    return doc


def _state(model: TableModel | None) -> object:
    assert model is not None
    assert model.state is not None
    return model.state.snapshot()


async def test_a_snapshot_is_used_only_as_the_table_writer_signed_it(
    signed_svc: Running, events: MemoryTableEvents
) -> None:
    await _deal_in_one_batch(signed_svc)
    # t1's hand ends (the small blind folds): the table snapshots at the hand boundary, signed.
    view = (await signed_svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    await act(signed_svc.stub, to_act(view), pb.ACTION_TYPE_FOLD, table="tables/t1")
    await signed_svc.app.drain()
    snap = await events.load_snapshot("t1")
    assert snap is not None
    assert snap.key_id == SIGNER.key_id
    check = KEYRING_FILE_CHECK
    truth = await TableStore(events, partitions=PARTITIONS).load("t1")
    assert truth is not None
    store = TableStore(events, partitions=PARTITIONS, snapshot_verifier=check)
    loaded = await store.load("t1")
    assert store.snapshots_refused == 0
    assert loaded is not None
    assert _state(loaded) == _state(truth)
    # Forged: the stacks raised, under the genuine signature, or unsigned: refused, the log read.
    raised = json.dumps(_with_stacks_raised(json.loads(snap.state))).encode()
    for forged in (
        dataclasses.replace(snap, state=raised),
        dataclasses.replace(snap, state=raised, key_id="", signature=b""),
    ):
        events._snapshots["t1"] = forged
        trusting = await TableStore(events, partitions=PARTITIONS).load("t1")
        assert trusting is not None
        assert _state(trusting) != _state(truth)  # what the forgery would have done unchecked
        store = TableStore(events, partitions=PARTITIONS, snapshot_verifier=check)
        loaded = await store.load("t1")
        assert store.snapshots_refused == 1
        assert loaded is not None
        assert _state(loaded) == _state(truth)
