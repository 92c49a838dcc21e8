"""Real hands: every corpus hand that pokerkit replays ends with pokerkit's finishing stacks
when replayed through ``pokerctl phh replay --json`` (run in-process).

The corpus is a verbatim copy of the public phh-dataset sample in /work/shared/conformance/phh
(1,518 no-limit hold'em hands from four online rooms and one WSOP hand). The reference is
pokerkit 0.7.7's own replay of each file, computed here in the same run, not the files'
``finishing_stacks`` (those are after the rooms' rake; see the corpus README).
"""

from __future__ import annotations

import json
import warnings
from decimal import Decimal
from pathlib import Path

import pytest
from pokerkit import HandHistory as PkHandHistory

from openpoker.pokerctl.__main__ import main

CORPUS = Path(__file__).parent / "data" / "phh"
CORPUS_FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".phh", ".phhs"))


def pokerkit_stacks(path: Path) -> list[tuple[Decimal, ...] | None]:
    """pokerkit's finishing stacks for each hand of a file (None if it cannot replay one)."""
    with warnings.catch_warnings():
        # The handhq files carry a field pokerkit 0.7.7 does not know; it only warns.
        warnings.filterwarnings("ignore", message="The field 'time_zone_abbreviation'")
        with path.open("rb") as fp:
            hands = list(PkHandHistory.load_all(fp)) if path.suffix == ".phhs" else [PkHandHistory.load(fp)]
        out: list[tuple[Decimal, ...] | None] = []
        for hh in hands:
            try:
                state = None
                for state in hh:  # noqa: B007  (the last state is the result)
                    pass
            except ValueError:
                out.append(None)
                continue
            assert state is not None
            out.append(tuple(Decimal(str(s)) for s in state.stacks))
    return out


@pytest.mark.slow
def test_every_corpus_hand_matches_pokerkit_through_pokerctl(capsys: pytest.CaptureFixture[str]) -> None:
    expected = {(str(p), i): s for p in CORPUS_FILES for i, s in enumerate(pokerkit_stacks(p))}
    replayable = {k: v for k, v in expected.items() if v is not None}
    assert len(expected) == 1518
    assert len(replayable) == 1518  # pokerkit 0.7.7 replays them all (corpus README)

    code = main(["phh", "replay", "--json", str(CORPUS)])
    lines = capsys.readouterr().out.splitlines()
    got = {}
    for line in lines:
        record = json.loads(line, parse_float=Decimal)
        assert set(record) == {"path", "index", "variant", "finishing_stacks", "error"}
        got[(record["path"], record["index"])] = record
    assert set(got) == set(expected)

    mismatches = []
    for key, stacks in replayable.items():
        record = got[key]
        ours = (
            None
            if record["finishing_stacks"] is None
            else tuple(Decimal(v) for v in record["finishing_stacks"])
        )
        if ours != stacks:
            mismatches.append((key, record["error"], ours, stacks))
    assert not mismatches, f"{len(mismatches)} hands differ, first: {mismatches[:3]}"
    assert code == 0
