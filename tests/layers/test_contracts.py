"""The layer contracts in pyproject.toml hold, and breaking one on purpose fails ``lint-imports``.

Each case copies the package to a temporary folder, adds one forbidden import, and runs the same
``lint-imports`` that ``make lint`` runs against the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed")


def _lint(tmp_path: Path, *, add: tuple[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "openpoker",
        src / "openpoker",
        ignore=shutil.ignore_patterns("__pycache__", "*.so"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if add is not None:
        module, line = add
        path = src / "openpoker" / module
        path.write_text(path.read_text() + f"\n{line}\n")
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "200"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tmp_path / "pyproject.toml")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    result = _lint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("engine/hand.py", "import os", "engine is pure"),
        ("engine/pots.py", "import openpoker.eventstore.envelope", "engine is pure"),
        ("dispute/check.py", "import openpoker.services.table.app", "libraries never import services"),
        ("services/dealer/app.py", "import openpoker.services.table.app", "services never import each other"),
        ("services/wallet/app.py", "import openpoker.pokerctl.bots", "services never import the command"),
        ("eventstore/memory.py", "import openpoker.tablelog.model", "layers"),
        ("errors.py", "import openpoker.engine.cards", "layers"),
        ("errors.py", "import logging", "engine is pure"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    result = _lint(tmp_path, add=(module, line))
    assert result.returncode != 0, result.stdout
    broken = [row for row in result.stdout.splitlines() if row.endswith("BROKEN")]
    assert any(row.startswith(contract) for row in broken), result.stdout
