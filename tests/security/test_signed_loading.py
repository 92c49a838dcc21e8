"""The services verify every envelope's signature as they load it (``POKER_SIGNING_KEYS``), on a
running secure system (``LocalSystem(secure=True)``): a forged but well-formed envelope (the
chain whole, events that fold, unsigned or signed by a stranger's key) published with the admin
identity on the wallet's and on one table's subject quarantines that log after a restart
(writes refused ``LOG_QUARANTINED``, problem ``rejected``; balances and the other tables
unchanged), and the dealer stops driving that table. A foreign envelope under a table's next
message id is not taken for the table's own write. Rotating a writer's key: new envelopes carry
the new key id, the old ones still verify."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.engine.table_events import ChipsAdded
from openpoker.eventstore import Envelope, seal
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.jetstream import MSG_ID_HEADER, JetStreamEventStore
from openpoker.eventstore.keyfiles import keyring_path
from openpoker.eventstore.signing import Signer
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.eventstore.subjects import table_subject
from openpoker.ledger.commands import Deposit
from openpoker.ledger.decider import decide, fold
from openpoker.ledger.store import SUBJECT as WALLET_SUBJECT
from openpoker.ledger.store import from_recorded as wallet_event
from openpoker.ledger.store import to_recorded as wallet_recorded
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import rich_error
from openpoker.tablelog.store import to_recorded
from tests.helpers.forgery import next_draft
from tests.helpers.secure import Calls, token
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

CONFIG = table_config("holdem", "nl", clock_ms=200)
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"


@pytest.fixture(autouse=True)
def _no_keyring_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POKER_SIGNING_KEYS", raising=False)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


async def _last(js: Any, stream: str, subject: str) -> tuple[int, Envelope]:
    raw = await js.get_last_msg(stream, subject)
    return int(raw.seq), envelope_codec.decode(raw.data)


async def _publish(
    js: Any, stream: str, subject: str, envelope: Envelope, *, msg_id: str, after: int | None
) -> int:
    headers = {MSG_ID_HEADER: msg_id}
    if after is not None:
        headers[EXPECTED_LAST_SUBJECT_SEQUENCE] = str(after)
    ack = await js.publish(subject, envelope_codec.encode(envelope), stream=stream, headers=headers)
    assert not ack.duplicate
    return int(ack.seq)


async def _create(calls: Calls, *tables: str) -> None:
    for t in tables:
        await calls.staff_table.CreateTable(
            tpb.CreateTableRequest(request_id=f"create-{t}", table_id=t, config=CONFIG), timeout=5
        )


async def _deposit(calls: Calls, player: str, amount: int = 10_000) -> None:
    await calls.staff_wallet.Deposit(
        wpb.DepositRequest(request_id=f"dep-{player}-{amount}", player=player, amount=amount), timeout=5
    )


async def _join(calls: Calls, system: LocalSystem, player: str, table: str) -> None:
    """Join, waiting out the lease of a table-service instance that was just restarted."""
    deadline = time.monotonic() + 20
    while True:
        try:
            await _join_once(calls, system, player, table)
            return
        except grpc.RpcError as exc:
            if rich_error(exc).reason != "NOT_OWNER" or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.2)


async def _join_once(calls: Calls, system: LocalSystem, player: str, table: str) -> None:
    await calls.table.JoinTable(
        tpb.JoinTableRequest(
            request_id=f"join-{player}-{table}",
            table=f"tables/{table}",
            buy_in=buy_in_for(CONFIG),
            post_choice=tpb.POST_CHOICE_POST_NOW,
        ),
        timeout=5,
        metadata=token(system, player),
    )


async def _seats(calls: Calls, table: str) -> dict[str, int]:
    got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{table}"), timeout=5)
    return {s.player_id: s.stack for s in got.table.seats if s.player_id}


async def _balance(calls: Calls, player: str) -> int:
    got = await calls.staff_wallet.GetBalance(wpb.GetBalanceRequest(account=f"cash/{player}"), timeout=5)
    return int(got.balance.balance)


def _quarantined(caught: pytest.ExceptionInfo[grpc.RpcError]) -> dict[str, str]:
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "LOG_QUARANTINED")
    return dict(err.metadata)


async def _logged(path: Path, *needles: str, within: float = 10.0) -> None:
    """Wait until one line of the JSON log at ``path`` holds every needle."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(
            all(n in line for n in needles)
            for line in (await asyncio.to_thread(path.read_text, errors="replace")).splitlines()
        ):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no line of {path} holds {needles}")


def test_forged_envelopes_on_a_table_and_the_wallet_quarantine_them_after_a_restart(tmp_path: Path) -> None:
    stranger = Signer.from_key("table", ed25519.Ed25519PrivateKey.generate())
    with local_system(tmp_path / "data", secure=True) as system:

        async def go() -> None:
            calls = Calls(system)
            admin = await system.connect_nats("admin")
            try:
                js = admin.jetstream()
                await _create(calls, "sig-a", "sig-b")
                for player in ("ann", "bob", "cat"):
                    await _deposit(calls, player)
                await _join(calls, system, "ann", "sig-a")
                seats_a = await _seats(calls, "sig-a")
                (seat,) = [
                    s.seat
                    for s in (
                        await calls.staff_table.GetTable(tpb.GetTableRequest(name="tables/sig-a"), timeout=5)
                    ).table.seats
                    if s.player_id == "ann"
                ]

                # A table: chips for ann, chained onto the last envelope, signed by a stranger.
                subject = table_subject("sig-a")
                after, last = await _last(js, TABLE_EVENTS.name, subject)
                chips = (to_recorded(ChipsAdded(seat=seat - 1, amount=1_000_000)),)
                forged = seal(next_draft(last, chips), last.hash, signer=stranger)
                sequence = await _publish(
                    js, TABLE_EVENTS.name, subject, forged, msg_id="forged-table", after=after
                )
                # The dealer, following the log live, stops driving that table.
                await _logged(
                    system.processes["dealer"].log_path, '"log.corrupt"', '"sig-a"', "unknown signing key"
                )
                await system.restart("table")
                with pytest.raises(grpc.RpcError) as caught:
                    await _join(calls, system, "bob", "sig-a")
                assert _quarantined(caught) == {
                    "stream": "sig-a",
                    "sequence": str(sequence),
                    "problem": "rejected",
                }
                await _logged(system.processes["table"].log_path, '"log.corrupt"', "unknown signing key")
                assert await _seats(calls, "sig-a") == seats_a  # the good prefix, no forged chips
                await _join(calls, system, "bob", "sig-b")  # the other table plays on
                assert await _seats(calls, "sig-b") == {"bob": buy_in_for(CONFIG)}

                # The wallet: a deposit to mallory, events the ledger folds, unsigned.
                balances = {p: await _balance(calls, p) for p in ("ann", "bob", "cat")}
                assert balances["bob"] == 10_000 - buy_in_for(CONFIG)  # the refused join refunded
                store = JetStreamEventStore(js, stream=WALLET_EVENTS.name)
                ledger = await store.read(WALLET_SUBJECT)
                state = fold(wallet_event(r) for s in ledger for r in s.envelope.events)
                decision = decide(state, Deposit(request_id="forged-dep", player="mallory", amount=1_000_000))
                events = tuple(wallet_recorded(e) for e in decision.events)
                tip = ledger[-1]
                forged_dep = seal(next_draft(tip.envelope, events), tip.envelope.hash)
                wallet_seq = await _publish(
                    js,
                    WALLET_EVENTS.name,
                    WALLET_SUBJECT,
                    forged_dep,
                    msg_id="forged-wallet",
                    after=tip.sequence,
                )
                await system.restart("wallet")
                with pytest.raises(grpc.RpcError) as caught:
                    await _deposit(calls, "ann", 5)
                quarantine = {"stream": "wallet", "sequence": str(wallet_seq), "problem": "rejected"}
                assert _quarantined(caught) == quarantine
                await _logged(system.processes["wallet"].log_path, '"log.corrupt"', "unsigned envelope")
                assert {p: await _balance(calls, p) for p in balances} == balances
                with pytest.raises(grpc.RpcError):  # never folded: mallory has no account
                    await _balance(calls, "mallory")
            finally:
                await admin.close()
                await calls.close()

        asyncio.run(go())


def test_a_foreign_envelope_under_a_tables_next_message_id_is_not_its_write(tmp_path: Path) -> None:
    """Published first under the id the table's next write will carry, a forged envelope makes
    that write a duplicate ack; it does not count as written, and the table is quarantined."""
    with local_system(tmp_path / "data", secure=True) as system:

        async def go() -> None:
            calls = Calls(system)
            admin = await system.connect_nats("admin")
            try:
                js = admin.jetstream()
                await _create(calls, "dup-a", "dup-b")
                for player in ("ann", "bob"):
                    await _deposit(calls, player)
                await _join(calls, system, "ann", "dup-a")
                subject = table_subject("dup-a")
                _, last = await _last(js, TABLE_EVENTS.name, subject)
                forged = seal(next_draft(last, (to_recorded(ChipsAdded(seat=0, amount=5)),)), last.hash)
                sequence = await _publish(
                    js, TABLE_EVENTS.name, subject, forged, msg_id=forged.msg_id, after=None
                )
                with pytest.raises(grpc.RpcError) as caught:
                    await _join(calls, system, "bob", "dup-a")
                expected = {"stream": "dup-a", "sequence": str(sequence), "problem": "not our envelope"}
                assert _quarantined(caught) == expected
                assert await _balance(calls, "bob") == 10_000  # refunded
                assert set(await _seats(calls, "dup-a")) == {"ann"}
                await _join(calls, system, "bob", "dup-b")
            finally:
                await admin.close()
                await calls.close()

        asyncio.run(go())


def test_a_rotated_key_signs_new_envelopes_and_replay_verifies_old_and_new(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with local_system(data, secure=True) as system:

        async def go() -> None:
            calls = Calls(system)
            nc = await system.connect_nats()
            try:
                js = nc.jetstream()
                await _create(calls, "rot-a")
                await _deposit(calls, "ann")
                await _deposit(calls, "bob")
                _, before = await _last(js, TABLE_EVENTS.name, table_subject("rot-a"))
                _, ledger_before = await _last(js, WALLET_EVENTS.name, WALLET_SUBJECT)
                for writer in ("table", "wallet"):
                    code, out, err = _run(
                        "keys", "rotate-signing", "--data-dir", str(data), "--writer", writer
                    )
                    assert code == 0, err
                    rotated = json.loads(out)
                    assert rotated["restart"] == writer
                    old = before if writer == "table" else ledger_before
                    assert rotated["keys"] == [old.key_id, rotated["key_id"]]
                    assert f"restart the {writer} service" in err
                    await system.restart(writer, kill=False)
                    if writer == "table":
                        await _join(calls, system, "ann", "rot-a")
                        _, after = await _last(js, TABLE_EVENTS.name, table_subject("rot-a"))
                    else:
                        await _deposit(calls, "ann", 7)
                        _, after = await _last(js, WALLET_EVENTS.name, WALLET_SUBJECT)
                    assert after.key_id == rotated["key_id"] != old.key_id
                # The dealer, not restarted, folds envelopes signed with the new key: it starts
                # a hand once a second player sits down.
                await _join(calls, system, "bob", "rot-a")
                deadline = time.monotonic() + 30
                while True:
                    got = await calls.staff_table.GetTable(
                        tpb.GetTableRequest(name="tables/rot-a"), timeout=5
                    )
                    if got.table.current_hand.hand_id or got.table.hands_played:
                        break
                    assert time.monotonic() < deadline, "the dealer started no hand at rot-a"
                    await asyncio.sleep(0.1)
            finally:
                await nc.close()
                await calls.close()

        asyncio.run(go())
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    keys = str(keyring_path(data))
    code, out, err = _run("replay", "--all", "--data-dir", str(copy), "--signing-keys", keys)
    assert code == 0, out + err
    code, out, err = _run("ledger", "audit", "--data-dir", str(copy), "--signing-keys", keys)
    assert code == 0, out + err
