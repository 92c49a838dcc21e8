"""``pokerctl phh replay``: output lines, exact decimals, rejected hands, folders, exit codes.

Expected stacks come from outside the code under test: the research note's worked example
(engine.md 3.2: AA, KK and QQ all in, stacks 250 / 0 / 100) and pokerkit's replay.
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from pokerkit import HandHistory as PkHandHistory

from openpoker.pokerctl.__main__ import main

EXAMPLE = """variant = "NT"
ante_trimming_status = true
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 50, 200]
actions = [
  "d dh p1 AsAd", "d dh p2 KsKd", "d dh p3 QsQh",
  "p3 cbr 6", "p1 cbr 100", "p2 cc", "p3 cc",
  "p1 sm AsAd", "p2 sm KsKd", "p3 sm QsQh",
  "d db 2c7d9h", "d db Tc", "d db 3h",
]
players = ["alice", "bob", "carol"]
"""

# The same hand in dollars and cents: 0.01/0.02 blinds, stacks 1.00 / 0.50 / 2.00.
EXAMPLE_CENTS = (
    EXAMPLE.replace("[1, 2, 0]", "[0.01, 0.02, 0]")
    .replace("min_bet = 2", "min_bet = 0.02")
    .replace("[100, 50, 200]", "[1.00, 0.50, 2.00]")
    .replace("cbr 6", "cbr 0.06")
    .replace("cbr 100", "cbr 1")
)

# p2 raises to 3 over a bet of 6 (below the minimum): the engine rejects the hand.
ILLEGAL = EXAMPLE.replace('"p1 cbr 100"', '"p1 cbr 3"')


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code, out, _ = run_with_err(capsys, *argv)
    return code, out


def run_with_err(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["phh", "replay", *argv])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def pokerkit_stacks(text: str) -> list[Decimal]:
    state = None
    for state in PkHandHistory.loads(text):  # noqa: B007
        pass
    assert state is not None
    return [Decimal(str(s)) for s in state.stacks]


def test_json_line_for_one_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "example.phh"
    path.write_text(EXAMPLE)
    code, lines = run(capsys, "--json", str(path))
    assert code == 0
    assert lines == [
        f'{{"path": {json.dumps(str(path))}, "index": 0, "variant": "NT", '
        '"finishing_stacks": [250, 0, 100], "error": null}'
    ]


def test_decimal_stacks_are_exact_in_file_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cents.phh"
    path.write_text(EXAMPLE_CENTS)
    code, lines = run(capsys, "--json", str(path))
    assert code == 0
    record = json.loads(lines[0], parse_float=Decimal)
    assert record["finishing_stacks"] == pokerkit_stacks(EXAMPLE_CENTS) == [Decimal("2.5"), 0, 1]
    assert '"finishing_stacks": [2.5, 0, 1]' in lines[0]  # whole amounts print as integers


def test_rejected_hand_is_reported_and_the_rest_still_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mixed.phhs"
    path.write_text(f"[1]\n{EXAMPLE}\n[2]\n{ILLEGAL}\n[3]\n{EXAMPLE_CENTS}\n")
    code, lines = run(capsys, "--json", str(path))
    assert code == 1
    records = [json.loads(line) for line in lines]
    assert [r["index"] for r in records] == [0, 1, 2]
    assert records[0]["error"] is None
    assert records[1]["finishing_stacks"] is None
    assert records[1]["variant"] == "NT"
    assert records[1]["error"]
    assert records[2]["error"] is None


def test_unparsable_hand_and_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.phhs").write_text(f"[1]\n{EXAMPLE}\n[2]\n{EXAMPLE.replace('p3 cbr 6', 'p7 cbr 6')}\n")
    (tmp_path / "b.phh").write_text("variant = \n")
    code, lines = run(capsys, "--json", str(tmp_path))
    assert code == 1
    records = [json.loads(line) for line in lines]
    assert [(Path(r["path"]).name, r["index"], r["variant"]) for r in records] == [
        ("a.phhs", 0, "NT"),
        ("a.phhs", 1, None),
        ("b.phh", 0, None),
    ]
    assert "no player p7" in records[1]["error"]
    assert "not a PHH document" in records[2]["error"]


def test_folders_are_searched_recursively(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x" / "y").mkdir(parents=True)
    (tmp_path / "x" / "y" / "deep.phh").write_text(EXAMPLE)
    (tmp_path / "x" / "two.phhs").write_text(f"[1]\n{EXAMPLE}\n[2]\n{EXAMPLE_CENTS}\n")
    (tmp_path / "x" / "notes.txt").write_text("not a hand")
    code, lines = run(capsys, "--json", str(tmp_path))
    assert code == 0
    names = [Path(json.loads(line)["path"]).name for line in lines]
    assert sorted(names) == ["deep.phh", "two.phhs", "two.phhs"]


def test_text_mode_prints_a_line_per_hand_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mixed.phhs"
    path.write_text(f"[1]\n{EXAMPLE}\n[2]\n{ILLEGAL}\n")
    code, lines = run(capsys, str(path))
    assert code == 1
    assert lines[0] == f"{path} #0 NT: 250 0 100"
    assert lines[1].startswith(f"{path} #1 NT: REJECTED: ")
    assert lines[2] == "2 hands in 1 files: 1 replayed, 1 rejected"


def test_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run_with_err(capsys, "--json", str(tmp_path / "nope.phh"))
    assert code == 2
    assert lines == []
    assert "no such file" in err


def test_empty_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run_with_err(capsys, "--json", str(tmp_path))
    assert code == 2
    assert lines == []
    assert "no .phh or .phhs files" in err


def test_installed_command_runs(tmp_path: Path) -> None:
    path = tmp_path / "example.phh"
    path.write_text(EXAMPLE)
    done = subprocess.run(
        [sys.executable, "-m", "openpoker.pokerctl", "phh", "replay", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["finishing_stacks"] == [250, 0, 100]
