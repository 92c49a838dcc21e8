"""Certified-style shuffle derivation: pure functions an auditor can re-run.

Per hand: a 256-bit seed (drawn by the rng service from the OS CSPRNG), a commitment
``SHA-256("commit/v1" || seed || hand_id)``, HMAC_DRBG(SHA-256) per NIST SP 800-90A with the
hand id as nonce and a versioned personalization, unbiased rejection sampling of 32-bit
big-endian words and a top-down Fisher-Yates over the canonical deck of ``engine.cards``.
No I/O, no clock, and never Python's ``random`` module: seeds arrive as arguments.
"""

from openpoker.shuffle.derivation import (
    CURRENT_VERSION,
    SEED_BYTES,
    V1,
    canonical_deck,
    commitment,
    derive_deck,
    derive_order,
    open_drbg,
    raw_chunks,
)
from openpoker.shuffle.drbg import HmacDrbg
from openpoker.shuffle.errors import (
    BadDeckSize,
    BadHandId,
    BadRange,
    BadSeed,
    DrbgError,
    ShuffleError,
    UnknownVersion,
)
from openpoker.shuffle.record import (
    Check,
    DealtCard,
    ShuffleRecord,
    Verification,
    dealt_from_top,
    verify_record,
)
from openpoker.shuffle.sampling import WordStream, fisher_yates, map_word, uniform_below

__all__ = [
    "CURRENT_VERSION",
    "SEED_BYTES",
    "V1",
    "BadDeckSize",
    "BadHandId",
    "BadRange",
    "BadSeed",
    "Check",
    "DealtCard",
    "DrbgError",
    "HmacDrbg",
    "ShuffleError",
    "ShuffleRecord",
    "UnknownVersion",
    "Verification",
    "WordStream",
    "canonical_deck",
    "commitment",
    "dealt_from_top",
    "derive_deck",
    "derive_order",
    "fisher_yates",
    "map_word",
    "open_drbg",
    "raw_chunks",
    "uniform_below",
    "verify_record",
]
