"""``pokerctl phh replay [--json] PATH...``: replay PHH hand histories through the engine.

PATH may be ``.phh``/``.phhs`` files or folders (searched recursively, in sorted order). Every
hand gets one line; with ``--json`` exactly::

    {"path": "...", "index": 0, "variant": "NT", "finishing_stacks": [...], "error": null}

``index`` counts hands from 0 within the file; stacks are in the file's player order and units
(integers when whole, else exact decimals). A hand the engine rejects, or that does not parse,
gets its error message and ``"finishing_stacks": null``. Every hand is printed; the exit code is
1 if any was rejected, 2 if a PATH does not exist or holds no hand history.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TextIO

from openpoker.engine.errors import EngineError
from openpoker.engine.phh import HandHistory, InvalidPhh, load_phh, load_phhs_each

SUFFIXES = (".phh", ".phhs")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    phh = sub.add_parser("phh", help="PHH hand histories", description="Work with PHH hand histories.")
    phh_sub = phh.add_subparsers(dest="phh_command", required=True, metavar="ACTION")
    replay = phh_sub.add_parser(
        "replay",
        help="replay hands through the engine and print finishing stacks",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("--json", action="store_true", help="one JSON object per hand")
    replay.add_argument("paths", nargs="+", metavar="PATH", help=".phh/.phhs files or folders")
    replay.set_defaults(func=run_replay)
    from openpoker.pokerctl.cmd_phh_export import register_export  # noqa: PLC0415  (its own module)

    register_export(phh_sub)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """One hand's result: stacks in file units, or why there are none."""

    path: str
    index: int
    variant: str | None
    finishing_stacks: tuple[int | Decimal, ...] | None
    error: str | None

    def json_line(self) -> str:
        # Built by hand so decimal stacks stay exact JSON numbers (json.dumps has no Decimal).
        stacks = "null" if self.finishing_stacks is None else _numbers(self.finishing_stacks)
        return (
            f'{{"path": {json.dumps(self.path)}, "index": {self.index}, '
            f'"variant": {json.dumps(self.variant)}, "finishing_stacks": {stacks}, '
            f'"error": {json.dumps(self.error)}}}'
        )

    def text_line(self) -> str:
        head = f"{self.path} #{self.index} {self.variant or '?'}"
        if self.finishing_stacks is None:
            return f"{head}: REJECTED: {self.error}"
        return f"{head}: " + " ".join(str(_plain(v)) for v in self.finishing_stacks)


def _plain(value: int | Decimal) -> int | Decimal:
    # 221.20 -> 221.2; only non-whole values are Decimals, so no exponent notation appears.
    return value.normalize() if isinstance(value, Decimal) else value


def _numbers(values: Sequence[int | Decimal]) -> str:
    return "[" + ", ".join(str(_plain(v)) for v in values) + "]"


def find_files(paths: Sequence[str]) -> list[Path]:
    """The hand-history files named by ``paths``; folders are searched recursively."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(raw)
    return found


def replay_file(path: Path) -> Iterator[Outcome]:
    """Parse one file and replay each of its hands."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        hands: list[HandHistory | InvalidPhh] = (
            load_phhs_each(text) if path.suffix == ".phhs" else [_load_one(text)]
        )
    except (OSError, UnicodeDecodeError, InvalidPhh) as error:
        yield Outcome(path=name, index=0, variant=None, finishing_stacks=None, error=str(error))
        return
    for index, hand in enumerate(hands):
        if isinstance(hand, InvalidPhh):
            yield Outcome(path=name, index=index, variant=None, finishing_stacks=None, error=str(hand))
        else:
            yield replay_hand(name, index, hand)


def _load_one(text: str) -> HandHistory | InvalidPhh:
    try:
        return load_phh(text)
    except InvalidPhh as error:
        return error


def replay_hand(path: str, index: int, hh: HandHistory) -> Outcome:
    from openpoker.engine.phh_replay import replay_history  # noqa: PLC0415  (imported when first needed)

    try:
        stacks = replay_history(hh)
    except EngineError as error:
        return Outcome(path=path, index=index, variant=hh.variant, finishing_stacks=None, error=str(error))
    except Exception as error:  # an engine bug: report it on this hand and keep going
        message = f"internal error: {type(error).__name__}: {error}"
        return Outcome(path=path, index=index, variant=hh.variant, finishing_stacks=None, error=message)
    return Outcome(
        path=path,
        index=index,
        variant=hh.variant,
        finishing_stacks=tuple(hh.to_units(s) for s in stacks),
        error=None,
    )


def run_replay(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        files = find_files(args.paths)
    except FileNotFoundError as missing:
        print(f"pokerctl phh replay: no such file or folder: {missing}", file=sys.stderr)
        return 2
    if not files:
        print("pokerctl phh replay: no .phh or .phhs files found", file=sys.stderr)
        return 2
    hands = rejected = 0
    for path in files:
        for outcome in replay_file(path):
            hands += 1
            rejected += outcome.error is not None
            print(outcome.json_line() if args.json else outcome.text_line(), file=out, flush=False)
    if not args.json:
        print(
            f"{hands} hands in {len(files)} files: {hands - rejected} replayed, {rejected} rejected", file=out
        )
    out.flush()
    return 1 if rejected else 0
