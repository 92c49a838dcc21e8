"""``pokerctl backup``, ``restore`` and ``--backup DIR`` on a whole secure system: hands are
played, the system stopped and backed up; its store is wiped, a fresh nats-server gets the backup
restored, and ``replay --all`` and ``ledger audit`` say exactly what they said before the wipe,
live and from the backup. The services then start on the restored store. A changed file is
refused by the manifest check."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import QUIET
from openpoker.pokerctl.cmd_demo import play
from openpoker.pokerctl.connect import Connection
from openpoker.pokerctl.local import LocalSystem
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

EVIDENCE = ("TABLE_EVENTS", "WALLET_EVENTS", "RNG_AUDIT", "KV_RNG_SHUFFLES")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def results(source: list[str]) -> dict[str, tuple[int, str]]:
    """What replay and audit say, as text and as JSON, from ``source``."""
    out: dict[str, tuple[int, str]] = {}
    for name, argv in (
        ("replay", ["replay", "--all"]),
        ("replay-json", ["replay", "--all", "--json"]),
        ("audit", ["ledger", "audit"]),
        ("audit-json", ["ledger", "audit", "--json"]),
    ):
        code, stdout, _ = run([*argv, *source])
        out[name] = (code, stdout)
    return out


def test_backup_wipe_restore_replay_and_audit_agree(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with local_system(data, secure=True) as system:
        played = asyncio.run(
            play(
                Connection.of_system(system),
                hands=3,
                tables=2,
                players=3,
                seed=11,
                prefix="bk-",
                behaviour=QUIET,
            )
        )
        assert played.hands >= 3
        # A backup of the running system works too (it is not the one compared: hands may go on).
        live = ["--nats", system.nats.url, "--data-dir", str(data)]  # as pokerctl, with its credentials
        code, stdout, err = run(["backup", "--out", str(tmp_path / "live"), *live])
        assert code == 0, err
        assert set(EVIDENCE) <= set(json.loads(stdout)["streams"])

    before = results(["--data-dir", str(data)])
    assert before["replay"][0] == 0, before["replay"][1]
    assert before["audit"][0] == 0, before["audit"][1]
    assert json.loads(before["replay-json"][1])["ok"] is True

    backup = tmp_path / "backup"
    code, stdout, err = run(["backup", "--out", str(backup), "--data-dir", str(data)])
    assert code == 0, err
    summary = json.loads(stdout)
    manifest = json.loads((backup / "manifest.json").read_text())
    assert summary["digest"] == manifest["digest"]
    assert {s["name"] for s in manifest["streams"]} >= set(EVIDENCE)
    assert all(s["messages"] > 0 for s in manifest["streams"] if s["name"] in EVIDENCE)
    for stream in manifest["streams"]:  # evidence never expires: no age, size or count limit
        config = stream["config"]
        assert (config["max_age"], config.get("max_bytes", -1), config.get("max_msgs", -1)) == (0, -1, -1)
    assert run(["backup", "--out", str(backup), "--data-dir", str(data)])[0] == 2  # never over files

    assert results(["--backup", str(backup)]) == before

    shutil.rmtree(data / "nats" / "jetstream")
    nats_only = LocalSystem(data_dir=data, free_ports=True, services=(), secure=True)
    asyncio.run(nats_only.start())  # the admin sets up every stream, empty
    try:
        restore = ["restore", "--from", str(backup), "--nats", nats_only.nats.url]
        live = ["--nats", nats_only.nats.url, "--data-dir", str(data)]
        seed = data / "nats" / "auth" / "pokerctl.nk"
        code, _, err = run([*restore, "--nats-nkey", str(seed), "--nats-ca", str(data / "pki" / "ca.crt")])
        assert code == 2, err  # pokerctl reads; only admin may publish evidence
        code, stdout, err = run([*restore, "--data-dir", str(data)])  # as admin
        assert code == 0, err
        restored = json.loads(stdout)["streams"]
        assert all(restored[name]["sequences_preserved"] for name in EVIDENCE), restored
        assert results(live) == before
        code, _, err = run([*restore, "--data-dir", str(data)])
        assert code == 2
        assert "RESTORE_TARGET_NOT_EMPTY" in err
    finally:
        asyncio.run(nats_only.stop())

    # The services start on the restored store: its streams have the settings they ask for.
    with local_system(data, secure=True) as system:
        code, stdout, _ = run(["replay", "--all", "--nats", system.nats.url, "--data-dir", str(data)])
        assert (code, stdout) == before["replay"]


def test_a_changed_backup_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with local_system(data, secure=True) as system:
        played = asyncio.run(
            play(
                Connection.of_system(system),
                hands=1,
                tables=1,
                players=2,
                seed=3,
                prefix="tamper-",
                behaviour=QUIET,
            )
        )
        assert played.hands >= 1
    backup = tmp_path / "backup"
    assert run(["backup", "--out", str(backup), "--data-dir", str(data)])[0] == 0
    digest = json.loads((backup / "manifest.json").read_text())["digest"]

    changed = tmp_path / "changed"
    shutil.copytree(backup, changed)
    lines = (changed / "WALLET_EVENTS.jsonl").read_bytes().splitlines(keepends=True)
    (changed / "WALLET_EVENTS.jsonl").write_bytes(b"".join(lines[:-1]))  # the last message dropped
    for argv in (["replay", "--all"], ["ledger", "audit"]):
        code, _, err = run([*argv, "--backup", str(changed)])
        assert code == 2
        assert "BACKUP_TAMPERED" in err
        assert "WALLET_EVENTS.jsonl" in err
    with LocalSystem(data_dir=tmp_path / "empty", free_ports=True, services=()).nats as server:
        code, _, err = run(["restore", "--from", str(changed), "--nats", server.url])
        assert code == 1
        assert "BACKUP_TAMPERED" in err
        assert "nothing restored" in err
        code, _, err = run(["restore", "--from", str(backup), "--nats", server.url, "--digest", "0" * 64])
        assert code == 1  # a manifest rewritten to match changed files is not the one handed over
        assert run(["restore", "--from", str(backup), "--nats", server.url, "--digest", digest])[0] == 0
