"""The shape issue 15 set, kept: a short README that is a front door, every doc page reachable
from it, links that resolve, and no module or class too big to take over."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "openpoker"
GENERATED = SRC / "api"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)  # code is not links


def _links(text: str) -> list[str]:
    return LINK.findall(CODE.sub("", text))


def _hand_written() -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if GENERATED not in p.parents]


def test_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300
    head = "\n".join(lines[:40])
    assert "make run" in head
    assert "make test" in head


def test_every_doc_page_is_linked_from_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = {(ROOT / target).resolve() for target in _links(readme)}
    pages = {p.resolve() for p in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, sorted(str(p.relative_to(ROOT)) for p in pages - linked)


def test_every_relative_link_in_the_docs_resolves() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "deploy" / "README.md"]
    broken = []
    for doc in docs:
        if "node_modules" in doc.parts:
            continue
        for target in _links(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_no_module_over_800_lines() -> None:
    big = {
        str(p.relative_to(ROOT)): n for p in _hand_written() if (n := len(p.read_text().splitlines())) > 800
    }
    assert not big, big


def test_no_class_over_400_lines() -> None:
    big = {}
    for path in _hand_written():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > 400:
                    big[f"{path.relative_to(ROOT)}:{node.name}"] = length
    assert not big, big
