"""When the wallet snapshots: at least ``snapshot_every`` commands apart, and further apart as
the ledger grows (a snapshot encodes the whole state), so its cost per command stays bounded."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import zlib

from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.engine.version import ENGINE_VERSION
from openpoker.eventstore import GENESIS, Draft, Snapshot, seal
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.eventstore.signing import WALLET_WRITER, Keyring, PublicKey, Signer, check_snapshot, raw_public
from openpoker.ledger.commands import Deposit
from openpoker.ledger.events import LedgerOpened
from openpoker.ledger.store import FORMAT, SNAPSHOT_FORMAT, STREAM_ID, SUBJECT, WalletStore, to_recorded
from openpoker.services.wallet.app import WalletApp


class SnapshotSpy(InMemoryEventStore):
    """Remembers the stream version each saved snapshot covers."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: list[int] = []

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self.versions.append(snapshot.version)
        await super().save_snapshot(snapshot)


async def deposits(app: WalletApp, start: int, count: int) -> None:
    for i in range(start, start + count):
        await app.execute(Deposit(request_id=f"d{i}", player=f"p{i % 7}", amount=5))


async def test_snapshots_space_out_as_the_ledger_grows() -> None:
    events = SnapshotSpy()
    app = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await app.start()  # the LedgerOpened message is version 1
    await deposits(app, 0, 200)
    # The first after 4 messages (LedgerOpened and 3 deposits); then each gap is max(4, the
    # deposits in the ledger at the previous snapshot, i.e. its version - 1).
    expected = [4]
    while expected[-1] + max(4, expected[-1] - 1) <= 201:
        expected.append(expected[-1] + max(4, expected[-1] - 1))
    assert events.versions == expected
    assert len(expected) == 6  # not the 50 a fixed interval of 4 would have taken


async def test_a_restart_loads_the_last_snapshot_and_replays_the_tail_exactly() -> None:
    events = SnapshotSpy()
    app = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await app.start()
    await deposits(app, 0, 50)
    restarted = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await restarted.start()
    assert restarted.state.accounts == app.state.accounts
    assert restarted.state.transfers == app.state.transfers
    # A process started on a ledger of n commands waits max(every, n) commands to snapshot.
    count = len(events.versions)
    await deposits(restarted, 50, 49)
    assert len(events.versions) == count
    await deposits(restarted, 99, 1)
    assert len(events.versions) == count + 1


async def test_envelopes_and_snapshots_carry_the_engine_version_and_the_ledger_format() -> None:
    events = SnapshotSpy()
    app = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await app.start()
    await deposits(app, 0, 3)
    stored = await events.read(SUBJECT)
    versions = {(s.envelope.engine_version, s.envelope.rules_version) for s in stored}
    assert versions == {(ENGINE_VERSION, FORMAT)}
    snapshot = await events.load_snapshot(STREAM_ID)
    assert snapshot is not None
    assert snapshot.engine_version == ENGINE_VERSION
    assert json.loads(zlib.decompress(snapshot.state))["format"] == SNAPSHOT_FORMAT


async def test_a_log_and_snapshot_written_with_the_format_as_engine_version_still_load() -> None:
    # How the wallet wrote before the engine owned its version: the format in engine_version.
    events = InMemoryEventStore()
    draft = Draft(
        stream_id=STREAM_ID,
        version=1,
        command_id="open-ledger",
        owner_epoch=1,
        rules_version=FORMAT,
        engine_version=FORMAT,
        events=(to_recorded(LedgerOpened(currency="CHIPS")),),
        recorded_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    )
    opened = seal(draft, GENESIS)
    await events.append(SUBJECT, opened, expected_sequence=0)
    # A snapshot in the old tagging claims a state the log does not hold: it must not be used.
    bogus = {"state": {}, "hash": "00" * 32, "epoch": 1}
    await events.save_snapshot(
        Snapshot(
            stream_id=STREAM_ID,
            version=1,
            last_sequence=1,
            engine_version="wallet-ledger/1+zlib",
            state=zlib.compress(json.dumps(bogus).encode()),
        )
    )
    state, position = await WalletStore(events).load()
    assert (state.currency, position.version, position.hash) == ("CHIPS", 1, opened.hash)
    app = WalletApp(WalletStore(events), currency="CHIPS")
    await app.start()
    await deposits(app, 0, 1)
    assert app.balance("cash/p0")[1].credits_posted == 5


async def test_a_forged_wallet_snapshot_is_not_used_with_a_keyring() -> None:
    signer = Signer.from_key(WALLET_WRITER, ed25519.Ed25519PrivateKey.generate())
    keyring = Keyring(
        keys={
            signer.key_id: PublicKey(
                key_id=signer.key_id,
                writer=WALLET_WRITER,
                public=raw_public(signer.key.public_key()),
                created=dt.datetime(2026, 11, 28, tzinfo=dt.UTC),
            )
        }
    )

    def check(snapshot: Snapshot) -> str | None:
        problem = check_snapshot(snapshot, keyring, writer=WALLET_WRITER)
        return None if problem is None else problem.describe()

    events = SnapshotSpy()
    app = WalletApp(WalletStore(events, signer=signer), currency="CHIPS", snapshot_every=4)
    await app.start()
    await deposits(app, 0, 20)
    genuine = await events.load_snapshot(STREAM_ID)
    assert genuine is not None
    assert genuine.key_id == signer.key_id
    store = WalletStore(events, snapshot_verifier=check)
    state, _ = await store.load()
    assert store.snapshots_refused == 0
    assert state.accounts == app.state.accounts
    # A forger's snapshot: one player's balance raised, under the genuine signature.
    body = json.loads(zlib.decompress(genuine.state))
    body["state"]["accounts"]["cash/p0"][3] += 10**7  # credits posted
    forged_body = zlib.compress(json.dumps(body).encode())
    await events.save_snapshot(dataclasses.replace(genuine, state=forged_body))
    trusting, _ = await WalletStore(events).load()
    assert trusting.accounts != app.state.accounts  # what the forgery would have done unchecked
    store = WalletStore(events, snapshot_verifier=check)
    state, _ = await store.load()
    assert store.snapshots_refused == 1
    assert state.accounts == app.state.accounts
    assert state.transfers == app.state.transfers
