"""``pokerctl watch`` against the running system: a real process printing frames from
``WatchTable`` while bots play (``--frames N``: plain output, no screen clearing). The system is
secure: ``--data-dir`` gives the watcher the CA and the token key, so it watches as the player
with that player's own token on the table's client port."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest

from openpoker.pokerctl.bots import QUIET, start_bots, table_config, wait_tables
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.childproc import argv
from tests.e2e.helpers import Clients

# The whole system as processes for this module: over 5 s a test on 2 shared cores, so `make
# test-fast` leaves the module out (docs/testing.md).
pytestmark = pytest.mark.slow

CARD = re.compile(r"[2-9TJQKA][cdhs]")


async def test_watch_prints_live_frames_as_a_player(system: LocalSystem) -> None:
    table_id = "watched-1"
    async with Clients(system) as c:
        conn = c.conn
        await c.create(table_id, table_config("omaha", "pl", clock_ms=2000))
    bots = await start_bots(
        table_target=system.targets["table"],
        wallet_target=system.targets["wallet"],
        tables=[table_id],
        players_per_table=3,
        behaviour=QUIET,
        conn=conn,
    )
    try:
        await wait_tables(system.targets["table"], [table_id], lambda t: t.hands_played >= 1, conn=conn)
        viewer = bots.bots[0].player
        # Through the childproc launcher: the watcher dies with this test process if it is killed.
        command = [
            sys.executable,
            "-m",
            "openpoker.pokerctl",
            "watch",
            table_id,
            "--as",
            viewer,
            "--frames",
            "40",
        ]
        proc = await asyncio.create_subprocess_exec(
            *argv(
                [
                    *command,
                    "--data-dir",
                    str(system.data_dir),
                    "--table-target",
                    system.targets["table"],
                    # Free ports: the client port is not the default service port + 100.
                    "--table-client-target",
                    system.client_targets["table"],
                ]
            ),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
        finally:
            if proc.returncode is None:  # timed out or cancelled: never leave it running
                proc.kill()
                await proc.wait()
    finally:
        await bots.stop()
    assert proc.returncode == 0, err.decode()
    screen = out.decode()
    assert "\x1b[" not in screen  # frames mode: no screen control
    assert f"tables/{table_id}  Omaha Pot Limit 1/2" in screen
    assert f"watching as {viewer}" in screen
    for bot in bots.bots:
        assert bot.player in screen
    assert "hand #" in screen
    assert "<- to act" in screen
    assert "last actions:" in screen
    # The viewer's own four Omaha cards are on their row; nobody else's are.
    rows = [line for line in screen.splitlines() if " bot-" in line and "in hand" in line]
    mine = [r for r in rows if viewer in r]
    others = [r for r in rows if viewer not in r]
    assert mine
    assert others
    for row in mine:
        cards = [t for t in row.split() if CARD.fullmatch(t) or t == "??"]
        assert len(cards) == 4
        assert "??" not in cards
    for row in others:
        cards = [t for t in row.split() if CARD.fullmatch(t) or t == "??"]
        assert cards == ["??"] * 4
