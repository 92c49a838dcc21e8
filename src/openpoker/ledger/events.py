"""Facts in the wallet's log (past tense; frozen keyword-only records).

One command's events are written as one message of the ``WALLET_EVENTS`` stream, so they land
together or not at all. Persisted names and fields: never rename, only add with defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from openpoker.engine.rules import RakeRules
from openpoker.ledger.commands import PlayerAmount
from openpoker.ledger.transfers import TransferRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerOpened:
    """First event of a ledger: the one currency all of its amounts are in (minor units)."""

    currency: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TransfersCommitted:
    """A linked batch of transfers, applied whole. ``day``: the UTC day (``YYYY-MM-DD``) of a
    dated deposit or withdrawal, counted toward the account's daily limit ("" otherwise)."""

    request_id: str
    transfers: tuple[TransferRecord, ...]
    day: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandOpened:
    table_id: str
    hand_no: int
    stacks: tuple[PlayerAmount, ...]
    rake: RakeRules


@dataclass(frozen=True, slots=True, kw_only=True)
class HandSettled:
    table_id: str
    hand_no: int
    pot: int
    rake: int
    saw_flop: bool
    players_dealt_in: int


@dataclass(frozen=True, slots=True, kw_only=True)
class HandVoided:
    table_id: str
    hand_no: int


Event = LedgerOpened | TransfersCommitted | HandOpened | HandSettled | HandVoided


class HandStatus(StrEnum):
    OPEN = "open"
    SETTLED = "settled"
    VOIDED = "voided"
