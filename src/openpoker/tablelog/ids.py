"""Deterministic names for everything the dealer creates, so a retry or a restart asks again
for exactly the same thing (AIP-155 idempotency; the wallet keys hand steps the same way).

* Hand ``n`` of a table (``n`` = 1 + the hands scheduled there before, voided ones included)
  is ``{table_id}-{n}``, or ``h{digest}-{n}`` when that would not fit the 63-character id
  pattern. Table ids are unique forever, so hand ids are too (rng uses the hand id as the DRBG
  nonce and refuses a reused one).
* Request ids are UUIDv5 of ``dealer/{table}/{n}/{step}``: the same step of the same hand
  always sends the same request id, whichever dealer process sends it.
"""

from __future__ import annotations

import hashlib
import uuid

MAX_ID = 63
MAX_HAND_ID = 128  # a hand id the table service takes (its HAND_ID_RE)
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://openpoker.invalid/dealer")
_NAMESPACE_BYTES = _NAMESPACE.bytes


def hand_id(table_id: str, hand_number: int) -> str:
    plain = f"{table_id}-{hand_number}"
    if len(plain) <= MAX_ID:
        return plain
    digest = hashlib.sha256(table_id.encode()).hexdigest()[:24]
    return f"h{digest}-{hand_number}"


def request_id(table_id: str, hand_number: int, step: str) -> str:
    """``str(uuid.uuid5(_NAMESPACE, "dealer/{table}/{n}/{step}"))``, spelt out: ``uuid.UUID``'s
    pure-Python constructor and formatting cost more than the hash (several ids per hand)."""
    digest = bytearray(
        hashlib.sha1(
            _NAMESPACE_BYTES + f"dealer/{table_id}/{hand_number}/{step}".encode(), usedforsecurity=False
        ).digest()
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest[:16].hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def table_name(table_id: str) -> str:
    return f"tables/{table_id}"


def hand_name(table_id: str, hand: str) -> str:
    return f"tables/{table_id}/hands/{hand}"


def parse_table_name(name: str) -> str | None:
    parts = name.split("/")
    if len(parts) == 2 and parts[0] == "tables" and 0 < len(parts[1]) <= MAX_ID:
        return parts[1]
    return None


def parse_hand_name(name: str) -> tuple[str, str] | None:
    parts = name.split("/")
    if (
        len(parts) == 4
        and parts[0] == "tables"
        and parts[2] == "hands"
        and 0 < len(parts[1]) <= MAX_ID
        and 0 < len(parts[3]) <= MAX_HAND_ID
    ):
        return parts[1], parts[3]
    return None
