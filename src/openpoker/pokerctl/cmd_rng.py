"""``pokerctl rng``: the lab's collection tools, built from the production shuffle functions.

``pokerctl rng decks --count N [--deck 52|36] [--json]``
    N decks, one per line, top card first, as space-separated card codes (``As Td 2c ...``);
    with ``--json``: ``{"hand_id": ..., "commitment": ..., "deck": ["As", ...]}``. Each deck is
    ``shuffle.derive_deck`` from a fresh 256-bit OS seed (``shuffle.entropy.os_seed``,
    the service's own seed source) and a fresh hand id. Seeds are not printed.
``pokerctl rng raw --bytes N``
    The raw DRBG stream (binary, before scaling or shuffling) on stdout: for each fresh seed and
    hand id, the first 256 bytes of the hand's HMAC_DRBG output (the four 64-byte generates a
    52-card deck is cut from), concatenated. ``--bytes 0`` streams until stdout closes (for
    ``dieharder -g 200``).
``pokerctl rng check [--deck 52|36] [--seats S] [--json]``
    Read decks (either output format of ``decks``) from stdin and run the statistical battery
    (``shuffle.battery``) at alpha = 0.01; exit 1 if a test fails.

If the OS random source fails, ``decks`` and ``raw`` stop with exit code 3: no weaker fallback.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from openpoker.engine.cards import parse_card
from openpoker.shuffle import CURRENT_VERSION, canonical_deck, commitment, derive_deck, raw_chunks
from openpoker.shuffle.battery import Battery
from openpoker.shuffle.entropy import os_seed
from openpoker.shuffle.errors import EntropyUnavailable

ALPHA = 0.01
RAW_CHUNKS_PER_HAND = 4


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rng = sub.add_parser(
        "rng",
        help="shuffle collection and statistics tools",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rng_sub = rng.add_subparsers(dest="rng_command", required=True, metavar="ACTION")
    decks = rng_sub.add_parser("decks", help="print shuffled decks from fresh OS seeds")
    decks.add_argument("--count", type=int, required=True, help="number of decks")
    decks.add_argument("--deck", type=int, choices=(52, 36), default=52, help="deck size")
    decks.add_argument("--json", action="store_true", help="one JSON object per deck")
    decks.set_defaults(func=run_decks)
    raw = rng_sub.add_parser("raw", help="write the raw DRBG byte stream to stdout")
    raw.add_argument("--bytes", type=int, required=True, help="bytes to write (0 = until stdout closes)")
    raw.set_defaults(func=run_raw)
    check = rng_sub.add_parser("check", help="run the statistical battery on decks read from stdin")
    check.add_argument("--deck", type=int, choices=(52, 36), default=52, help="deck size")
    check.add_argument("--seats", type=int, default=None, help="seats for the hole-card test (9 / 6)")
    check.add_argument("--json", action="store_true", help="results as one JSON object")
    check.set_defaults(func=run_check)


def _hand_id() -> str:
    return f"collect-{uuid.uuid4()}"


def write_decks(out: TextIO, *, count: int, size: int, as_json: bool) -> None:
    for _ in range(count):
        seed, hand_id = os_seed(), _hand_id()
        deck = [str(c) for c in derive_deck(seed, hand_id, size, CURRENT_VERSION)]
        if as_json:
            line = {"hand_id": hand_id, "commitment": commitment(seed, hand_id), "deck": deck}
            out.write(json.dumps(line) + "\n")
        else:
            out.write(" ".join(deck) + "\n")


def write_raw(out: BinaryIO, *, limit: int) -> int:
    """Write ``limit`` bytes (0 = no limit) of per-hand DRBG output; return the bytes written."""
    written = 0
    while limit == 0 or written < limit:
        block = b"".join(raw_chunks(os_seed(), _hand_id(), RAW_CHUNKS_PER_HAND))
        if limit:
            block = block[: limit - written]
        out.write(block)
        written += len(block)
    return written


def run_decks(args: argparse.Namespace) -> int:
    if args.count < 0:
        print("--count must be >= 0", file=sys.stderr)
        return 2
    try:
        write_decks(sys.stdout, count=args.count, size=args.deck, as_json=args.json)
    except EntropyUnavailable as exc:
        print(f"refusing to shuffle: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        return 0
    return 0


def run_raw(args: argparse.Namespace) -> int:
    if args.bytes < 0:
        print("--bytes must be >= 0", file=sys.stderr)
        return 2
    try:
        write_raw(sys.stdout.buffer, limit=args.bytes)
        sys.stdout.buffer.flush()
    except EntropyUnavailable as exc:
        print(f"refusing to generate: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        return 0  # dieharder closes the pipe when it has enough
    return 0


def read_orders(lines: TextIO, size: int) -> Iterator[list[int]]:
    """Decks from ``decks`` output (plain or JSON) as canonical indices."""
    index = {c: i for i, c in enumerate(canonical_deck(size))}
    for raw_line in lines:
        line = raw_line.strip()
        if not line:
            continue
        codes = json.loads(line)["deck"] if line.startswith("{") else line.split()
        yield [index[parse_card(code)] for code in codes]


def run_check(args: argparse.Namespace) -> int:
    seats = args.seats if args.seats is not None else (9 if args.deck == 52 else 6)
    battery = Battery(args.deck, seats=seats)
    try:
        battery.add_all(read_orders(sys.stdin, args.deck))
    except (KeyError, ValueError) as exc:
        print(f"not a {args.deck}-card deck line: {exc}", file=sys.stderr)
        return 2
    results = battery.results()
    verdict = battery.verdict(ALPHA)
    if args.json:
        body = {name: {"statistic": t.statistic, "df": t.df, "p": t.p} for name, t in results.items()}
        print(
            json.dumps({"decks": battery.decks, "alpha": ALPHA, "tests": body, "pass": all(verdict.values())})
        )
    else:
        print(f"{battery.decks} decks of {args.deck}, alpha {ALPHA}")
        for name, ok in verdict.items():
            t = results[name]
            print(f"{name:20s} X2={t.statistic:12.1f} df={t.df:5d} p={t.p:.4f} {'PASS' if ok else 'FAIL'}")
    return 0 if all(verdict.values()) else 1
