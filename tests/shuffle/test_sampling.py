"""Exact (non-statistical) checks of the index mapping and of Fisher-Yates."""

from __future__ import annotations

import itertools
import math
import struct
from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from openpoker.shuffle.drbg import HmacDrbg
from openpoker.shuffle.errors import BadRange
from openpoker.shuffle.sampling import WordStream, fisher_yates, map_word, uniform_below


@pytest.mark.parametrize("bits", [8, 16])
def test_map_word_is_exactly_uniform_over_every_word(bits: int) -> None:
    # Every word of the given size through the production mapping: each residue must have
    # the same number of accepted pre-images, for every range a 52- or 36-card deck needs.
    words = range(1 << bits)
    for m in range(1, 53):
        counts = Counter(j for u in words if (j := map_word(u, m, bits)) is not None)
        assert sorted(counts) == list(range(m)), m
        assert set(counts.values()) == {(1 << bits) // m}, m
        rejected = (1 << bits) - sum(counts.values())
        assert rejected == (1 << bits) % m, m


def test_map_word_rejects_exactly_the_top_of_the_32_bit_range() -> None:
    limit = (2**32 // 52) * 52
    assert limit == 2**32 - 48
    assert map_word(limit - 1, 52) == (limit - 1) % 52
    assert map_word(limit, 52) is None
    assert map_word(2**32 - 1, 52) is None
    assert map_word(2**32 - 1, 1) == 0  # m = 1 never rejects


def test_uniform_below_skips_rejected_words() -> None:
    words = iter([2**32 - 1, 2**32 - 48, 105])
    assert uniform_below(lambda: next(words), 52) == 105 % 52


@pytest.mark.parametrize("m", [0, -1, 2**32 + 1])
def test_bad_range(m: int) -> None:
    with pytest.raises(BadRange):
        map_word(0, m)


def test_modulo_would_be_biased_at_8_bits() -> None:
    # The reason for the rejection step: a bare u % 52 over bytes gives counts of 4 and 5.
    counts = Counter(u % 52 for u in range(256))
    assert set(counts.values()) == {4, 5}


def _scripted(draws: Sequence[int]) -> Callable[[int], int]:
    """An index source replaying ``draws``, checking each is inside the range asked for."""
    it = iter(draws)

    def below(k: int) -> int:
        j = next(it)
        assert 0 <= j < k
        return j

    return below


@pytest.mark.parametrize("n", range(2, 8))
def test_fisher_yates_is_a_bijection(n: int) -> None:
    # Every sequence of draws (j_{n-1} in 0..n-1, ..., j_1 in 0..1) is fed to the production
    # loop; the n! sequences must give n! distinct permutations, i.e. each exactly once.
    seen: Counter[tuple[int, ...]] = Counter()
    ranges = [range(k) for k in range(n, 1, -1)]
    for draws in itertools.product(*ranges):
        seen[tuple(fisher_yates(n, _scripted(draws)))] += 1
    assert len(seen) == math.factorial(n)
    assert set(seen.values()) == {1}
    assert set(seen) == set(itertools.permutations(range(n)))


def test_fisher_yates_asks_for_ranges_from_the_top_down() -> None:
    asked: list[int] = []

    def below(k: int) -> int:
        asked.append(k)
        return 0

    fisher_yates(52, below)
    assert asked == list(range(52, 1, -1))


class ScriptedDrbg(HmacDrbg):
    """A DRBG whose 64-byte outputs are given words (to make rejections happen on purpose)."""

    def __init__(self, words: Sequence[int]) -> None:
        super().__init__(key=b"", v=b"", reseed_counter=1)
        self.script = list(words)

    def generate(self, n: int, additional_input: bytes = b"") -> bytes:
        chunk, self.script = self.script[:16], self.script[16:]
        return struct.pack(">16I", *chunk)


def test_word_stream_below_is_uniform_below_word_for_word() -> None:
    # Bounds of a deck, plus bounds where about half of all words are rejected.
    bounds = [*range(1, 53), 2**31 + 1, 2**32, 3 * 2**30 + 7] * 40
    seed = bytes(range(32))
    fast = WordStream(HmacDrbg.instantiate(seed, b"hand", b"pers"))
    slow = WordStream(HmacDrbg.instantiate(seed, b"hand", b"pers"))
    assert [fast.below(m) for m in bounds] == [uniform_below(slow.next_word, m) for m in bounds]
    assert fast.next_word() == slow.next_word()  # the same number of words consumed


def test_word_stream_below_rejects_across_chunk_boundaries() -> None:
    top = 2**32 - 1  # rejected for every m that does not divide 2**32
    words = [top] * 15 + [7] + [top] * 16 + [100] + [0] * 15
    stream = WordStream(ScriptedDrbg(words))
    assert stream.below(52) == 7
    assert stream.below(52) == 100 % 52  # 16 rejected words, one of them a whole chunk
    assert stream.next_word() == 0


@pytest.mark.parametrize("m", [0, -1, 2**32 + 1])
def test_word_stream_below_bad_range(m: int) -> None:
    stream = WordStream(HmacDrbg.instantiate(bytes(32), b"h"))
    with pytest.raises(BadRange):
        stream.below(m)
