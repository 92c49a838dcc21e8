"""The wallet's log read for audits: every envelope up to the first foreign or corrupt message,
and that message's finding (``eventstore.loading``), so an audit reports it instead of ending
in a traceback on events that do not decode or fold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openpoker.eventstore import GENESIS, Envelope, EventStore, StoredEnvelope
from openpoker.eventstore.errors import CorruptMessage
from openpoker.eventstore.loading import (
    CheckedRead,
    Finding,
    Tip,
    Verifier,
    check_stored,
    fold_finding,
    read_checked,
)
from openpoker.ledger.decider import LedgerState, fold
from openpoker.ledger.store import STREAM_ID, SUBJECT, from_recorded


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedLedger:
    stored: tuple[StoredEnvelope, ...]  # the good prefix, in order
    finding: Finding | None

    @property
    def envelopes(self) -> tuple[Envelope, ...]:
        return tuple(s.envelope for s in self.stored)


async def read_ledger(
    events: EventStore, *, subject: str = SUBJECT, verifier: Verifier | None = None
) -> CheckedLedger:
    read = await read_checked(
        events, subject, stream=STREAM_ID, tip=Tip(version=0, hash=GENESIS), verifier=verifier
    )
    return _folded(read, subject)


def check_ledger(
    stored: Sequence[StoredEnvelope], *, subject: str = SUBJECT, unreadable: CorruptMessage | None = None
) -> CheckedLedger:
    """``read_ledger`` of envelopes read elsewhere (a backup); ``unreadable``: the read stopped at
    a message that does not decode, after ``stored``."""
    read = check_stored(
        stored, stream=STREAM_ID, subject=subject, tip=Tip(version=0, hash=GENESIS), unreadable=unreadable
    )
    return _folded(read, subject)


def _folded(read: CheckedRead, subject: str) -> CheckedLedger:
    state = LedgerState()
    for index, stored in enumerate(read.good):
        try:
            fold((from_recorded(r) for r in stored.envelope.events), state)
        except Exception as exc:  # any failure of foreign events to decode or fold is a finding
            finding = fold_finding(stored, stream=STREAM_ID, subject=subject, exc=exc)
            return CheckedLedger(stored=read.good[:index], finding=finding)
    return CheckedLedger(stored=read.good, finding=read.finding)
