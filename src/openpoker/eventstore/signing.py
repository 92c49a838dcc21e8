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
* The keyring records each key's writer: a key of one writer signing another writer's stream
  (a wallet key on a table envelope) is a finding, as is a key id the keyring does not hold, an
  unsigned envelope and a signature that does not verify.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.eventstore.envelope import Envelope

TAG = b"openpoker/envelope/v1"
TABLE_WRITER = "table"  # signs every table log (TABLE_EVENTS)
WALLET_WRITER = "wallet"  # signs the ledger (WALLET_EVENTS)
_LEN = struct.Struct(">I").pack
KEY_ID_HEX = 8


def signing_message(key_id: str, envelope_hash: bytes) -> bytes:
    raw = key_id.encode()
    return b"".join((TAG, _LEN(len(raw)), raw, envelope_hash))


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


def check_signature(envelope: Envelope, keyring: Keyring, *, writer: str) -> SignatureProblem | None:
    """None when ``envelope`` is signed by a key of ``writer`` in ``keyring`` over its hash."""

    def problem(reason: SignatureReason, signer: str = "") -> SignatureProblem:
        return SignatureProblem(
            reason=reason,
            stream_id=envelope.stream_id,
            version=envelope.version,
            key_id=envelope.key_id,
            writer=writer,
            signer=signer,
        )

    if not envelope.key_id and not envelope.signature:
        return problem(SignatureReason.UNSIGNED)
    known = keyring.keys.get(envelope.key_id)
    if known is None:
        return problem(SignatureReason.UNKNOWN_KEY)
    if known.writer != writer:
        return problem(SignatureReason.WRONG_WRITER, known.writer)
    try:
        public = ed25519.Ed25519PublicKey.from_public_bytes(known.public)
        public.verify(envelope.signature, signing_message(envelope.key_id, envelope.hash))
    except (InvalidSignature, ValueError):
        return problem(SignatureReason.BAD_SIGNATURE)
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
