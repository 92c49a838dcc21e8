"""HMAC_DRBG with SHA-256, written from NIST SP 800-90A Rev. 1, section 10.1.2.

Only what a per-hand shuffle needs, with no prediction resistance (the seed is fresh from the
OS for every hand): Instantiate (10.1.2.3), Reseed (10.1.2.4) and Generate (10.1.2.5) around the
HMAC_DRBG_Update function (10.1.2.2). The state is (Key, V, reseed_counter). Checked against
the NIST CAVP known-answer vectors in ``tests/shuffle/test_drbg.py``.

The object is mutable by nature (a generator consumes its state); everything around it in
``shuffle`` is pure.
"""

from __future__ import annotations

import hmac
from typing import Final

from openpoker.shuffle.errors import DrbgError

OUTLEN: Final = 32  # SHA-256 output, bytes
SECURITY_STRENGTH_BYTES: Final = 32  # highest strength of HMAC_DRBG(SHA-256): 256 bits
MAX_BYTES_PER_REQUEST: Final = 2**19 // 8  # max_number_of_bits_per_request (Table 2)
RESEED_INTERVAL: Final = 2**48  # reseed_interval (Table 2)


def _hmac(key: bytes, data: bytes) -> bytes:
    # The digest by name: OpenSSL's one-shot HMAC directly (a constructor costs a lookup per call).
    return hmac.digest(key, data, "sha256")


class HmacDrbg:
    """HMAC_DRBG(SHA-256) instance; construct it with :meth:`instantiate`."""

    __slots__ = ("_key", "_reseed_counter", "_v")

    def __init__(self, *, key: bytes, v: bytes, reseed_counter: int) -> None:
        self._key = key
        self._v = v
        self._reseed_counter = reseed_counter

    @classmethod
    def instantiate(cls, entropy_input: bytes, nonce: bytes, personalization: bytes = b"") -> HmacDrbg:
        """Instantiate (10.1.2.3): Key = 0x00.., V = 0x01.., Update(entropy || nonce || pers)."""
        if len(entropy_input) < SECURITY_STRENGTH_BYTES:
            # Refuse rather than run at a lower strength than the one claimed.
            raise DrbgError(problem=f"entropy input of {len(entropy_input)} bytes is below 256 bits")
        drbg = cls(key=b"\x00" * OUTLEN, v=b"\x01" * OUTLEN, reseed_counter=1)
        drbg._update(entropy_input + nonce + personalization)
        return drbg

    @property
    def reseed_counter(self) -> int:
        return self._reseed_counter

    def state(self) -> tuple[bytes, bytes]:
        """(Key, V), for known-answer tests of the intermediate values only."""
        return self._key, self._v

    def _update(self, provided_data: bytes) -> None:
        """HMAC_DRBG_Update (10.1.2.2)."""
        self._key = _hmac(self._key, self._v + b"\x00" + provided_data)
        self._v = _hmac(self._key, self._v)
        if not provided_data:
            return
        self._key = _hmac(self._key, self._v + b"\x01" + provided_data)
        self._v = _hmac(self._key, self._v)

    def reseed(self, entropy_input: bytes, additional_input: bytes = b"") -> None:
        """Reseed (10.1.2.4): Update(entropy || additional), counter back to 1."""
        if len(entropy_input) < SECURITY_STRENGTH_BYTES:
            raise DrbgError(problem=f"reseed entropy of {len(entropy_input)} bytes is below 256 bits")
        self._update(entropy_input + additional_input)
        self._reseed_counter = 1

    def generate(self, n: int, additional_input: bytes = b"") -> bytes:
        """Generate (10.1.2.5) ``n`` bytes."""
        if not 0 <= n <= MAX_BYTES_PER_REQUEST:
            raise DrbgError(problem=f"request of {n} bytes outside 0..{MAX_BYTES_PER_REQUEST}")
        if self._reseed_counter > RESEED_INTERVAL:
            raise DrbgError(problem="reseed required")
        if additional_input:
            self._update(additional_input)
        out = bytearray()
        key, v = self._key, self._v
        while len(out) < n:
            v = _hmac(key, v)
            out += v
        self._v = v
        self._update(additional_input)
        self._reseed_counter += 1
        return bytes(out[:n])
