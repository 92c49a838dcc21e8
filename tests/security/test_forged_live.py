"""A forged envelope on a live secure system: the ``admin`` identity (the one that may publish on
every subject) appends to a table's log an envelope re-sealed with ``chain.seal`` onto the last
one, unsigned or signed by a stranger's key. ``pokerctl replay`` against the running system, as
the ``pokerctl`` identity with the credentials of ``--data-dir``, fails at its version with a
signature finding; before the forgery it passes. Without credentials the live tools are refused
by NATS and say how to give them."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519
from nats.js.errors import APIError

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.dispute.source import read_table_log
from openpoker.engine.table_events import ChipsAdded
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore import seal
from openpoker.eventstore.jetstream import MSG_ID_HEADER
from openpoker.eventstore.signing import Signer
from openpoker.eventstore.streams import TABLE_EVENTS
from openpoker.eventstore.subjects import table_subject
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import natsauth
from openpoker.tablelog.store import to_recorded
from tests.helpers.forgery import next_draft
from tests.helpers.secure import Calls, token
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PLAYED, CREATED = "forged-played", "forged-created"
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"


@pytest.fixture(autouse=True)
def _credentials_from_the_options_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POKER_SIGNING_KEYS", "POKER_NATS_NKEY", "POKER_NATS_CA"):
        monkeypatch.delenv(name, raising=False)


async def _set_up(system: LocalSystem) -> None:
    """A table that played a hand and is paused, and one only created."""
    calls = Calls(system)
    try:
        config = table_config("holdem", "nl", clock_ms=200)  # the clock folds for the idle players
        for table_id in (PLAYED, CREATED):
            create = tpb.CreateTableRequest(request_id=f"create-{table_id}", table_id=table_id, config=config)
            await calls.staff_table.CreateTable(create, timeout=5)
        for player in ("erin", "finn"):
            await calls.staff_wallet.Deposit(
                wpb.DepositRequest(request_id=f"dep-{player}", player=player, amount=10_000), timeout=5
            )
            join = tpb.JoinTableRequest(
                request_id=f"join-{player}",
                table=f"tables/{PLAYED}",
                buy_in=buy_in_for(config),
                post_choice=tpb.POST_CHOICE_POST_NOW,
            )
            await calls.table.JoinTable(join, timeout=5, metadata=token(system, player))
        name = f"tables/{PLAYED}"
        for _ in range(300):
            got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=name), timeout=5)
            if got.table.hands_played >= 1:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("no hand was played to its end within 30 s")
        # No new hand: the log stays as it is while the test reads and forges.
        await calls.staff_dealer.PauseTable(dpb.PauseTableRequest(request_id="pause", table=name), timeout=5)
        for _ in range(300):
            got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=name), timeout=5)
            if not got.table.current_hand.hand_id:
                return
            await asyncio.sleep(0.1)
        raise AssertionError("the hand in progress did not end within 30 s")
    finally:
        await calls.close()


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("forged") / "data", secure=True) as local:
        asyncio.run(_set_up(local))
        yield local


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _replay(system: LocalSystem, table_id: str) -> tuple[int, dict[str, Any], str]:
    """``pokerctl replay`` of the live system as its ``pokerctl`` identity (``--data-dir``)."""
    code, out, err = _run(
        "replay", "--table", table_id, "--json", "--nats", system.nats.url, "--data-dir", str(system.data_dir)
    )
    assert code in (0, 1), err
    report: dict[str, Any] = json.loads(out)
    return code, report, err


async def _forge_as_admin(system: LocalSystem, table_id: str, signer: Signer | None) -> int:
    """Append a forged envelope to ``table_id``'s live log as ``admin``, onto its last envelope
    (again if the table wrote in between); returns the forged version."""
    nc = await system.connect_nats(natsauth.ADMIN)
    try:
        js = nc.jetstream()
        for _ in range(20):
            last = (await read_table_log(js, table_id))[-1]
            forged = seal(
                next_draft(last.envelope, (to_recorded(ChipsAdded(seat=0, amount=1_000_000)),)),
                last.envelope.hash,
                signer=signer,
            )
            headers = {MSG_ID_HEADER: forged.msg_id, EXPECTED_LAST_SUBJECT_SEQUENCE: str(last.sequence)}
            try:
                ack = await js.publish(
                    table_subject(table_id),
                    envelope_codec.encode(forged),
                    stream=TABLE_EVENTS.name,
                    headers=headers,
                )
            except APIError:
                continue  # a genuine append came first: forge onto that one
            assert not ack.duplicate
            return forged.version
        raise AssertionError("the log kept moving: nothing forged")
    finally:
        await nc.close()


@pytest.mark.parametrize(
    ("table_id", "stranger"),
    [(PLAYED, False), (CREATED, True)],
    ids=["unsigned", "a-strangers-key"],
)
def test_a_forged_envelope_published_as_admin_fails_the_live_replay_at_its_version(
    system: LocalSystem, table_id: str, stranger: bool
) -> None:
    code, report, err = _replay(system, table_id)
    assert code == 0, report["failure"]
    assert "signatures not checked" not in err  # the keyring of --data-dir

    signer = Signer.from_key("table", ed25519.Ed25519PrivateKey.generate()) if stranger else None
    version = asyncio.run(_forge_as_admin(system, table_id, signer))

    code, report, _ = _replay(system, table_id)
    assert code == 1
    failure = report["failure"]
    assert (failure["check"], failure["version"]) == ("signature", version)
    if signer is None:
        assert failure["detail"] == f"unsigned envelope at version {version}"
    else:
        assert failure["detail"] == f"unknown signing key {signer.key_id!r} at version {version}"
    code, out, _ = _run(
        "replay", "--table", table_id, "--nats", system.nats.url, "--data-dir", str(system.data_dir)
    )
    assert code == 1
    assert f"FAILED: signature check failed at table {table_id}, version {version}" in out
    # The ledger audit folds every table's log for the escrows: a finding (the forged chips as a
    # drift, or a log that does not fold), never a crash.
    code, out, err = _run("ledger", "audit", "--nats", system.nats.url, "--data-dir", str(system.data_dir))
    assert code in (1, 2), out + err
    assert "escrow drift" in out or "does not fold" in err, out + err


def test_the_live_tools_connect_only_with_credentials(system: LocalSystem, tmp_path: Path) -> None:
    url = system.nats.url
    for argv in (["replay", "--all"], ["ledger", "audit"], ["backup", "--out", str(tmp_path / "b")]):
        code, _, err = _run(*argv, "--nats", url)
        assert code == 2, err
        assert "no NATS credentials given" in err
    seed = system.data_dir / "nats" / "auth" / "pokerctl.nk"
    ca = system.data_dir / "pki" / "ca.crt"
    given = ("--nats-nkey", str(seed), "--nats-ca", str(ca))
    code, out, err = _run("backup", "--out", str(tmp_path / "given"), "--nats", url, *given)
    assert code == 0, out + err
    assert json.loads(out)["streams"]["TABLE_EVENTS"]["messages"] > 0
    code, _, err = _run("ledger", "audit", "--nats", url, "--nats-nkey", str(tmp_path / "none.nk"))
    assert code == 2
    assert "NATS_CREDENTIAL_MISSING" in err
