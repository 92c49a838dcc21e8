"""``pokerctl`` on a secure system (``LocalSystem(secure=True)``: real nats-server, every service a
process, TLS and the local PKI): the demo's play (staff calls with pokerctl's certificate, bots
with player tokens on the client port), ``pokerctl bots``, ``pokerctl watch`` as a spectator and
as a player, ``pokerctl demo`` itself; and a plaintext pokerctl is turned away."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import QUIET, create_table, start_bots, table_config, wait_tables
from openpoker.pokerctl.cmd_demo import play
from openpoker.pokerctl.connect import Connection
from openpoker.pokerctl.local import LocalSystem
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("secure-pokerctl"), secure=True) as local:
        yield local


def connection_args(system: LocalSystem) -> list[str]:
    return [
        "--data-dir",
        str(system.data_dir),
        "--table-target",
        system.targets["table"],
        "--table-client-target",
        system.client_targets["table"],
    ]


async def test_the_demo_plays_and_conserves_chips_on_a_secure_system(system: LocalSystem) -> None:
    conn = Connection.of_system(system)
    assert conn.secure
    played = await play(conn, hands=4, tables=1, players=3, seed=7, prefix="secure-demo-", behaviour=QUIET)
    assert played.hands >= 4
    assert played.report.conserved, played.report.problems
    assert played.bots.stats.actions > 0
    assert played.bots.stats.joins == 3  # each bot joined as itself, with its own token


def test_pokerctl_bots_plays_hands_with_the_data_folder(
    system: LocalSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bots", "--create", "1", "--prefix", "secure-cli-", "--players", "2", "--hands", "2"]
    argv += [*connection_args(system), "--wallet-target", system.targets["wallet"]]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "bots at secure-cli-1: 2 each" in out


async def test_watch_frames_as_a_spectator_and_as_a_player(system: LocalSystem) -> None:
    conn = Connection.of_system(system)
    table = "secure-watched"
    await create_table(conn.target("table"), table, table_config("holdem", "nl"), conn=conn)
    bots = await start_bots(
        table_target=conn.target("table"),
        wallet_target=conn.target("wallet"),
        tables=[table],
        players_per_table=2,
        behaviour=QUIET,
        conn=conn,
    )
    try:
        await wait_tables(conn.target("table"), [table], lambda t: t.hands_played >= 1, conn=conn)
        spectator = await asyncio.to_thread(_run, ["watch", table, "--frames", "3", *connection_args(system)])
        # A client's way: the CA and the player's own token (pokerctl token), no data folder.
        assert system.pki is not None
        token = conn.player_metadata(f"bot-{table}-1")[0][1].removeprefix("Bearer ")
        as_player = ["--as", f"bot-{table}-1", "--ca", str(system.pki.ca_cert), "--token", token]
        as_player += ["--table-client-target", system.client_targets["table"]]
        player = await asyncio.to_thread(_run, ["watch", table, "--frames", "2", *as_player])
    finally:
        await bots.stop()
    code, out = spectator
    assert code == 0, out
    assert out.count("watching as a spectator") == 3
    assert re.search(r"hands played [1-9]", out)
    code, out = player
    assert code == 0, out
    assert out.count(f"watching as bot-{table}-1") == 2


def _run(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    return code, buffer.getvalue()


def test_a_plaintext_pokerctl_is_turned_away(system: LocalSystem, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["watch", "anything", "--once", "--insecure", "--table-target", system.client_targets["table"]]
    assert main(argv) == 1
    assert "watch failed: UNAVAILABLE" in capsys.readouterr().err


def test_watching_as_another_player_than_the_token_names_is_refused(
    system: LocalSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    ann = Connection.of_system(system).player_metadata("ann")[0][1].removeprefix("Bearer ")
    argv = ["watch", "secure-watched", "--once", "--as", "bob", "--token", ann, *connection_args(system)]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # no frame: nothing of bob's view shown
    assert "watch failed: PERMISSION_DENIED NOT_YOUR_SEAT" in captured.err


def test_without_the_token_key_bots_stop_before_calling_anything(
    system: LocalSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    assert system.pki is not None
    argv = ["bots", "--create", "1", "--prefix", "never-", "--ca", str(system.pki.ca_cert)]
    argv += ["--cert", str(system.pki.cert("pokerctl")), "--key", str(system.pki.key("pokerctl"))]
    argv += ["--table-target", system.targets["table"], "--wallet-target", system.targets["wallet"]]
    assert main(argv) == 2
    assert "--data-dir" in capsys.readouterr().err
    assert main(["watch", "never-1", "--once", *connection_args(system)]) == 1  # no table made
    assert "TABLE_NOT_FOUND" in capsys.readouterr().err


def test_pokerctl_demo_runs_secure_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "demo"
    assert main(["demo", "--hands", "3", "--json", "--data-dir", str(data)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["hands"] >= 3
    assert summary["chips_conserved"] is True
    for name in ("ca.crt", "pokerctl.crt", "pokerctl.key", "token.key", "jwks.json"):
        assert (data / "pki" / name).is_file(), name  # the system ran on the local PKI
