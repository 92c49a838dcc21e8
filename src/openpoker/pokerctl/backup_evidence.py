"""The dispute evidence read from a backup folder instead of a server (``--backup DIR`` of
``pokerctl replay`` and ``pokerctl ledger audit``).

The same values ``dispute.source`` reads from NATS, built from the backup's recorded messages:
table logs (``TABLE_EVENTS``, one subject per table, tables in order of their first message),
revealed seeds (``RNG_AUDIT``, the first record per hand counts) and the ledger
(``WALLET_EVENTS``, subject ``poker.wallet.ledger``). Sequences are the ones recorded at backup
time, so reports name the same sequences as against the live system. The backup is verified
against its manifest before anything is read (``backup_format.verify_backup``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from openpoker.dispute.evidence import LoggedEnvelope, RevealRecord, WalletHand, wallet_hands
from openpoker.dispute.source import Evidence, EvidenceUnreadable, reveal_record
from openpoker.eventstore import Envelope, verify_chain
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.envelope import StoredEnvelope
from openpoker.eventstore.errors import CorruptMessage
from openpoker.eventstore.jetstream import MSG_ID_HEADER
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.eventstore.subjects import table_subject
from openpoker.ledger.logcheck import CheckedLedger, check_ledger
from openpoker.ledger.store import SUBJECT as WALLET_SUBJECT
from openpoker.ledger.store import from_recorded as wallet_event
from openpoker.pokerctl.backup_format import (
    Backup,
    BackupMessage,
    BackupTampered,
    BackupUnreadable,
    verify_backup,
)
from openpoker.pokerctl.backup_io import RNG_AUDIT_STREAM

TABLE_PREFIX = "poker.table."
RNG_AUDIT_PREFIX = "poker.audit.rng"


def table_ids(backup: Backup) -> list[str]:
    """Every table with a log, in order of its first message."""
    if not backup.has(TABLE_EVENTS.name):
        raise EvidenceUnreadable(f"the backup holds no {TABLE_EVENTS.name}: no table was ever created")
    seen: dict[str, None] = {}
    for message in backup.stream(TABLE_EVENTS.name):
        if message.subject.startswith(TABLE_PREFIX):
            seen.setdefault(message.subject.rsplit(".", 1)[1], None)
    return list(seen)


def _on(messages: Iterable[BackupMessage], subject: str) -> list[BackupMessage]:
    return [m for m in messages if m.subject == subject]


def table_log(backup: Backup, table_id: str) -> tuple[LoggedEnvelope, ...]:
    out: list[LoggedEnvelope] = []
    for m in _on(backup.stream(TABLE_EVENTS.name), table_subject(table_id)):
        try:
            envelope = envelope_codec.decode(m.data)
        except Exception as exc:  # protobuf's DecodeError and friends
            raise EvidenceUnreadable(f"table {table_id}: message {m.seq} is not an envelope: {exc}") from exc
        out.append(LoggedEnvelope(envelope=envelope, sequence=m.seq, msg_id=m.headers.get(MSG_ID_HEADER, "")))
    return tuple(out)


def reveals(backup: Backup, table_id: str) -> dict[str, RevealRecord]:
    out: dict[str, RevealRecord] = {}
    for m in _on(backup.stream(RNG_AUDIT_STREAM), f"{RNG_AUDIT_PREFIX}.{table_id}"):
        record = reveal_record(m.data, sequence=m.seq, table_id=table_id)
        out.setdefault(record.hand_id, record)
    return out


def ledger_checked(backup: Backup, stream: str = WALLET_EVENTS.name) -> CheckedLedger:
    """The ledger up to its first foreign or corrupt message and that message's finding, as the
    live audit reads it (``ledger.logcheck``): a finding, never an exception."""
    stored: list[StoredEnvelope] = []
    unreadable = None
    for m in _on(backup.stream(stream), WALLET_SUBJECT):
        try:
            envelope = envelope_codec.decode(m.data)
        except Exception as exc:  # protobuf's DecodeError and friends
            unreadable = CorruptMessage(subject=m.subject, sequence=m.seq, problem=str(exc))
            break
        stored.append(StoredEnvelope(envelope=envelope, sequence=m.seq))
    return check_ledger(stored, unreadable=unreadable)


def ledger_envelopes(backup: Backup, stream: str = WALLET_EVENTS.name) -> list[Envelope]:
    """The ledger's envelopes up to its first foreign or corrupt message."""
    return list(ledger_checked(backup, stream).envelopes)


def wallet(backup: Backup) -> tuple[dict[tuple[str, int], WalletHand], str]:
    """The ledger's hands, and what is wrong with its hash chain ("" when intact): its first
    foreign or corrupt message, named as the live replay names it (``dispute.source``)."""
    if not backup.has(WALLET_EVENTS.name):
        return {}, ""  # no ledger: every settlement check will say so
    checked = ledger_checked(backup)
    envelopes = checked.envelopes
    chain = verify_chain(envelopes)
    problem = "" if chain.ok else f"at its version {chain.first_broken_version}: {chain.problem}"
    if checked.finding is not None:
        problem = f"at its version {checked.finding.version}: {checked.finding.describe()}"
    return wallet_hands(wallet_event(r) for env in envelopes for r in env.events), problem


def read_evidence(backup: Backup, tables: list[str] | None, *, folder: Path) -> list[Evidence]:
    """The evidence of ``tables`` (``None``: every table), as ``dispute.source.read_evidence``."""
    known = table_ids(backup)
    wanted = known if tables is None else tables
    for t in wanted:
        if t not in known:
            raise EvidenceUnreadable(f"no log of table {t!r} in the backup at {folder}")
    hands, problem = wallet(backup)
    # The ledger's envelopes, whose signatures the replay checks against a keyring.
    ledger = tuple(ledger_envelopes(backup)) if backup.has(WALLET_EVENTS.name) else ()
    return [
        Evidence(
            table_id=t,
            log=table_log(backup, t),
            reveals=reveals(backup, t),
            wallet=hands,
            wallet_chain_problem=problem,
            wallet_log=ledger,
        )
        for t in wanted
    ]


def load_backup(folder: Path) -> Backup:
    """The backup at ``folder``, verified against its manifest; a refusal is unreadable evidence."""
    try:
        return verify_backup(folder)
    except (BackupUnreadable, BackupTampered) as exc:
        raise EvidenceUnreadable(f"{exc.reason}: {exc}") from exc


def load_evidence(folder: Path, tables: list[str] | None) -> list[Evidence]:
    return read_evidence(load_backup(folder), tables, folder=folder)
