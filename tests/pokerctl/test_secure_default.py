"""``pokerctl up`` and ``pokerctl demo`` run the system secure unless ``--insecure`` (the system
itself is stood in for: what is checked is the flag it is built with)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from openpoker.pokerctl import cmd_demo, cmd_up
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.local import StartError


class FakeSystem:
    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        FakeSystem.built.append(kwargs)

    async def start(self) -> None:
        raise StartError("not started in this test")

    async def stop(self) -> dict[str, int | None]:
        return {}


@pytest.mark.parametrize("module", [cmd_up, cmd_demo])
@pytest.mark.parametrize(("flags", "secure"), [([], True), (["--insecure"], False)])
def test_secure_unless_insecure(
    module: Any, flags: list[str], secure: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeSystem.built.clear()
    monkeypatch.setattr(module, "LocalSystem", FakeSystem)
    argv = ["up"] if module is cmd_up else ["demo", "--hands", "1"]
    assert main([*argv, "--data-dir", str(tmp_path), *flags]) == 1  # the start failed
    assert [b["secure"] for b in FakeSystem.built] == [secure]
