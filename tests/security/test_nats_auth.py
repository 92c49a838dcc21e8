"""NATS authentication, TLS and least privilege against a real nats-server run with the config
``pokerctl up`` writes (``shell.natsauth``): who may connect, and what each identity may publish,
read and never do (delete, purge or create a stream, write another's subjects or bucket)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import nkeys
import pytest
from nats.aio.client import Client
from nats.js.errors import NotFoundError

from openpoker.eventstore.errors import StreamUnavailable
from openpoker.eventstore.streams import SETUP_BUCKETS, SETUP_STREAMS, StreamSettings, ensure_stream
from openpoker.ledger.store import WALLET_SNAPSHOTS
from openpoker.pokerctl import natssetup
from openpoker.pokerctl.backup_io import EVIDENCE_STREAMS
from openpoker.shell import natsauth, natsconn, pki
from openpoker.shell.natsconn import NatsCredentials
from openpoker.shell.natsproc import NatsServer
from openpoker.tablelog.store import HANDS_BUCKET

ALL_STREAMS = [s.name for s in SETUP_STREAMS] + [WALLET_SNAPSHOTS.name]
ALL_STREAMS += [natsauth.kv_stream(b.bucket) for b in SETUP_BUCKETS]
# A subject each identity writes, and a bucket each one owns.
OWN_SUBJECT = {
    "table": "poker.table.7.t-own",
    "wallet": "poker.wallet.ledger",
    "dealer": "poker.audit.rng.t-own",
}
OWN_BUCKET = {
    "table": "poker-leases",
    "rng": "RNG_SHUFFLES",
    "dealer": "poker-dealer",
}
SERVICES = natsauth.SERVICES


@dataclass(frozen=True, slots=True)
class Secured:
    url: str
    data: Path

    def credentials(self, name: str) -> NatsCredentials:
        return NatsCredentials.local(name, self.data)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    data = tmp_path_factory.mktemp("nats-auth")
    auth = natsauth.ensure_nats_auth(data, pki.ensure_local_pki(data))
    with NatsServer(data_dir=data / "nats", config_file=natsauth.server_config(auth)) as server:
        yield Secured(url=server.url, data=data)


class Errors:
    """What the server refused on one connection (nats-py reports ``-ERR`` to ``error_cb``)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def record(self, exc: Exception) -> None:
        self.seen.append(str(exc).lower())

    async def refused(self, subject: str, *, within: float = 5.0) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        want = subject.lower()
        while not any("permissions violation" in e and want in e for e in self.seen):
            if loop.time() > end:
                raise AssertionError(f"no permissions violation for {subject!r}; saw {self.seen}")
            await asyncio.sleep(0.02)


@pytest.fixture
async def admin(secured: Secured) -> AsyncIterator[Client]:
    await natssetup.set_up(secured.url, secured.credentials(natsauth.ADMIN))
    nc = await natsconn.connect(secured.url, secured.credentials(natsauth.ADMIN))
    yield nc
    await nc.close()


async def as_identity(secured: Secured, name: str) -> tuple[Client, Errors]:
    errors = Errors()
    nc = await natsconn.connect(
        secured.url, secured.credentials(name), error_cb=errors.record, allow_reconnect=False
    )
    return nc, errors


async def messages(admin: Client, stream: str) -> int:
    return int((await admin.jetstream().stream_info(stream)).state.messages)


async def _refused_connection(url: str, credentials: NatsCredentials) -> Exception:
    errors = Errors()
    try:
        nc = await natsconn.connect(
            url,
            credentials,
            error_cb=errors.record,
            allow_reconnect=False,
            max_reconnect_attempts=1,
            connect_timeout=3,
        )
    except Exception as exc:  # nats-py raises what the server or TLS said
        return exc
    await nc.close()
    raise AssertionError(f"connected as {credentials}")


async def test_an_anonymous_connection_is_refused(secured: Secured) -> None:
    ca = secured.data / "pki" / "ca.crt"
    exc = await _refused_connection(secured.url, NatsCredentials(name="nobody", ca=ca))
    assert "authorization" in str(exc).lower()


async def test_a_seed_the_server_does_not_know_is_refused(secured: Secured, tmp_path: Path) -> None:
    stranger = tmp_path / "stranger.nk"
    stranger.write_bytes(bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)))
    ca = secured.data / "pki" / "ca.crt"
    exc = await _refused_connection(secured.url, NatsCredentials(name="table", seed=stranger, ca=ca))
    assert "authorization" in str(exc).lower()


async def test_a_server_of_another_ca_is_not_trusted(secured: Secured, tmp_path: Path) -> None:
    other = pki.ensure_local_pki(tmp_path)
    creds = NatsCredentials(name="table", seed=secured.credentials("table").seed, ca=other.ca_cert)
    exc = await _refused_connection(secured.url, creds)
    assert "certificate" in str(exc).lower()


def test_plaintext_is_refused(secured: Secured) -> None:
    host, port = secured.url.removeprefix("nats://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        info = json.loads(sock.recv(4096).decode().removeprefix("INFO ").strip())
        assert info["tls_required"] is True
        sock.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
        answer = b""
        with contextlib.suppress(OSError):  # closed, reset or silent: never served
            while chunk := sock.recv(4096):
                answer += chunk
        assert b"PONG" not in answer


def test_seeds_are_private_and_kept(secured: Secured) -> None:
    root = secured.data / "nats" / "auth"
    assert root.stat().st_mode & 0o777 == 0o700
    before = {}
    for name in natsauth.IDENTITIES:
        seed = root / f"{name}.nk"
        assert seed.stat().st_mode & 0o777 == 0o600
        before[name] = seed.read_bytes()
    natsauth.ensure_nats_auth(secured.data, pki.ensure_local_pki(secured.data))
    assert {name: (root / f"{name}.nk").read_bytes() for name in natsauth.IDENTITIES} == before


async def test_the_admin_sets_up_every_stream_and_bucket(secured: Secured, admin: Client) -> None:
    names = {(await admin.jetstream().stream_info(stream)).config.name for stream in ALL_STREAMS}
    assert names == set(ALL_STREAMS)
    assert HANDS_BUCKET in [b.bucket for b in SETUP_BUCKETS]


async def test_each_service_writes_its_own_subjects_and_buckets(secured: Secured, admin: Client) -> None:
    for name, subject in OWN_SUBJECT.items():
        nc, _ = await as_identity(secured, name)
        try:
            ack = await nc.jetstream().publish(subject, b"own")
            assert ack.seq > 0
        finally:
            await nc.close()
    for name, bucket in OWN_BUCKET.items():
        nc, _ = await as_identity(secured, name)
        try:
            kv = await nc.jetstream().key_value(bucket)
            assert await kv.put(f"k-{name}", b"own") > 0
            assert (await kv.get(f"k-{name}")).value == b"own"
        finally:
            await nc.close()


@pytest.mark.parametrize("name", SERVICES)
async def test_no_service_publishes_another_services_subjects(
    secured: Secured, admin: Client, name: str
) -> None:
    others = {owner: subject for owner, subject in OWN_SUBJECT.items() if owner != name}
    others["wallet-snapshots"] = "poker.walletsnap.x" if name != "wallet" else "poker.snap.x"
    nc, errors = await as_identity(secured, name)
    try:
        for subject in others.values():
            await nc.publish(subject, b"forged")
            await nc.flush()
            await errors.refused(subject)
    finally:
        await nc.close()


@pytest.mark.parametrize("name", SERVICES)
async def test_no_service_writes_another_services_bucket(secured: Secured, admin: Client, name: str) -> None:
    buckets = [b.bucket for b in SETUP_BUCKETS if b.bucket not in natsauth.GRANTS[name].buckets]
    assert buckets
    nc, errors = await as_identity(secured, name)
    try:
        for bucket in buckets:
            subject = f"$KV.{bucket}.forged"
            await nc.publish(subject, b"forged")
            await nc.flush()
            await errors.refused(subject)
    finally:
        await nc.close()


@pytest.mark.parametrize("name", [*SERVICES, natsauth.POKERCTL])
async def test_no_service_deletes_purges_or_changes_a_stream(
    secured: Secured, admin: Client, name: str
) -> None:
    await admin.jetstream().publish("poker.table.1.kept", b"evidence")
    before = await messages(admin, "TABLE_EVENTS")
    nc, errors = await as_identity(secured, name)
    try:
        for stream in ALL_STREAMS:
            for call in ("PURGE", "DELETE", "UPDATE", "MSG.DELETE"):
                subject = f"$JS.API.STREAM.{call}.{stream}"
                await nc.publish(subject, b"{}")
                await nc.flush()
                await errors.refused(subject)
        created = "$JS.API.STREAM.CREATE.ROGUE"
        await nc.publish(created, json.dumps({"name": "ROGUE", "subjects": ["rogue.>"]}).encode())
        await nc.flush()
        await errors.refused(created)
    finally:
        await nc.close()
    assert await messages(admin, "TABLE_EVENTS") == before
    for stream in ALL_STREAMS:
        assert (await admin.jetstream().stream_info(stream)).config.name == stream
    with pytest.raises(NotFoundError):
        await admin.jetstream().stream_info("ROGUE")


async def test_a_service_that_may_not_create_a_missing_stream_says_so(
    secured: Secured, admin: Client
) -> None:
    nc, _ = await as_identity(secured, "wallet")
    try:
        settings = StreamSettings(name="NOT_SET_UP", subjects=("poker.wallet.none.>",))
        with pytest.raises(StreamUnavailable):
            await ensure_stream(nc.jetstream(timeout=0.5), settings, pause=0.01)
    finally:
        await nc.close()


async def test_the_wallet_cannot_read_the_table_logs(secured: Secured, admin: Client) -> None:
    nc, errors = await as_identity(secured, "wallet")
    try:
        for subject in ("$JS.API.STREAM.MSG.GET.TABLE_EVENTS", "$JS.API.CONSUMER.CREATE.TABLE_EVENTS"):
            await nc.publish(subject, b"{}")
            await nc.flush()
            await errors.refused(subject)
        await nc.subscribe("poker.table.>")
        await nc.subscribe("_INBOX.>")
        await nc.flush()
        await errors.refused("poker.table.>")
        await errors.refused("_inbox.>")
    finally:
        await nc.close()


async def test_pokerctl_reads_the_logs_and_writes_nothing(secured: Secured, admin: Client) -> None:
    await admin.jetstream().publish("poker.table.2.read-me", b"evidence")
    nc, errors = await as_identity(secured, natsauth.POKERCTL)
    try:
        got = await nc.jetstream().get_last_msg("TABLE_EVENTS", "poker.table.2.read-me")
        assert got.data == b"evidence"
        await nc.publish("poker.table.2.read-me", b"forged")
        await nc.flush()
        await errors.refused("poker.table.2.read-me")
    finally:
        await nc.close()


def test_every_granted_stream_is_one_the_admin_sets_up() -> None:
    for name, grant in natsauth.GRANTS.items():
        granted = {*grant.reads, *(natsauth.kv_stream(b) for b in grant.buckets)}
        assert granted <= set(ALL_STREAMS), name


@pytest.mark.parametrize("name", [*SERVICES, natsauth.POKERCTL])
async def test_no_reader_deletes_a_consumer(secured: Secured, admin: Client, name: str) -> None:
    """Readers create ephemeral consumers, which the server removes itself; deleting one (another
    identity's feed, say) is refused, and the consumer stays."""
    stream = natsauth.GRANTS[name].reads[0] if natsauth.GRANTS[name].reads else "TABLE_EVENTS"
    info = await admin.jetstream().add_consumer(stream, durable_name=f"kept-{name}")
    nc, errors = await as_identity(secured, name)
    try:
        subject = f"$JS.API.CONSUMER.DELETE.{stream}.{info.name}"
        await nc.publish(subject, b"")
        await nc.flush()
        await errors.refused(subject)
    finally:
        await nc.close()
    assert (await admin.jetstream().consumer_info(stream, info.name)).name == info.name
    await admin.jetstream().delete_consumer(stream, info.name)


@pytest.mark.parametrize("name", SERVICES)
async def test_an_ordered_consumer_needs_no_delete(secured: Secured, admin: Client, name: str) -> None:
    """What every reader does (an ordered consumer, read, unsubscribe) works without the grant."""
    stream = natsauth.GRANTS[name].reads[0] if natsauth.GRANTS[name].reads else None
    if stream is None:
        pytest.skip(f"{name} reads no stream")
    subject = {"TABLE_EVENTS": "poker.table.3.ordered", "WALLET_EVENTS": "poker.wallet.ledger"}[stream]
    await admin.jetstream().publish(subject, b"read-me")
    nc, errors = await as_identity(secured, name)
    try:
        sub = await nc.jetstream().subscribe(subject, stream=stream, ordered_consumer=True)
        msg = await sub.next_msg(timeout=5)
        assert msg.subject == subject
        await sub.unsubscribe()
        await nc.flush()
    finally:
        await nc.close()
    assert not [e for e in errors.seen if "permissions violation" in e], errors.seen


async def test_pokerctl_reads_every_evidence_stream_it_backs_up(secured: Secured, admin: Client) -> None:
    nc, _ = await as_identity(secured, natsauth.POKERCTL)
    try:
        for stream in EVIDENCE_STREAMS:
            assert (await nc.jetstream().stream_info(stream)).config.name == stream
    finally:
        await nc.close()
