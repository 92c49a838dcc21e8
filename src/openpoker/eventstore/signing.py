"""Envelope signatures: who wrote an envelope, on top of the hash chain's order.

The hash chain proves order and integrity, not authorship: anyone who can publish on a subject
can ``seal`` a forged envelope onto it with the right hashes. So each writer (the table service,
the wallet) signs every envelope it seals with its own Ed25519 key, and the dispute tools verify
each signature against the published public keys (a ``Keyring``).

* The signed message is ``TAG || len(key_id) || key_id || hash`` (length as 4-byte big-endian):
  the envelope's hash already covers every other field, the tag keeps the signature from being
  valid for anything but an envelope, and the key id is bound so a signature cannot be moved to
  another key's name.
* A key id says which writer and which key: ``<writer>-<first 8 hex of SHA-256(public key)>``
  (``key_id_for``). A new key (rotation) is a new id; old public keys stay in the keyring so
  envelopes they signed still verify.
* A writer may sign several envelopes at once (``Signer.sign_all``, ``eventstore.batchsign``):
  the signed message is then ``BATCH_TAG || len(key_id) || key_id || size || root``, the root
  being the RFC 9162 Merkle tree hash of the batch's envelope hashes (``eventstore.merkle``), and
  each envelope carries its index, the size and its inclusion proof, so it verifies alone. One
  signature then costs the writer what one envelope did, whatever the batch's size.
* The keyring records each key's writer: a key of one writer signing another writer's stream
  (a wallet key on a table envelope) is a finding, as is a key id the keyring does not hold, an
  unsigned envelope and a signature that does not verify.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import struct
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.eventstore import merkle
from openpoker.eventstore.envelope import Envelope, Snapshot

TAG = b"openpoker/envelope/v1"
BATCH_TAG = b"openpoker/envelope-batch/v1"
SNAPSHOT_TAG = b"openpoker/snapshot/v1"
TABLE_WRITER = "table"  # signs every table log (TABLE_EVENTS)
WALLET_WRITER = "wallet"  # signs the ledger (WALLET_EVENTS)
_LEN = struct.Struct(">I").pack
_U64 = struct.Struct(">Q").pack
KEY_ID_HEX = 8


def signing_message(key_id: str, envelope_hash: bytes) -> bytes:
    raw = key_id.encode()
    return b"".join((TAG, _LEN(len(raw)), raw, envelope_hash))


def batch_message(key_id: str, size: int, root: bytes) -> bytes:
    raw = key_id.encode()
    return b"".join((BATCH_TAG, _LEN(len(raw)), raw, _LEN(size), root))


def snapshot_message(key_id: str, snapshot: Snapshot) -> bytes:
    """What a snapshot's signature signs: its stream, position, engine version and state."""
    parts = [SNAPSHOT_TAG]
    for text in (key_id, snapshot.stream_id, snapshot.engine_version):
        raw = text.encode()
        parts += (_LEN(len(raw)), raw)
    parts += (_U64(snapshot.version), _U64(snapshot.last_sequence), hashlib.sha256(snapshot.state).digest())
    return b"".join(parts)


def signed_message(envelope: Envelope) -> bytes:
    """What ``envelope``'s signature signs: its hash, or its batch's root as its inclusion
    proof gives it (``merkle.InvalidProof`` when the proof cannot be one)."""
    if envelope.batch_size == 0 and not envelope.batch_proof and envelope.batch_index == 0:
        return signing_message(envelope.key_id, envelope.hash)
    if envelope.batch_size < 2:
        raise merkle.InvalidProof(f"a batch of {envelope.batch_size}")
    root = merkle.root_from_proof(
        envelope.hash, index=envelope.batch_index, size=envelope.batch_size, proof=envelope.batch_proof
    )
    return batch_message(envelope.key_id, envelope.batch_size, root)


def raw_public(key: ed25519.Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_for(writer: str, public: bytes) -> str:
    return f"{writer}-{hashlib.sha256(public).hexdigest()[:KEY_ID_HEX]}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Signer:
    """A writer's private key and its key id; given to that writer's service only."""

    writer: str
    key_id: str
    key: ed25519.Ed25519PrivateKey = dataclasses.field(repr=False, compare=False)

    @classmethod
    def from_key(cls, writer: str, key: ed25519.Ed25519PrivateKey) -> Signer:
        return cls(writer=writer, key_id=key_id_for(writer, raw_public(key.public_key())), key=key)

    def signature(self, envelope_hash: bytes) -> bytes:
        return self.key.sign(signing_message(self.key_id, envelope_hash))

    def sign(self, envelope: Envelope) -> Envelope:
        """``envelope`` with this key's id and signature (``chain.seal`` signs as it seals)."""
        return dataclasses.replace(envelope, key_id=self.key_id, signature=self.signature(envelope.hash))

    def sign_snapshot(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with this key's id and signature (snapshots are a cache, but one the
        service loads its tables from: a forged one must not be taken)."""
        return dataclasses.replace(
            snapshot, key_id=self.key_id, signature=self.key.sign(snapshot_message(self.key_id, snapshot))
        )

    def sign_all(self, envelopes: Sequence[Envelope]) -> tuple[Envelope, ...]:
        """Every envelope signed with one signature: over the Merkle root of their hashes, each
        with its inclusion proof (one envelope alone is signed as ``sign`` signs it)."""
        if len(envelopes) == 1:
            return (self.sign(envelopes[0]),)
        root, paths = merkle.proofs([e.hash for e in envelopes])
        size = len(envelopes)
        signature = self.key.sign(batch_message(self.key_id, size, root))
        return tuple(
            dataclasses.replace(
                e, key_id=self.key_id, signature=signature, batch_index=i, batch_size=size, batch_proof=path
            )
            for i, (e, path) in enumerate(zip(envelopes, paths, strict=True))
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PublicKey:
    """One published key: whose it is, its raw Ed25519 public key, when it was made."""

    key_id: str
    writer: str
    public: bytes
    created: dt.datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Keyring:
    """The published public keys by key id (every key ever used: old ones stay)."""

    keys: Mapping[str, PublicKey]

    def with_key(self, key: PublicKey) -> Keyring:
        return Keyring(keys={**self.keys, key.key_id: key})


class SignatureReason(StrEnum):
    """Why an envelope's signature does not prove its writer. Reported: never rename."""

    UNSIGNED = "UNSIGNED"
    UNKNOWN_KEY = "UNKNOWN_KEY"
    WRONG_WRITER = "WRONG_WRITER"
    BAD_SIGNATURE = "BAD_SIGNATURE"


@dataclass(frozen=True, slots=True, kw_only=True)
class SignatureProblem:
    reason: SignatureReason
    stream_id: str
    version: int
    key_id: str
    writer: str  # the writer the stream belongs to
    signer: str = ""  # the writer the keyring names for key_id (WRONG_WRITER)

    def describe(self) -> str:
        v = self.version
        match self.reason:
            case SignatureReason.UNSIGNED:
                return f"unsigned envelope at version {v}"
            case SignatureReason.UNKNOWN_KEY:
                return f"unknown signing key {self.key_id!r} at version {v}"
            case SignatureReason.WRONG_WRITER:
                return (
                    f"key {self.key_id!r} of writer {self.signer!r} signed version {v}"
                    f" of a {self.writer} stream"
                )
            case SignatureReason.BAD_SIGNATURE:
                return f"bad signature at version {v} (key {self.key_id!r})"


def check_signature(
    envelope: Envelope,
    keyring: Keyring,
    *,
    writer: str,
    verified: MutableMapping[tuple[str, bytes, bytes], None] | None = None,
) -> SignatureProblem | None:
    """None when ``envelope`` is signed by a key of ``writer`` in ``keyring`` over its hash
    (alone, or in a batch through its inclusion proof). ``verified``: signatures already checked,
    by key id, signed message and signature; a batch's signature is then checked once, and each
    signature that verifies is added (the caller bounds its size)."""
    return _check(
        envelope.key_id,
        envelope.signature,
        lambda: signed_message(envelope),
        keyring,
        writer=writer,
        stream_id=envelope.stream_id,
        version=envelope.version,
        verified=verified,
    )


def check_snapshot(snapshot: Snapshot, keyring: Keyring, *, writer: str) -> SignatureProblem | None:
    """None when ``snapshot`` is signed by a key of ``writer`` in ``keyring``."""
    return _check(
        snapshot.key_id,
        snapshot.signature,
        lambda: snapshot_message(snapshot.key_id, snapshot),
        keyring,
        writer=writer,
        stream_id=snapshot.stream_id,
        version=snapshot.version,
        verified=None,
    )


def _check(
    key_id: str,
    signature: bytes,
    message_of: Callable[[], bytes],
    keyring: Keyring,
    *,
    writer: str,
    stream_id: str,
    version: int,
    verified: MutableMapping[tuple[str, bytes, bytes], None] | None,
) -> SignatureProblem | None:
    def problem(reason: SignatureReason, signer: str = "") -> SignatureProblem:
        return SignatureProblem(
            reason=reason, stream_id=stream_id, version=version, key_id=key_id, writer=writer, signer=signer
        )

    if not key_id and not signature:
        return problem(SignatureReason.UNSIGNED)
    known = keyring.keys.get(key_id)
    if known is None:
        return problem(SignatureReason.UNKNOWN_KEY)
    if known.writer != writer:
        return problem(SignatureReason.WRONG_WRITER, known.writer)
    try:
        message = message_of()
        seen = (key_id, message, signature)
        if verified is not None and seen in verified:
            return None
        public = ed25519.Ed25519PublicKey.from_public_bytes(known.public)
        public.verify(signature, message)
    except (InvalidSignature, ValueError):  # merkle.InvalidProof is a ValueError
        return problem(SignatureReason.BAD_SIGNATURE)
    if verified is not None:
        verified[seen] = None
    return None


def first_bad_signature(
    envelopes: Iterable[Envelope], keyring: Keyring, *, writer: str
) -> SignatureProblem | None:
    """The first envelope, in order, whose signature is not ``writer``'s (None: all are)."""
    for envelope in envelopes:
        found = check_signature(envelope, keyring, writer=writer)
        if found is not None:
            return found
    return None
