"""Source checks a lab would do by reading the code (research/rng.md E6)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "openpoker"
SHUFFLE_PATH = [*sorted((SRC / "shuffle").glob("*.py")), *sorted((SRC / "services" / "rng").glob("*.py"))]
# Modules where raw DRBG words exist: a modulo may only appear inside map_word.
WORD_MODULES = {"sampling.py", "drbg.py", "derivation.py", "record.py"}


def test_the_shuffle_path_exists() -> None:
    names = {p.name for p in SHUFFLE_PATH}
    assert {"drbg.py", "sampling.py", "entropy.py", "app.py"} <= names


def test_no_python_random_module_anywhere_in_the_shuffle_path() -> None:
    for path in SHUFFLE_PATH:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "random" for a in node.names), path
            if isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "random", path


def test_modulo_only_inside_map_word() -> None:
    for path in SHUFFLE_PATH:
        if path.parent.name != "shuffle" or path.name not in WORD_MODULES:
            continue
        tree = ast.parse(path.read_text(), str(path))
        allowed: set[int] = set()
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name == "map_word":
                allowed |= {id(n) for n in ast.walk(fn)}
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                assert id(node) in allowed, f"{path.name}:{node.lineno}: modulo outside map_word"


def test_seeds_come_only_from_the_os() -> None:
    # os.urandom / secrets appear only in the entropy module and the seed and deck sealing nonces.
    for path in SHUFFLE_PATH:
        text = path.read_text()
        if path.name in {"entropy.py", "sealing.py", "deck_seal.py"}:
            continue
        assert "urandom(" not in text or path.name == "config.py", path
        assert "import secrets" not in text, path
