"""``pokerctl ledger audit --backup DIR``: the same audit as against a live system, on the
ledger and table logs recorded in a backup folder (verified against its manifest first). The
parts of ``cmd_ledger.LedgerAudit``; an unreadable or changed backup is ``EvidenceUnreadable``."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from openpoker.dispute.escrow import EscrowCheck, check_tables, fold_log_checked
from openpoker.dispute.source import EvidenceUnreadable
from openpoker.eventstore import verify_chain
from openpoker.eventstore.signing import WALLET_WRITER, Keyring, first_bad_signature
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.ledger.audit import AuditReport, audit
from openpoker.ledger.store import from_recorded
from openpoker.pokerctl import backup_evidence


class Audited(NamedTuple):
    report: AuditReport
    envelopes: int
    chain_ok: bool
    chain_problem: str
    escrow: EscrowCheck
    signature_problem: str = ""  # the first envelope not signed by a wallet key of the keyring
    table_problems: tuple[str, ...] = ()  # each table log's first foreign or corrupt message


def audit_backup(
    folder: Path, *, stream: str = WALLET_EVENTS.name, keyring: Keyring | None = None
) -> Audited:
    backup = backup_evidence.load_backup(folder)
    if not backup.has(stream):
        raise EvidenceUnreadable(f"the backup at {folder} holds no stream {stream}: no ledger")
    # Up to the first foreign or corrupt message, which is reported as a finding (as live).
    checked = backup_evidence.ledger_checked(backup, stream)
    envelopes = list(checked.envelopes)
    chain = verify_chain(envelopes)
    unsigned = None if keyring is None else first_bad_signature(envelopes, keyring, writer=WALLET_WRITER)
    report, state = audit(from_recorded(r) for env in envelopes for r in env.events)
    tables = backup_evidence.table_ids(backup) if backup.has(TABLE_EVENTS.name) else []
    folded = [fold_log_checked(t, backup_evidence.table_log(backup, t)) for t in tables]
    escrow = check_tables([model for model, _ in folded], state)
    return Audited(
        report=report,
        envelopes=len(envelopes),
        chain_ok=chain.ok and checked.finding is None,
        chain_problem=chain.problem if checked.finding is None else checked.finding.describe(),
        escrow=escrow,
        signature_problem=unsigned.describe() if unsigned else "",
        table_problems=tuple(f.describe() for _, f in folded if f is not None),
    )
