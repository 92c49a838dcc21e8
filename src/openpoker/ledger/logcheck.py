"""The wallet's log read for audits: every envelope up to the first foreign or corrupt message,
and that message's finding (``eventstore.loading``), so an audit reports it instead of ending
in a traceback on events that do not decode or fold."""

from __future__ import annotations

from dataclasses import dataclass

from openpoker.eventstore import GENESIS, Envelope, EventStore
from openpoker.eventstore.loading import Finding, Tip, Verifier, fold_finding, read_checked
from openpoker.ledger.decider import LedgerState, fold
from openpoker.ledger.store import STREAM_ID, SUBJECT, from_recorded


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedLedger:
    envelopes: tuple[Envelope, ...]  # the good prefix, in order
    finding: Finding | None


async def read_ledger(
    events: EventStore, *, subject: str = SUBJECT, verifier: Verifier | None = None
) -> CheckedLedger:
    read = await read_checked(
        events, subject, stream=STREAM_ID, tip=Tip(version=0, hash=GENESIS), verifier=verifier
    )
    state = LedgerState()
    for index, stored in enumerate(read.good):
        try:
            fold((from_recorded(r) for r in stored.envelope.events), state)
        except Exception as exc:  # any failure of foreign events to decode or fold is a finding
            good = tuple(s.envelope for s in read.good[:index])
            return CheckedLedger(
                envelopes=good, finding=fold_finding(stored, stream=STREAM_ID, subject=subject, exc=exc)
            )
    return CheckedLedger(envelopes=tuple(s.envelope for s in read.good), finding=read.finding)
