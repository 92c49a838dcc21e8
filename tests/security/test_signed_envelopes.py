"""Signed envelopes on a running secure system (``LocalSystem(secure=True)``): every table and
wallet envelope is signed by its writer's key, and a forged envelope, re-sealed with the project's
own ``seal()`` so the hash chain is whole, is written into a copy of the data folder: ``pokerctl
replay`` and ``pokerctl ledger audit`` name its version with a signature finding, while the
genuine folder passes."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
import shutil
from pathlib import Path
from typing import Any

import nats
import pytest

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.dispute.source import offline_server
from openpoker.engine.table_events import ChipsAdded
from openpoker.eventstore import Draft, Envelope, RecordedEvent, seal
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.jetstream import MSG_ID_HEADER
from openpoker.eventstore.keyfiles import keyring_path, load_signer, signing_key_path
from openpoker.eventstore.signing import Signer
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.eventstore.subjects import table_subject
from openpoker.ledger.store import SUBJECT as WALLET_SUBJECT
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.shell.natsconn import NatsTarget
from openpoker.shell.natsproc import NatsServer
from openpoker.tablelog.store import to_recorded
from tests.helpers.forgery import next_draft
from tests.helpers.secure import Calls, token
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TABLE = "signed-1"
TABLE_LOG = (TABLE_EVENTS.name, table_subject(TABLE))
LEDGER = (WALLET_EVENTS.name, WALLET_SUBJECT)


@pytest.fixture(autouse=True)
def _no_keyring_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keyring each test names (or the data folder's), never one from the environment."""
    monkeypatch.delenv("POKER_SIGNING_KEYS", raising=False)


EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"


async def _play_a_hand(calls: Calls, system: Any) -> None:
    config = table_config("holdem", "nl", clock_ms=200)  # the clock folds for the idle players
    await calls.staff_table.CreateTable(
        tpb.CreateTableRequest(request_id="create", table_id=TABLE, config=config), timeout=5
    )
    for player in ("carol", "dave"):
        await calls.staff_wallet.Deposit(
            wpb.DepositRequest(request_id=f"dep-{player}", player=player, amount=10_000), timeout=5
        )
        await calls.table.JoinTable(
            tpb.JoinTableRequest(
                request_id=f"join-{player}",
                table=f"tables/{TABLE}",
                buy_in=buy_in_for(config),
                post_choice=tpb.POST_CHOICE_POST_NOW,
            ),
            timeout=5,
            metadata=token(system, player),
        )
    for _ in range(300):
        got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{TABLE}"), timeout=5)
        if got.table.hands_played >= 1 and not got.table.current_hand.hand_id:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("no hand was played to its end within 30 s")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder where a secure system played a hand, stopped (so copies are consistent)."""
    data = tmp_path_factory.mktemp("signed") / "data"
    with local_system(data, secure=True) as system:

        async def go() -> None:
            calls = Calls(system)
            try:
                await _play_a_hand(calls, system)
            finally:
                await calls.close()

        asyncio.run(go())
    return data


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _read(data: Path, stream: str, subject: str) -> list[tuple[int, Envelope]]:
    async def go(private: NatsTarget) -> list[tuple[int, Envelope]]:
        nc = await private.connect()
        try:
            js = nc.jetstream()
            out: list[tuple[int, Envelope]] = []
            seq = 0
            while True:
                try:
                    raw = await js.get_msg(stream, seq=seq + 1, subject=subject, next=True)
                except nats.js.errors.NotFoundError:
                    return out
                seq = int(raw.seq or 0)
                out.append((seq, envelope_codec.decode(raw.data or b"")))
        finally:
            await nc.close()

    with offline_server(data) as private:
        return asyncio.run(go(private))


def _forge_into_copy(
    played: Path, copy: Path, subject: tuple[str, str], forge: Any, *, signer: Signer | None = None
) -> int:
    """Copy the data folder and append to ``subject`` (stream, subject) of the copy, with a plain
    NATS connection, one envelope ``forge(last)`` re-sealed onto the last one (and signed by
    ``signer``, if any) as the service would have appended it. Returns the forged version."""
    shutil.copytree(played, copy)
    stream, name = subject
    seq, last = _read(played, stream, name)[-1]
    envelope = seal(forge(last), last.hash, signer=signer)
    _publish(copy, subject, envelope, after=seq)
    return envelope.version


def _publish(copy: Path, subject: tuple[str, str], envelope: Envelope, *, after: int) -> None:
    stream, name = subject

    async def go(url: str) -> None:
        nc = await nats.connect(url)
        try:
            headers = {MSG_ID_HEADER: envelope.msg_id, EXPECTED_LAST_SUBJECT_SEQUENCE: str(after)}
            data = envelope_codec.encode(envelope)
            ack = await nc.jetstream().publish(name, data, stream=stream, headers=headers)
            assert not ack.duplicate
        finally:
            await nc.close()

    server = NatsServer(data_dir=copy / "nats", name="forger")
    server.start()
    try:
        asyncio.run(go(server.url))
    finally:
        server.stop()


def _chips_added(last: Envelope) -> Draft:
    return next_draft(last, (to_recorded(ChipsAdded(seat=0, amount=1_000_000)),))


def _replay(folder: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = _run("replay", "--table", TABLE, "--json", "--data-dir", str(folder), *extra)
    assert code in (0, 1), err
    report: dict[str, Any] = json.loads(out)
    return code, report, err


def test_every_envelope_is_signed_and_the_genuine_folder_passes(played: Path) -> None:
    table = _read(played, *TABLE_LOG)
    ledger = _read(played, *LEDGER)
    assert table
    assert ledger
    table_key = load_signer(signing_key_path(played, "table"), "table").key_id
    wallet_key = load_signer(signing_key_path(played, "wallet"), "wallet").key_id
    assert {e.key_id for _, e in table} == {table_key}
    assert {e.key_id for _, e in ledger} == {wallet_key}
    assert all(len(e.signature) == 64 for _, e in table + ledger)

    code, report, err = _replay(played)
    assert code == 0, report["failure"]
    assert "signatures not checked" not in err
    code, out, err = _run("ledger", "audit", "--data-dir", str(played))
    assert code == 0, out
    assert "signatures not checked" not in err


def test_a_forged_table_envelope_resealed_without_the_key_fails_replay_at_its_version(
    played: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    version = _forge_into_copy(played, copy, TABLE_LOG, _chips_added)
    # The published keyring of the original folder, as the dispute desk holds it.
    code, report, _ = _replay(copy, "--signing-keys", str(keyring_path(played)))
    assert code == 1
    failure = report["failure"]
    assert failure["check"] == "signature"
    assert failure["version"] == version
    assert failure["detail"] == f"unsigned envelope at version {version}"
    code, out, _ = _run("replay", "--table", TABLE, "--data-dir", str(copy))  # the folder's keyring
    assert code == 1
    assert f"FAILED: signature check failed at table {TABLE}, version {version}" in out


def test_a_copied_signature_is_a_bad_signature_and_another_writers_key_is_named(
    played: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copied"
    shutil.copytree(played, copy)
    # A forger who copies a genuine signature onto the forged envelope.
    seq, last = _read(played, *TABLE_LOG)[-1]
    forged = seal(_chips_added(last), last.hash)
    forged = dataclasses.replace(forged, key_id=last.key_id, signature=last.signature)
    _publish(copy, TABLE_LOG, forged, after=seq)
    code, report, _ = _replay(copy, "--signing-keys", str(keyring_path(played)))
    assert code == 1
    assert report["failure"]["check"] == "signature"
    assert report["failure"]["detail"].startswith(f"bad signature at version {forged.version}")

    # The wallet's own key signing a table envelope: a genuine signature, the wrong writer.
    wallet = load_signer(signing_key_path(played, "wallet"), "wallet")
    crossed = tmp_path / "crossed"
    version = _forge_into_copy(played, crossed, TABLE_LOG, _chips_added, signer=wallet)
    code, report, _ = _replay(crossed, "--signing-keys", str(keyring_path(played)))
    assert code == 1
    assert report["failure"]["check"] == "signature"
    assert report["failure"]["detail"] == (
        f"key {wallet.key_id!r} of writer 'wallet' signed version {version} of a table stream"
    )


def test_a_forged_wallet_envelope_fails_the_ledger_audit_and_the_replay(played: Path, tmp_path: Path) -> None:
    def deposit_events(last: Envelope) -> Draft:
        return next_draft(last, last.events)  # any content: the signature is what is missing

    copy = tmp_path / "ledger"
    version = _forge_into_copy(played, copy, LEDGER, deposit_events)
    keys = str(keyring_path(played))
    code, out, err = _run("ledger", "audit", "--data-dir", str(copy), "--signing-keys", keys)
    assert code == 1, err
    assert f"BREACH: signature: unsigned envelope at version {version}" in out
    code, out, _ = _run("ledger", "audit", "--json", "--data-dir", str(copy), "--signing-keys", keys)
    assert json.loads(out)["signature_problem"] == f"unsigned envelope at version {version}"
    code, report, _ = _replay(copy, "--signing-keys", keys)
    assert code == 1
    assert report["failure"]["check"] == "signature"
    assert report["failure"]["detail"] == f"the wallet's ledger: unsigned envelope at version {version}"


def test_a_backup_of_a_forged_folder_fails_the_same_checks(played: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ledger"
    version = _forge_into_copy(played, copy, LEDGER, lambda last: next_draft(last, last.events))
    backup = tmp_path / "backup"
    code, _, err = _run("backup", "--out", str(backup), "--data-dir", str(copy))
    assert code == 0, err
    keys = str(keyring_path(played))
    code, out, err = _run("ledger", "audit", "--backup", str(backup), "--signing-keys", keys)
    assert code == 1, err
    assert f"BREACH: signature: unsigned envelope at version {version}" in out
    code, out, err = _run(
        "replay", "--table", TABLE, "--json", "--backup", str(backup), "--signing-keys", keys
    )
    assert code == 1, err
    assert (
        json.loads(out)["failure"]["detail"] == f"the wallet's ledger: unsigned envelope at version {version}"
    )
    # The genuine folder's backup passes both.
    genuine = tmp_path / "genuine"
    assert _run("backup", "--out", str(genuine), "--data-dir", str(played))[0] == 0
    assert _run("ledger", "audit", "--backup", str(genuine), "--signing-keys", keys)[0] == 0
    assert _run("replay", "--table", TABLE, "--backup", str(genuine), "--signing-keys", keys)[0] == 0


def test_an_unreadable_keyring_is_an_error_not_a_pass(played: Path, tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    code, _, err = _run("replay", "--table", TABLE, "--data-dir", str(played), "--signing-keys", str(missing))
    assert code == 2
    assert "signing keyring" in err
    code, _, err = _run("ledger", "audit", "--data-dir", str(played), "--signing-keys", str(missing))
    assert code == 2
    assert "signing keyring" in err


# Events neither the ledger nor a table folds: a foreign message's.
FOREIGN_EVENTS = (RecordedEvent(type="Bogus", payload=b'{"type":"Bogus"}'),)


def test_a_backup_holding_foreign_messages_is_a_finding_not_a_traceback(played: Path, tmp_path: Path) -> None:
    """Well-formed envelopes whose events do not fold, on the ledger and on the table's log, in
    a backup: both audit tools name them (as the live ones do) and exit 1."""
    copy = tmp_path / "foreign"
    ledger_version = _forge_into_copy(played, copy, LEDGER, lambda last: next_draft(last, FOREIGN_EVENTS))
    seq, last = _read(copy, *TABLE_LOG)[-1]
    forged = seal(next_draft(last, FOREIGN_EVENTS), last.hash)
    _publish(copy, TABLE_LOG, forged, after=seq)
    backup = tmp_path / "backup"
    code, _, err = _run("backup", "--out", str(backup), "--data-dir", str(copy))
    assert code == 0, err
    keys = str(keyring_path(played))
    code, out, err = _run("ledger", "audit", "--backup", str(backup), "--signing-keys", keys)
    assert code == 1, out + err
    assert "Traceback" not in out + err
    assert "BREACH: hash chain: events do not fold at stream sequence" in out
    assert f"(version {ledger_version}) of wallet" in out
    assert "BREACH: table log: events do not fold at stream sequence" in out
    assert f"(version {forged.version}) of {TABLE}" in out
    code, out, err = _run(
        "replay", "--table", TABLE, "--json", "--backup", str(backup), "--signing-keys", keys
    )
    assert code == 1, out + err
    assert "Traceback" not in out + err
    failure = json.loads(out)["failure"]
    assert failure["version"] == forged.version, failure
