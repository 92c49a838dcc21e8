"""Reading the evidence from NATS JetStream (the imperative shell of the dispute replay).

* Table logs: stream ``TABLE_EVENTS``, subject ``poker.table.<partition>.<table_id>``
  (``eventstore.subjects``), read message by message with ``STREAM.MSG.GET`` (next by subject)
  so each message's ``Nats-Msg-Id`` header comes with it.
* Revealed seeds: stream ``RNG_AUDIT``, subject ``poker.audit.rng.<table_id>``, written by the
  dealer (``services.dealer.audit``); the first record per hand counts.
* The wallet's ledger: stream ``WALLET_EVENTS``, subject ``poker.wallet.ledger``.

Live: a ``NatsTarget``, the server and ``pokerctl``'s credentials there (``pokerctl.natsopts``;
a bare URL is an open server). Offline: ``offline_server(data_dir)`` copies the folder's
``jetstream/`` store (``DIR/nats/jetstream`` as ``pokerctl up``/``demo`` write it, or
``DIR/jetstream``) to a temporary folder, starts a private nats-server on it on a free loopback
port and stops it afterwards; the original folder is never opened by a server. The private server
takes one user, whose seed is made for it in the temporary folder (``natsauth.private_server_auth``):
another process on the machine cannot read the copy while it runs, and the data folder's own
credentials are not needed (a bare ``jetstream/`` folder has none).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from openpoker.dispute.evidence import LoggedEnvelope, RevealRecord, WalletHand, wallet_hands
from openpoker.eventstore import Envelope, verify_chain
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.jetstream import MSG_ID_HEADER, JetStreamEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.eventstore.subjects import table_subject
from openpoker.ledger.logcheck import read_ledger
from openpoker.ledger.store import from_recorded as wallet_event
from openpoker.shell import natsauth
from openpoker.shell.natsconn import NatsCredentials, NatsTarget
from openpoker.shell.natsproc import NatsServer

RNG_AUDIT_STREAM = "RNG_AUDIT"  # services.dealer.audit.RNG_AUDIT
RNG_AUDIT_PREFIX = "poker.audit.rng"


class EvidenceUnreadable(RuntimeError):
    """The logs could not be read at all (no server, no stream, no such table)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    table_id: str
    log: tuple[LoggedEnvelope, ...]
    reveals: dict[str, RevealRecord]
    wallet: dict[tuple[str, int], WalletHand]
    wallet_chain_problem: str = ""  # the ledger's hash chain is broken: how
    wallet_log: tuple[Envelope, ...] = ()  # the ledger's envelopes (their signatures are checked)


async def _quiet(_: Exception) -> None:
    return None  # nats-py logs each failed connection attempt; the caller reports once


# A secure NATS refuses an anonymous connection; this says how to give credentials.
NO_CREDENTIALS = (
    "no NATS credentials given: add --data-dir DATA (the system's nats/auth/<identity>.nk and "
    "pki/ca.crt), or --nats-nkey FILE and --nats-ca FILE, or set POKER_NATS_NKEY and POKER_NATS_CA"
)


async def connect(target: NatsTarget | str, *, wait: float = 5.0) -> Client:
    """A connection to ``target`` (a bare URL: anonymous); ``EvidenceUnreadable`` if refused."""
    target = NatsTarget.of(target)
    try:
        return await target.connect(
            connect_timeout=wait,
            allow_reconnect=False,
            max_reconnect_attempts=1,  # 0 would mean "forever" in nats-py
            reconnect_time_wait=0.1,
            error_cb=_quiet,
        )
    except Exception as exc:
        hint = f" ({NO_CREDENTIALS})" if target.credentials is None else ""
        raise EvidenceUnreadable(f"cannot connect to {target.url}: {exc}{hint}") from exc


async def table_ids(js: JetStreamContext) -> list[str]:
    """Every table with a log, in order of creation (first message)."""
    try:
        info = await js.stream_info(TABLE_EVENTS.name, subjects_filter="poker.table.>")
    except NotFoundError:
        raise EvidenceUnreadable(f"no stream {TABLE_EVENTS.name}: no table was ever created") from None
    firsts: list[tuple[int, str]] = []
    for subject in sorted(info.state.subjects or {}):
        raw = await js.get_msg(TABLE_EVENTS.name, seq=1, subject=subject, next=True)
        firsts.append((int(raw.seq or 0), subject.rsplit(".", 1)[1]))
    return [t for _, t in sorted(firsts)]


async def read_table_log(js: JetStreamContext, table_id: str) -> tuple[LoggedEnvelope, ...]:
    subject = table_subject(table_id)
    out: list[LoggedEnvelope] = []
    seq = 0
    while True:
        try:
            raw = await js.get_msg(TABLE_EVENTS.name, seq=seq + 1, subject=subject, next=True)
        except NotFoundError:
            break
        seq = int(raw.seq or seq + 1)
        headers = raw.headers or {}
        try:
            envelope = envelope_codec.decode(raw.data or b"")
        except Exception as exc:  # protobuf's DecodeError and friends
            raise EvidenceUnreadable(f"table {table_id}: message {seq} is not an envelope: {exc}") from exc
        out.append(
            LoggedEnvelope(envelope=envelope, sequence=seq, msg_id=str(headers.get(MSG_ID_HEADER, "")))
        )
    return tuple(out)


async def read_reveals(js: JetStreamContext, table_id: str) -> dict[str, RevealRecord]:
    subject = f"{RNG_AUDIT_PREFIX}.{table_id}"
    out: dict[str, RevealRecord] = {}
    seq = 0
    while True:
        try:
            raw = await js.get_msg(RNG_AUDIT_STREAM, seq=seq + 1, subject=subject, next=True)
        except NotFoundError:  # no (more) records, or no audit stream yet
            break
        seq = int(raw.seq or seq + 1)
        record = reveal_record(raw.data or b"", sequence=seq, table_id=table_id)
        out.setdefault(record.hand_id, record)
    return out


def reveal_record(data: bytes, *, sequence: int, table_id: str) -> RevealRecord:
    """One rng audit record (a revealed seed), as stored on ``RNG_AUDIT``."""
    try:
        doc = json.loads(data)
        return RevealRecord(
            table_id=str(doc["table_id"]),
            hand_id=str(doc["hand_id"]),
            hand_number=int(doc["hand_number"]),
            version=str(doc["algorithm_version"]),
            deck_size=int(doc["deck_size"]),
            commitment=str(doc["commitment"]),
            seed=bytes.fromhex(str(doc["seed"])),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise EvidenceUnreadable(f"audit record {sequence} of table {table_id} is malformed: {exc}") from exc


async def read_wallet(
    js: JetStreamContext,
) -> tuple[dict[tuple[str, int], WalletHand], str, tuple[Envelope, ...]]:
    """The ledger's hands, what is wrong with its hash chain ("" when intact), its envelopes."""
    try:
        await js.stream_info(WALLET_EVENTS.name)
    except NotFoundError:
        return {}, "", ()  # no ledger: every settlement check will say so
    store = JetStreamEventStore(js, stream=WALLET_EVENTS.name)
    # Up to the first foreign or corrupt message, which is the problem reported.
    checked = await read_ledger(store)
    stored = checked.stored
    chain = verify_chain(s.envelope for s in stored)
    problem = "" if chain.ok else f"at its version {chain.first_broken_version}: {chain.problem}"
    if checked.finding is not None:
        problem = f"at its version {checked.finding.version}: {checked.finding.describe()}"
    hands = wallet_hands(wallet_event(r) for s in stored for r in s.envelope.events)
    return hands, problem, tuple(s.envelope for s in stored)


async def read_evidence(target: NatsTarget | str, tables: list[str] | None) -> list[Evidence]:
    """The evidence of ``tables`` (``None``: every table) from the server ``target``."""
    target = NatsTarget.of(target)
    url = target.url
    nc = await connect(target)
    try:
        js = nc.jetstream()
        known = await table_ids(js)
        wanted = known if tables is None else tables
        for t in wanted:
            if t not in known:
                raise EvidenceUnreadable(f"no log of table {t!r} at {url}")
        wallet, wallet_problem, wallet_log = await read_wallet(js)
        return [
            Evidence(
                table_id=t,
                log=await read_table_log(js, t),
                reveals=await read_reveals(js, t),
                wallet=wallet,
                wallet_chain_problem=wallet_problem,
                wallet_log=wallet_log,
            )
            for t in wanted
        ]
    finally:
        await nc.close()


def store_folder(data_dir: Path) -> Path:
    """The folder holding ``jetstream/``: DIR/nats (a pokerctl data folder) or DIR itself."""
    for candidate in (data_dir / "nats", data_dir):
        if (candidate / "jetstream").is_dir():
            return candidate
    raise EvidenceUnreadable(f"no jetstream/ store under {data_dir} or {data_dir / 'nats'}")


@contextmanager
def offline_server(data_dir: Path, *, name: str = "dispute-replay") -> Iterator[NatsTarget]:
    """A private nats-server on a temporary copy of ``data_dir``'s store; yields it with the
    credentials of its one user."""
    source = store_folder(data_dir)
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
        copy = Path(tmp) / "nats"
        shutil.copytree(source / "jetstream", copy / "jetstream")
        config, seed = natsauth.private_server_auth(Path(tmp))
        server = NatsServer(data_dir=copy, name=name, config_file=config)
        server.start()
        try:
            yield NatsTarget(server.url, NatsCredentials(name=natsauth.POKERCTL, seed=seed))
        finally:
            server.stop()
