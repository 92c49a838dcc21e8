"""Decks in transit: sealed by rng for one table's hand, opened only by the table service.

The dealer carries the deck from rng to the table but must never read it, so rng seals it with
ChaCha20-Poly1305 under a key that rng and the table service hold and the dealer does not. The
associated data binds the ciphertext to its table, hand and commitment: a deck relayed to
another hand, or under another commitment, fails to open exactly like a tampered one.

Wire form: ``b"D1" || len(key_id) (1 byte) || key_id || nonce (12) || ciphertext || tag (16)``;
the plaintext is the card codes concatenated in ASCII, top first ("AsTd...").
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from openpoker.shuffle.errors import ShuffleError

MAGIC = b"D1"
NONCE_BYTES = 12
KEY_BYTES = 32
TAG_BYTES = 16
MAX_KEY_ID_BYTES = 64


class SealedDeckInvalid(ShuffleError):
    """A sealed deck that does not open: tampered, sealed under another key, or bound to another
    table, hand or commitment. Says nothing of its content."""

    reason = "SEALED_DECK_INVALID"
    kind = "invalid"

    def __init__(self, *, problem: str) -> None:
        super().__init__("the sealed deck does not open for this hand", problem=problem)


def associated_data(*, table_id: str, hand_id: str, commitment: str) -> bytes:
    # Length-prefixed so no two field tuples share an encoding.
    parts = ("openpoker-deck-v1", table_id, hand_id, commitment)
    return b"".join(len(p.encode()).to_bytes(4, "big") + p.encode() for p in parts)


@dataclass(frozen=True, slots=True)
class DeckKeys:
    """The deck-sealing keys by id: ``current`` seals; every key listed opens (rotation)."""

    keys: Mapping[str, bytes] = field(repr=False)
    current: str

    def __post_init__(self) -> None:
        if self.current not in self.keys:
            raise ValueError("the current deck key id has no key")
        for key_id, key in self.keys.items():
            if len(key) != KEY_BYTES:
                raise ValueError(f"deck key {key_id!r} must be {KEY_BYTES} bytes")
            if not key_id or len(key_id.encode()) > MAX_KEY_ID_BYTES:
                raise ValueError("a deck key id must be 1-64 bytes")


def load_deck_keys(path: Path) -> DeckKeys:
    """The key file (``{"current": id, "keys": {id: hex}}``), which must be private (0600)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ValueError(f"{path} is mode {mode:o}; deck keys must be 0600")
    doc = json.loads(path.read_text())
    return DeckKeys(keys={k: bytes.fromhex(v) for k, v in doc["keys"].items()}, current=str(doc["current"]))


def deck_keys_setting(path: str, *, required: bool) -> DeckKeys | None:
    """``POKER_DECK_KEYS`` as rng and the table service read it: the key file, or None where no
    file is named and none is required (a plaintext test rig). ``ValueError`` names the problem."""
    if not path:
        if required:
            raise ValueError("required over TLS: the key file that seals decks between rng and the table")
        return None
    try:
        return load_deck_keys(Path(path))
    except (OSError, KeyError, TypeError) as exc:
        raise ValueError(f"unreadable deck key file: {type(exc).__name__}") from None


def ensure_deck_keys(path: Path) -> DeckKeys:
    """Make a key file with one fresh key the first time; load it after."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        key_id = os.urandom(4).hex()
        doc = {"current": key_id, "keys": {key_id: os.urandom(KEY_BYTES).hex()}}
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(doc, out)
    return load_deck_keys(path)


def seal_deck(keys: DeckKeys, cards: str, *, table_id: str, hand_id: str, commitment: str) -> bytes:
    """rng: the deck (card codes concatenated, top first) sealed for this table's hand."""
    key_id = keys.current.encode()
    nonce = os.urandom(NONCE_BYTES)
    aad = associated_data(table_id=table_id, hand_id=hand_id, commitment=commitment)
    sealed = ChaCha20Poly1305(keys.keys[keys.current]).encrypt(nonce, cards.encode("ascii"), aad)
    return MAGIC + bytes([len(key_id)]) + key_id + nonce + sealed


def open_deck(keys: DeckKeys, sealed: bytes, *, table_id: str, hand_id: str, commitment: str) -> str:
    """table: the card codes of a sealed deck, or ``SealedDeckInvalid``. The caller still checks
    that they are exactly the game's deck."""
    if not sealed.startswith(MAGIC) or len(sealed) < len(MAGIC) + 1:
        raise SealedDeckInvalid(problem="not a sealed deck")
    at = len(MAGIC)
    id_len = sealed[at]
    key_id = sealed[at + 1 : at + 1 + id_len]
    body = sealed[at + 1 + id_len :]
    if len(key_id) != id_len or len(body) < NONCE_BYTES + TAG_BYTES:
        raise SealedDeckInvalid(problem="truncated")
    key = keys.keys.get(key_id.decode("utf-8", "replace"))
    if key is None:
        raise SealedDeckInvalid(problem="unknown key id")
    aad = associated_data(table_id=table_id, hand_id=hand_id, commitment=commitment)
    try:
        plain = ChaCha20Poly1305(key).decrypt(body[:NONCE_BYTES], body[NONCE_BYTES:], aad)
    except InvalidTag:
        raise SealedDeckInvalid(problem="does not authenticate") from None
    try:
        return plain.decode("ascii")
    except UnicodeDecodeError:
        raise SealedDeckInvalid(problem="not card codes") from None
