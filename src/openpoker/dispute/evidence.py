"""The evidence a dispute replay reads, as plain values (no I/O here).

* ``LoggedEnvelope``: one stored message of a table log: the envelope, its stream sequence and
  the ``Nats-Msg-Id`` header it was stored under.
* ``RevealRecord``: one revealed seed from the audit record (``services.dealer.audit``).
* ``WalletHand``: what the wallet's ledger says about one hand of one table (``wallet_hands``
  folds the ledger's events into them): opened, settled (pot and rake of ``HandSettled``; the
  contribution, payout and rake transfers of the hand's pot account) or voided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from openpoker.eventstore.envelope import Envelope
from openpoker.ledger.events import Event, HandOpened, HandSettled, HandVoided, TransfersCommitted
from openpoker.ledger.transfers import TransferCode


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedEnvelope:
    envelope: Envelope
    sequence: int
    msg_id: str  # the Nats-Msg-Id header ("" if the message had none)


@dataclass(frozen=True, slots=True, kw_only=True)
class RevealRecord:
    table_id: str
    hand_id: str
    hand_number: int
    version: str  # the shuffle algorithm version
    deck_size: int
    commitment: str
    seed: bytes = field(repr=False)


@dataclass(slots=True, kw_only=True)
class WalletHand:
    table_id: str
    hand_no: int
    opened: bool = False
    settled: bool = False
    voided: bool = False
    pot: int = 0  # HandSettled.pot
    rake: int = 0  # HandSettled.rake
    reserved: dict[str, int] = field(default_factory=dict)  # HandOpened stacks
    contributions: dict[str, int] = field(default_factory=dict)  # posted from escrow to the pot
    payouts: dict[str, int] = field(default_factory=dict)  # paid from the pot to escrow
    rake_paid: int = 0  # paid from the pot to the house


def _pot_key(account: str) -> tuple[str, int] | None:
    parts = account.split("/")
    if len(parts) == 3 and parts[0] == "pot" and parts[2].isdigit():
        return parts[1], int(parts[2])
    return None


def _escrow_player(account: str) -> str | None:
    parts = account.split("/")
    return parts[2] if len(parts) == 3 and parts[0] == "escrow" else None


def wallet_hands(events: Iterable[Event]) -> dict[tuple[str, int], WalletHand]:
    """Every hand the ledger knows, keyed by (table id, hand number)."""
    hands: dict[tuple[str, int], WalletHand] = {}

    def get(table_id: str, hand_no: int) -> WalletHand:
        return hands.setdefault((table_id, hand_no), WalletHand(table_id=table_id, hand_no=hand_no))

    for event in events:
        match event:
            case HandOpened(table_id=t, hand_no=n, stacks=stacks):
                h = get(t, n)
                h.opened = True
                h.reserved = {s.player: s.amount for s in stacks}
            case HandSettled(table_id=t, hand_no=n, pot=pot, rake=rake):
                h = get(t, n)
                h.settled, h.pot, h.rake = True, pot, rake
            case HandVoided(table_id=t, hand_no=n):
                get(t, n).voided = True
            case TransfersCommitted(transfers=transfers):
                for r in transfers:
                    if r.code is TransferCode.HAND_CONTRIBUTION and r.amount > 0:
                        key = _pot_key(r.credit)
                        player = _escrow_player(r.debit)
                        if key and player:
                            c = get(*key).contributions
                            c[player] = c.get(player, 0) + r.amount
                    elif r.code is TransferCode.HAND_PAYOUT:
                        key = _pot_key(r.debit)
                        player = _escrow_player(r.credit)
                        if key and player:
                            p = get(*key).payouts
                            p[player] = p.get(player, 0) + r.amount
                    elif r.code is TransferCode.HAND_RAKE:
                        key = _pot_key(r.debit)
                        if key:
                            get(*key).rake_paid += r.amount
            case _:
                pass
    return hands
