"""``pokerctl rng``: decks, raw stream and the checker, through the real command line."""

from __future__ import annotations

import io
import json
import os

import pytest

from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, parse_card
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.cmd_rng import read_orders, write_raw
from openpoker.shuffle import commitment, derive_deck, raw_chunks


def test_decks_plain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rng", "decks", "--count", "25"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 25
    decks = [tuple(parse_card(c) for c in line.split()) for line in lines]
    assert all(sorted(d) == sorted(STANDARD_DECK) for d in decks)
    assert len(set(decks)) == 25  # fresh seeds


def test_decks_json_are_production_derivations(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rng", "decks", "--count", "5", "--deck", "36", "--json"]) == 0
    for line in capsys.readouterr().out.splitlines():
        obj = json.loads(line)
        assert set(obj) == {"hand_id", "commitment", "deck"}  # never the seed
        assert sorted(parse_card(c) for c in obj["deck"]) == sorted(SHORT_DECK)
        assert len(obj["commitment"]) == 64


def test_decks_refuse_when_the_os_source_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(n: int) -> bytes:
        raise OSError("no entropy")

    monkeypatch.setattr(os, "urandom", broken)
    assert main(["rng", "decks", "--count", "1"]) == 3
    assert main(["rng", "raw", "--bytes", "10"]) == 3
    out = capsys.readouterr()
    assert out.out == ""
    assert "ENTROPY" in out.err or "refusing" in out.err


def test_raw_stream_is_per_hand_drbg_output(monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = iter([bytes([i]) * 32 for i in range(1, 10)])
    hands = iter([f"hand-{i}" for i in range(1, 10)])
    monkeypatch.setattr("openpoker.pokerctl.cmd_rng.os_seed", lambda: next(seeds))
    monkeypatch.setattr("openpoker.pokerctl.cmd_rng._hand_id", lambda: next(hands))
    out = io.BytesIO()
    assert write_raw(out, limit=600) == 600
    expected = b"".join(b"".join(raw_chunks(bytes([i]) * 32, f"hand-{i}", 4)) for i in range(1, 4))[:600]
    assert out.getvalue() == expected


def test_raw_byte_count(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["rng", "raw", "--bytes", "1000"]) == 0
    assert len(capfdbinary.readouterr().out) == 1000


def test_check_reads_both_formats() -> None:
    deck = derive_deck(bytes(32), "h", 52)
    plain = " ".join(str(c) for c in deck)
    js = json.dumps(
        {"hand_id": "h", "commitment": commitment(bytes(32), "h"), "deck": [str(c) for c in deck]}
    )
    orders = list(read_orders(io.StringIO(plain + "\n\n" + js + "\n"), 52))
    assert orders[0] == orders[1] == [STANDARD_DECK.index(c) for c in deck]


def test_check_flags_a_biased_sample(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 3,000 copies of one deck: every test but independence must fail loudly.
    line = " ".join(str(c) for c in derive_deck(bytes(32), "h", 52)) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(line * 3000))
    assert main(["rng", "check", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["decks"] == 3000
    assert not result["pass"]
    assert result["tests"]["card_position"]["p"] < 1e-10


def test_check_passes_fresh_decks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rng", "decks", "--count", "3000"]) == 0
    decks = capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO(decks))
    code = main(["rng", "check"])
    out = capsys.readouterr().out
    assert "3000 decks of 52" in out
    # Fresh OS seeds: not reproducible, so only the report's shape is asserted here; the
    # seeded statistical tests live in tests/shuffle/test_statistics.py.
    assert code in (0, 1)
    assert out.count("PASS") + out.count("FAIL") == 7
