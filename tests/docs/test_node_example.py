"""The Node.js client example (docs/examples/node) against the real system.

``npm ci`` installs the example's pinned packages into its folder once per session; the whole
system (nats-server, rng, wallet, table and dealer services, as ``make run`` starts it) runs on
free loopback ports for this module; ``node game_server.js`` then creates a table, seats two
players, waits for the dealer to deal, is refused an out-of-turn fold, folds and leaves. The
test reads the script's ``<step> <json>`` lines and checks the table from Python as well.
Skipped only when ``node`` or ``npm`` is not on PATH.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import channel
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(600)]

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "node"
SCRIPT = "game_server.js"
NPM_CI_TIMEOUT = 420.0
RUN_TIMEOUT = 90.0


@pytest.fixture(scope="session")
def node_example() -> Path:
    """The example folder with its packages installed by ``npm ci`` (once per session)."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not on PATH: the Node.js example cannot run")
    done = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        timeout=NPM_CI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"npm ci failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return EXAMPLE


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    """Every service as ``make run`` starts it, on free ports; always stopped."""
    with local_system(tmp_path_factory.mktemp("node-example"), secure=True) as local:
        yield local


def run_example(folder: Path, system: LocalSystem) -> dict[str, list[dict[str, Any]]]:
    """Run the script to its end against the system's client ports (TLS, tokens minted with
    ``pokerctl token`` from its data folder); its output lines by step, in order."""
    targets = system.client_targets
    pokerctl = str(Path(sys.executable).with_name("pokerctl"))
    command = ["node", SCRIPT, "--table", targets["table"], "--wallet", targets["wallet"]]
    command += ["--data-dir", str(system.data_dir), "--pokerctl", pokerctl, "--timeout-ms", "30000"]
    done = subprocess.run(
        command,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"node {SCRIPT} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    steps: dict[str, list[dict[str, Any]]] = {}
    for line in done.stdout.splitlines():
        step, _, fields = line.partition(" ")
        steps.setdefault(step, []).append(json.loads(fields))
    return steps


async def table_view(system: LocalSystem, name: str) -> tpb.Table:
    async with channel(system.targets["table"], system.tls) as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        got = await stub.GetTable(tpb.GetTableRequest(name=name), timeout=5.0)
        table: tpb.Table = got.table
        return table


def test_node_client_plays_a_hand_through_the_api(node_example: Path, system: LocalSystem) -> None:
    steps = run_example(node_example, system)

    assert [d["cash"] for d in steps["deposit"]] == [1000, 1000]
    (created,) = steps["create_table"]
    assert created["name"].startswith("tables/node-")
    assert created["status"] == "TABLE_STATUS_WAITING"
    assert created["retry_same_table"] is True  # the same request_id created nothing new
    assert [j["seat"] for j in steps["join_table"]] == [1, 2]

    # The dealer service dealt; the view is the first player's: their cards, not the other's.
    (view,) = steps["view"]
    viewer = view["viewer"]
    assert view["status"] == "TABLE_STATUS_IN_HAND"
    assert view["street"] == "STREET_PREFLOP"
    assert view["hand_id"]
    assert len(view["deck_commitment"]) == 64
    cards = {s["player"]: s["cards"] for s in view["seats"]}
    assert len(cards) == 2
    assert all(len(c) == 2 for c in cards[viewer])
    assert [c for p, c in cards.items() if p != viewer] == [["", ""]]

    # The out-of-turn fold: ErrorInfo decoded from the grpc-status-details-bin trailer.
    (refused,) = steps["refused"]
    assert refused["code"] == "FAILED_PRECONDITION"
    assert refused["reason"] == "NOT_YOUR_TURN"
    assert refused["domain"] == "poker.table"
    assert set(refused["metadata"]) >= {"seat", "toAct"}

    first, second = steps["leave_table"]
    assert first["pending"] is True  # still in the hand: leaves when it ends
    (hand,) = steps["hand"]
    assert hand["hand_id"] == view["hand_id"]
    assert hand["outcome"] == "HAND_OUTCOME_WON_UNCONTESTED"
    assert [p["player"] for p in hand["payouts"]] == [first["player"]]
    assert second["player"] == view["to_act"]
    (final,) = steps["table"]
    assert (final["hands_played"], final["seated"]) == (1, 0)

    # The service agrees, asked from Python.
    table = asyncio.run(table_view(system, created["name"]))
    assert table.hands_played == 1
    assert not [s for s in table.seats if s.player_id]
