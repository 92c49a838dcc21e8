"""``pokerctl dealer status|pause|resume`` against an in-process dealer (plaintext rig): a table
the dealer paused itself shows with its reason, an operator's pause and resume round-trip, and
no dealer to answer is exit 2 with the code on stderr."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from openpoker.pokerctl import cmd_dealer
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.connect import Connection
from openpoker.services.dealer.app import DealerSettings
from openpoker.services.dealer.handlers import DealerServicer
from openpoker.services.dealer.pausing import OpenRetry
from openpoker.services.dealer.server import spec
from openpoker.shell.config import ShellConfig
from openpoker.shell.natsproc import free_port
from openpoker.shell.server import RunningServer, start_server
from tests.helpers.waiting import until
from tests.services.dealer.fakes import failed
from tests.services.dealer.rig import SLOW, Rig, rules


@pytest.fixture
async def served() -> AsyncIterator[tuple[Rig, RunningServer]]:
    rig = Rig(
        DealerSettings(
            retry_delay=0.01, max_retry_delay=0.05, open_retry=OpenRetry(retry=0.01, retry_max=0.02, limit=2)
        )
    )
    rig.app.go_live()
    config = ShellConfig.from_env(
        "dealer", {"POKER_INSECURE": "true", "POKER_DEALER_PORT": "0", "POKER_GRACE_SECONDS": "0.1"}
    )
    server = await start_server(config, [spec(DealerServicer(rig.app))])
    try:
        yield rig, server
    finally:
        await server.stop()
        await rig.app.stop()


async def test_status_shows_the_dealers_own_pause_and_resume_lifts_it(
    served: tuple[Rig, RunningServer],
) -> None:
    rig, server = served
    conn = Connection.plaintext({"dealer": server.address})

    async def refuse(**kwargs: Any) -> bool:
        raise failed("wallet", "OpenHand", "CMD_DEALER_REFUSAL")

    accept = rig.wallet.open_hand
    rig.wallet.open_hand = refuse  # type: ignore[method-assign]
    rig.table.open("d1", rules(time=SLOW))
    rig.seat("d1", {0: "ann", 1: "bob"})
    await until(lambda: rig.app.paused_tables() == 1, what="the dealer pauses the table")
    status = await cmd_dealer.dealer_status(conn)
    [paused] = status["paused"]
    assert (paused["table"].removeprefix("tables/"), paused["paused_by"], paused["reason"]) == (
        "d1",
        "dealer",
        "CMD_DEALER_REFUSAL",
    )
    assert paused["failures"] == 2
    assert status["paused_tables"] == 1
    rig.wallet.open_hand = accept  # type: ignore[method-assign]
    assert await cmd_dealer.set_paused(conn, table="d1", pause=False) == {"table": "d1", "paused": False}
    assert (await cmd_dealer.dealer_status(conn))["paused"] == []
    # An operator's own pause, by the same command.
    assert await cmd_dealer.set_paused(conn, table="tables/d1", pause=True) == {"table": "d1", "paused": True}
    [mine] = (await cmd_dealer.dealer_status(conn))["paused"]
    assert mine["paused_by"] == "operator"


def test_no_dealer_is_exit_2_with_the_code_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()  # nothing listens there
    code = main(["dealer", "status", "--insecure", "--dealer-target", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("pokerctl dealer status: UNAVAILABLE")
