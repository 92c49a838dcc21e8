"""From a byte stream to an unbiased index, and from indices to a permutation.

``map_word`` is the only place a raw word is reduced to a range. It rejects every word at or
above the largest multiple of ``m`` that fits in the word, so each residue keeps exactly
``2**bits // m`` pre-images: zero bias by construction, which the exhaustive test at 8 and
16 bits proves for every ``m`` a deck needs (statistics alone could never see a 32-bit modulo
bias of about 1 part in 82 million). A bare ``u % m`` or ``floor(r * m)`` is never used.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Final

from openpoker.shuffle.drbg import HmacDrbg
from openpoker.shuffle.errors import BadRange

WORD_BITS: Final = 32
CHUNK_BYTES: Final = 64  # each Generate call returns 64 bytes = 16 big-endian words (part of v1)
_WORDS = struct.Struct(">16I")


def map_word(u: int, m: int, bits: int = WORD_BITS) -> int | None:
    """``u % m`` if ``u`` is below the rejection limit ``(2**bits // m) * m``, else ``None``."""
    if not 1 <= m <= 1 << bits:
        raise BadRange(bound=m, bits=bits)
    limit = ((1 << bits) // m) * m
    if u < limit:
        return u % m
    return None


def uniform_below(next_word: Callable[[], int], m: int, bits: int = WORD_BITS) -> int:
    """An integer uniform on ``0..m-1``, drawing words until one is accepted by ``map_word``."""
    while True:
        j = map_word(next_word(), m, bits)
        if j is not None:
            return j


class WordStream:
    """Consecutive big-endian 32-bit words of a DRBG, generated 64 bytes at a time."""

    __slots__ = ("_drbg", "_pos", "_words")

    def __init__(self, drbg: HmacDrbg) -> None:
        self._drbg = drbg
        self._words: tuple[int, ...] = ()
        self._pos = 0

    def next_word(self) -> int:
        if self._pos == len(self._words):
            self._words = _WORDS.unpack(self._drbg.generate(CHUNK_BYTES))
            self._pos = 0
        word = self._words[self._pos]
        self._pos += 1
        return word

    def below(self, m: int) -> int:
        """``uniform_below(self.next_word, m)`` with the word buffer read in place (this runs
        once per card of every deck): the same words in the same order, each reduced by
        ``map_word`` alone. ``tests/shuffle/test_sampling.py`` checks the two agree word for word."""
        while True:
            if self._pos == len(self._words):
                self._words = _WORDS.unpack(self._drbg.generate(CHUNK_BYTES))
                self._pos = 0
            word = self._words[self._pos]
            self._pos += 1
            j = map_word(word, m)
            if j is not None:
                return j


def fisher_yates(n: int, below: Callable[[int], int]) -> list[int]:
    """Durstenfeld's Fisher-Yates, top down: for i = n-1..1 swap a[i] with a[below(i+1)].

    Returns the permutation of ``0..n-1``; ``result[0]`` is the top of the deck. ``below(k)``
    must return an integer uniform on ``0..k-1``; tests inject an enumerating source to prove
    the map from index sequences to permutations is a bijection.
    """
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order
