"""Seeds at rest: AES-256-GCM under a key from configuration.

A sealed seed is ``key_id`` (stored beside it) + ``nonce (12 bytes) || ciphertext || tag``.
The associated data binds the ciphertext to its record (algorithm version, table, hand and
commitment), so a sealed seed copied onto another hand's record fails to open instead of
revealing a deck for the wrong hand.

KMS: this key plays the role of a data-encryption key. With a KMS, each record (or each day)
gets a fresh data key from the KMS (``GenerateDataKey``), the wrapped data key is stored next to
the sealed seed in place of ``key_id``, and opening asks the KMS to unwrap it (access logged by
the KMS). The seal/open functions stay the same; only where the 32-byte key comes from changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from openpoker.services.rng.errors import SeedUnsealable

NONCE_BYTES = 12
KEY_BYTES = 32


def associated_data(*, version: str, table_id: str, hand_id: str, commitment: str) -> bytes:
    # Length-prefixed so no two field tuples share an encoding.
    parts = (version, table_id, hand_id, commitment)
    return b"".join(len(p.encode()).to_bytes(4, "big") + p.encode() for p in parts)


@dataclass(frozen=True, slots=True)
class SeedSealer:
    key: bytes = field(repr=False)
    key_id: str
    # The cipher under ``key``, made once (its key schedule) rather than per seal and open.
    _aead: AESGCM = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.key) != KEY_BYTES:
            raise ValueError("AES-256-GCM needs a 32-byte key")
        object.__setattr__(self, "_aead", AESGCM(self.key))

    def seal(self, seed: bytes, aad: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)  # random 96-bit nonces: fine far below 2^32 seals per key
        return nonce + self._aead.encrypt(nonce, seed, aad)

    def open(self, sealed: bytes, aad: bytes, *, hand_id: str) -> bytes:
        try:
            return self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], aad)
        except (InvalidTag, ValueError):
            raise SeedUnsealable(hand_id=hand_id, key_id=self.key_id) from None
