"""Envelope signatures (``eventstore.signing``) and their key files (``eventstore.keyfiles``)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.eventstore import GENESIS, Draft, Envelope, RecordedEvent, seal, verify_chain
from openpoker.eventstore.batchsign import BatchSigner
from openpoker.eventstore.codec import decode, encode
from openpoker.eventstore.envelope import Snapshot
from openpoker.eventstore.keyfiles import (
    ensure_signing_key,
    keyring_path,
    keyring_setting,
    load_keyring,
    load_signer,
    rotate_signing_key,
    signer_setting,
    signing_key_path,
)
from openpoker.eventstore.signing import (
    TABLE_WRITER,
    WALLET_WRITER,
    Keyring,
    PublicKey,
    SignatureReason,
    Signer,
    check_signature,
    check_snapshot,
    first_bad_signature,
    key_id_for,
    raw_public,
)

T0 = dt.datetime(2026, 11, 27, 22, 0, tzinfo=dt.UTC)


def new_signer(writer: str = TABLE_WRITER) -> Signer:
    return Signer.from_key(writer, ed25519.Ed25519PrivateKey.generate())


def published(*signers: Signer) -> Keyring:
    return Keyring(
        keys={
            s.key_id: PublicKey(
                key_id=s.key_id, writer=s.writer, public=raw_public(s.key.public_key()), created=T0
            )
            for s in signers
        }
    )


def draft(version: int, payload: bytes = b'{"n":1}') -> Draft:
    return Draft(
        stream_id="t1",
        version=version,
        command_id=f"c{version}",
        owner_epoch=1,
        rules_version="seeds/1",
        engine_version="e1",
        events=(RecordedEvent(type="ChipsAdded", payload=payload),),
        recorded_at=T0,
    )


def chain(count: int, signer: Signer | None, *, start: int = 1, prev: bytes = GENESIS) -> list[Envelope]:
    out = []
    for version in range(start, start + count):
        out.append(seal(draft(version), prev, signer=signer))
        prev = out[-1].hash
    return out


def test_a_signed_chain_verifies_and_round_trips_through_the_codec() -> None:
    signer = new_signer()
    envs = chain(3, signer)
    assert all(e.key_id == signer.key_id and len(e.signature) == 64 for e in envs)
    assert signer.key_id == key_id_for(TABLE_WRITER, raw_public(signer.key.public_key()))
    assert signer.key_id.startswith("table-")
    assert len(signer.key_id) == len("table-") + 8
    assert [decode(encode(e)) for e in envs] == envs
    assert first_bad_signature(envs, published(signer), writer=TABLE_WRITER) is None
    # The signature is not part of the hash: the chain is the same signed or not.
    assert [e.hash for e in envs] == [e.hash for e in chain(3, None)]


def test_a_changed_byte_breaks_the_signature_even_when_the_hash_is_recomputed() -> None:
    signer = new_signer()
    good = chain(2, signer)
    # The forger edits an event and re-seals with the project's own seal(): the chain is whole...
    forged = seal(draft(2, payload=b'{"n":1000000}'), good[0].hash)
    forged = dataclasses.replace(forged, key_id=good[1].key_id, signature=good[1].signature)
    assert verify_chain([good[0], forged]).ok
    # ...but the copied signature is over the genuine hash.
    problem = first_bad_signature([good[0], forged], published(signer), writer=TABLE_WRITER)
    assert problem is not None
    assert problem.reason is SignatureReason.BAD_SIGNATURE
    assert problem.describe().startswith("bad signature at version 2")


def test_a_chain_resealed_without_the_key_is_unsigned_at_its_first_forged_version() -> None:
    signer = new_signer()
    good = chain(3, signer)
    resealed = good[:1] + chain(2, None, start=2, prev=good[0].hash)
    assert verify_chain(resealed).ok
    problem = first_bad_signature(resealed, published(signer), writer=TABLE_WRITER)
    assert problem is not None
    assert problem.reason is SignatureReason.UNSIGNED
    assert problem.version == 2
    assert problem.describe() == "unsigned envelope at version 2"


def test_another_key_an_unknown_key_and_another_writers_key_are_each_named() -> None:
    genuine, stranger, wallet = new_signer(), new_signer(), new_signer(WALLET_WRITER)
    keyring = published(genuine, wallet)
    # A key that is not in the keyring.
    unknown = check_signature(chain(1, stranger)[0], keyring, writer=TABLE_WRITER)
    assert unknown is not None
    assert unknown.reason is SignatureReason.UNKNOWN_KEY
    assert stranger.key_id in unknown.describe()
    # A stranger's key claiming the genuine key's id: the signature does not verify.
    impostor = Signer(writer=TABLE_WRITER, key_id=genuine.key_id, key=stranger.key)
    wrong = check_signature(chain(1, impostor)[0], keyring, writer=TABLE_WRITER)
    assert wrong is not None
    assert wrong.reason is SignatureReason.BAD_SIGNATURE
    # The wallet's own key on a table envelope: a finding, though the signature is genuine.
    crossed = check_signature(chain(1, wallet)[0], keyring, writer=TABLE_WRITER)
    assert crossed is not None
    assert crossed.reason is SignatureReason.WRONG_WRITER
    assert crossed.signer == WALLET_WRITER
    assert "of writer 'wallet' signed version 1 of a table stream" in crossed.describe()
    assert check_signature(chain(1, wallet)[0], keyring, writer=WALLET_WRITER) is None


def test_a_signature_is_bound_to_its_key_id() -> None:
    signer = new_signer()
    env = chain(1, signer)[0]
    renamed = dataclasses.replace(env, key_id=signer.key_id[:-1] + ("0" if signer.key_id[-1] != "0" else "1"))
    keyring = published(signer).with_key(
        PublicKey(
            key_id=renamed.key_id, writer=TABLE_WRITER, public=raw_public(signer.key.public_key()), created=T0
        )
    )
    found = check_signature(renamed, keyring, writer=TABLE_WRITER)
    assert found is not None
    assert found.reason is SignatureReason.BAD_SIGNATURE


def test_key_files_are_made_once_private_and_published(tmp_path: Path) -> None:
    path = ensure_signing_key(tmp_path, TABLE_WRITER, now=T0)
    assert path == signing_key_path(tmp_path, TABLE_WRITER)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    signer = load_signer(path, TABLE_WRITER)
    assert ensure_signing_key(tmp_path, TABLE_WRITER) == path
    assert load_signer(path, TABLE_WRITER).key_id == signer.key_id  # kept, not remade
    ensure_signing_key(tmp_path, WALLET_WRITER)
    keyring = load_keyring(keyring_path(tmp_path))
    assert {k.writer for k in keyring.keys.values()} == {TABLE_WRITER, WALLET_WRITER}
    assert keyring.keys[signer.key_id].public == raw_public(signer.key.public_key())
    assert "PRIVATE" not in keyring_path(tmp_path).read_text()
    assert first_bad_signature(chain(2, signer), keyring, writer=TABLE_WRITER) is None


def test_a_rotated_key_signs_new_envelopes_and_old_ones_still_verify(tmp_path: Path) -> None:
    old = load_signer(ensure_signing_key(tmp_path, TABLE_WRITER), TABLE_WRITER)
    before = chain(2, old)
    new = rotate_signing_key(tmp_path, TABLE_WRITER)
    assert new.key_id != old.key_id
    assert load_signer(signing_key_path(tmp_path, TABLE_WRITER), TABLE_WRITER).key_id == new.key_id
    after = chain(2, new, start=3, prev=before[-1].hash)
    keyring = load_keyring(keyring_path(tmp_path))
    assert set(keyring.keys) == {old.key_id, new.key_id}
    assert first_bad_signature(before + after, keyring, writer=TABLE_WRITER) is None


def test_a_keyring_entry_cannot_rename_its_writer(tmp_path: Path) -> None:
    ensure_signing_key(tmp_path, WALLET_WRITER)
    path = keyring_path(tmp_path)
    doc = json.loads(path.read_text())
    doc["keys"][0]["writer"] = TABLE_WRITER
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="does not match its writer"):
        load_keyring(path)


def test_the_setting_is_required_over_tls_and_the_key_must_be_private(tmp_path: Path) -> None:
    assert signer_setting("", TABLE_WRITER, required=False) is None
    with pytest.raises(ValueError, match="required over TLS"):
        signer_setting("", TABLE_WRITER, required=True)
    path = ensure_signing_key(tmp_path, TABLE_WRITER)
    signer = signer_setting(str(path), TABLE_WRITER, required=True)
    assert signer is not None
    assert signer.key_id.startswith("table-")
    path.chmod(0o644)
    with pytest.raises(ValueError, match="0600"):
        signer_setting(str(path), TABLE_WRITER, required=True)


def test_a_readers_keyring_file_takes_a_rotated_key_without_a_restart(tmp_path: Path) -> None:
    """``KeyringFile`` (``POKER_SIGNING_KEYS``): read at start, read again when an envelope names
    a key id it does not hold and the file changed; a stranger's key stays unknown."""
    old = load_signer(ensure_signing_key(tmp_path, TABLE_WRITER), TABLE_WRITER)
    held = keyring_setting(str(keyring_path(tmp_path)), required=True)
    assert held is not None
    verify = held.verifier(TABLE_WRITER)
    before = chain(2, old)
    assert [verify(e) for e in before] == [None, None]
    stranger = chain(1, new_signer(), start=3, prev=before[-1].hash)[0]
    assert verify(stranger) == f"unknown signing key {stranger.key_id!r} at version 3"
    new = rotate_signing_key(tmp_path, TABLE_WRITER)
    after = chain(1, new, start=3, prev=before[-1].hash)[0]
    assert verify(after) is None  # the file changed: read again
    assert set(held.keyring.keys) == {old.key_id, new.key_id}
    assert verify(stranger) == f"unknown signing key {stranger.key_id!r} at version 3"
    assert verify(chain(1, None)[0]) == "unsigned envelope at version 1"
    assert held.verifier(WALLET_WRITER)(after) is not None  # another writer's log: refused
    # A key the file loses stays held by a running reader (it verified envelopes with it).
    keyring_path(tmp_path).write_text(json.dumps({"keys": []}))
    assert verify(before[0]) is None


def test_the_keyring_setting_is_required_over_tls(tmp_path: Path) -> None:
    assert keyring_setting("", required=False) is None
    with pytest.raises(ValueError, match="required over TLS"):
        keyring_setting("", required=True)
    with pytest.raises(ValueError, match="unreadable signing keyring"):
        keyring_setting(str(tmp_path / "none.json"), required=False)


def _tables(count: int) -> list[Envelope]:
    """One sealed, unsigned envelope for each of ``count`` tables, as concurrent tables seal them."""
    return [
        seal(dataclasses.replace(draft(1), stream_id=f"t{n}", command_id=f"c{n}"), GENESIS)
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [2, 3, 5, 8, 13])
def test_a_batch_signature_verifies_each_envelope_alone(count: int) -> None:
    signer = new_signer()
    signed = signer.sign_all(_tables(count))
    assert len({e.signature for e in signed}) == 1  # one signature for the batch
    assert [e.batch_index for e in signed] == list(range(count))
    assert {e.batch_size for e in signed} == {count}
    keyring = published(signer)
    for e in signed:
        assert check_signature(decode(encode(e)), keyring, writer=TABLE_WRITER) is None
    # One envelope alone is signed as before: over its hash, no proof.
    (alone,) = signer.sign_all(_tables(1))
    assert (alone.batch_size, alone.batch_proof) == (0, ())
    assert alone.signature == signer.sign(_tables(1)[0]).signature


def test_a_batch_signature_proves_nothing_it_did_not_sign() -> None:
    signer = new_signer()
    keyring = published(signer)
    signed = signer.sign_all(_tables(5))
    e = signed[3]
    forged_hash = seal(
        dataclasses.replace(draft(1, payload=b'{"n":9}'), stream_id="t3", command_id="c3"), GENESIS
    )
    tampered = [
        dataclasses.replace(e, hash=forged_hash.hash),  # another envelope under the batch's proof
        dataclasses.replace(e, batch_index=2),
        dataclasses.replace(e, batch_size=6),  # the size is signed
        dataclasses.replace(e, batch_size=1),
        dataclasses.replace(e, batch_proof=e.batch_proof[:-1]),
        dataclasses.replace(e, batch_proof=(*e.batch_proof[:-1], bytes(32))),
        dataclasses.replace(e, batch_size=0, batch_index=0, batch_proof=()),  # passed off as signed alone
        dataclasses.replace(e, batch_index=7),
    ]
    for bad in tampered:
        problem = check_signature(bad, keyring, writer=TABLE_WRITER)
        assert problem is not None, bad
        assert problem.reason is SignatureReason.BAD_SIGNATURE, bad
        assert problem.describe() == f"bad signature at version 1 (key {signer.key_id!r})"


def test_a_verified_batch_signature_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    signer = new_signer()
    keyring = published(signer)
    signed = signer.sign_all(_tables(4))
    verifies: list[bytes] = []
    real = ed25519.Ed25519PublicKey.from_public_bytes

    class Counting:
        def __init__(self, public: ed25519.Ed25519PublicKey) -> None:
            self.public = public

        def verify(self, signature: bytes, message: bytes) -> None:
            verifies.append(message)
            self.public.verify(signature, message)

    monkeypatch.setattr(ed25519.Ed25519PublicKey, "from_public_bytes", lambda raw: Counting(real(raw)))
    verified: dict[tuple[str, bytes, bytes], None] = {}
    for e in signed:
        assert check_signature(e, keyring, writer=TABLE_WRITER, verified=verified) is None
    assert len(verifies) == 1  # four envelopes, one Ed25519 verification
    assert len(verified) == 1
    # The cache holds what verified, not a key: a wrong writer or a changed hash still fails.
    assert check_signature(signed[0], keyring, writer=WALLET_WRITER, verified=verified) is not None
    other = dataclasses.replace(signed[1], hash=signed[2].hash)
    assert check_signature(other, keyring, writer=TABLE_WRITER, verified=verified) is not None


async def test_the_batch_signer_signs_what_is_sealed_in_one_pass_with_one_signature() -> None:
    signer = new_signer()
    batch = BatchSigner(signer)
    envs = _tables(6)
    signed = await asyncio.gather(*(batch.sign(e) for e in envs))
    assert (batch.signatures, batch.envelopes) == (1, 6)
    assert [e.hash for e in signed] == [e.hash for e in envs]
    assert all(check_signature(e, published(signer), writer=TABLE_WRITER) is None for e in signed)
    # Sealed one after another (each awaited): each is signed alone, nothing waits for company.
    for e in _tables(2):
        alone = await batch.sign(e)
        assert alone.batch_size == 0
    assert (batch.signatures, batch.envelopes) == (3, 8)


async def test_the_batch_signer_splits_a_large_queue_and_survives_a_cancelled_waiter() -> None:
    signer = new_signer()
    batch = BatchSigner(signer, max_batch=4)
    envs = _tables(10)
    tasks = [asyncio.ensure_future(batch.sign(e)) for e in envs]
    await asyncio.sleep(0)  # every task queues its envelope
    tasks[5].cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(done[5], asyncio.CancelledError)
    assert (batch.signatures, batch.envelopes) == (3, 10)
    assert {e.batch_size for e in done if isinstance(e, Envelope)} == {4, 2}


def test_a_snapshot_signature_covers_every_field() -> None:
    signer = new_signer()
    keyring = published(signer)
    snap = signer.sign_snapshot(
        Snapshot(stream_id="t1", version=40, last_sequence=99, engine_version="e1", state=b'{"stack":100}')
    )
    assert check_snapshot(snap, keyring, writer=TABLE_WRITER) is None
    for changed in (
        dataclasses.replace(snap, state=b'{"stack":900}'),
        dataclasses.replace(snap, version=41),
        dataclasses.replace(snap, last_sequence=98),
        dataclasses.replace(snap, stream_id="t2"),
        dataclasses.replace(snap, engine_version="e2"),
    ):
        problem = check_snapshot(changed, keyring, writer=TABLE_WRITER)
        assert problem is not None
        assert problem.reason is SignatureReason.BAD_SIGNATURE
    unsigned = dataclasses.replace(snap, key_id="", signature=b"")
    assert check_snapshot(unsigned, keyring, writer=TABLE_WRITER).reason is SignatureReason.UNSIGNED  # type: ignore[union-attr]
    wallet_key = new_signer(WALLET_WRITER)
    by_wallet = wallet_key.sign_snapshot(snap)
    crossed = check_snapshot(by_wallet, published(signer, wallet_key), writer=TABLE_WRITER)
    assert crossed is not None
    assert crossed.reason is SignatureReason.WRONG_WRITER
