"""The ledger's invariants, checked over its whole log (research/wallet.md §4.4).

Used by ``pokerctl ledger audit`` and by the tests after every step. Each breach is a short
sentence naming the invariant and the numbers; an empty list means the ledger is sound:

- conservation: total debits equal total credits, posted and pending alike (I1);
- closed system: everything outside the world account equals deposits minus withdrawals (I2);
- no negative balance outside the world account, pending debits included (I3);
- every transfer id recorded once, every pending transfer resolved at most once (I4, I7);
- every hand opened once and then settled or voided at most once, never both (I8);
- a closed hand's pot is back at zero (I9); a settlement adds up and its rake is exactly what
  ``engine.rake.compute_rake`` gives under the rules recorded when the hand opened (I10);
- the house's rake account equals the sum of the per-hand rakes (I11);
- table stakes: no buy-in or cash-out on a seat while its stack is reserved for a hand (I12).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from openpoker.engine.rake import compute_rake
from openpoker.ledger import accounts
from openpoker.ledger.decider import LedgerState, evolve
from openpoker.ledger.events import (
    Event,
    HandOpened,
    HandSettled,
    HandStatus,
    HandVoided,
    LedgerOpened,
    TransfersCommitted,
)
from openpoker.ledger.hands import hand_key
from openpoker.ledger.transfers import Phase, TransferCode, totals


@dataclass(slots=True, kw_only=True)
class AuditReport:
    breaches: list[str] = field(default_factory=list)
    currency: str = ""
    events: int = 0
    transfers: int = 0
    accounts: int = 0
    deposits: int = 0
    withdrawals: int = 0
    held_outside_world: int = 0
    house_rake: int = 0
    hands_open: int = 0
    hands_settled: int = 0
    hands_voided: int = 0

    @property
    def ok(self) -> bool:
        return not self.breaches

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "breaches": list(self.breaches),
            "currency": self.currency,
            "events": self.events,
            "transfers": self.transfers,
            "accounts": self.accounts,
            "deposits": self.deposits,
            "withdrawals": self.withdrawals,
            "held_outside_world": self.held_outside_world,
            "house_rake": self.house_rake,
            "hands": {"open": self.hands_open, "settled": self.hands_settled, "voided": self.hands_voided},
        }


def audit(events: Iterable[Event]) -> tuple[AuditReport, LedgerState]:
    """Fold the log, checking what only the log shows on the way, then the final state."""
    report = AuditReport()
    state = LedgerState()
    ids: Counter[str] = Counter()
    resolutions: Counter[str] = Counter()
    closed: Counter[str] = Counter()
    opened: Counter[str] = Counter()
    for event in events:
        report.events += 1
        match event:
            case LedgerOpened():
                if report.currency and report.currency != event.currency:
                    report.breaches.append(f"ledger opened twice: {report.currency} then {event.currency}")
                report.currency = event.currency
            case TransfersCommitted():
                report.breaches.extend(_table_stakes(state, event))
                for record in event.transfers:
                    ids[record.id] += 1
                    if record.pending_id:
                        resolutions[record.pending_id] += 1
                    if record.code is TransferCode.DEPOSIT:
                        report.deposits += record.amount
                    elif record.code is TransferCode.WITHDRAWAL:
                        report.withdrawals += record.amount
            case HandOpened():
                opened[hand_key(event.table_id, event.hand_no)] += 1
            case HandSettled() | HandVoided():
                key = hand_key(event.table_id, event.hand_no)
                closed[key] += 1
                if not opened[key]:
                    report.breaches.append(f"hand {key} closed but never opened")
        evolve(state, event)
    report.breaches.extend(f"transfer id {tid} recorded {n} times" for tid, n in ids.items() if n > 1)
    report.breaches.extend(
        f"pending transfer {p} resolved {n} times" for p, n in resolutions.items() if n > 1
    )
    report.breaches.extend(f"hand {k} opened {n} times" for k, n in opened.items() if n > 1)
    report.breaches.extend(f"hand {k} settled or voided {n} times" for k, n in closed.items() if n > 1)
    report.breaches.extend(check_state(state, deposits=report.deposits, withdrawals=report.withdrawals))
    report.transfers = len(state.transfers)
    report.accounts = len(state.accounts)
    report.held_outside_world = sum(b.balance for a, b in state.accounts.items() if a != accounts.WORLD)
    report.house_rake = state.accounts.get(accounts.HOUSE_RAKE, accounts.Balances()).balance
    for hand in state.hands.values():
        if hand.status is HandStatus.OPEN:
            report.hands_open += 1
        elif hand.status is HandStatus.SETTLED:
            report.hands_settled += 1
        else:
            report.hands_voided += 1
    return report, state


def check_state(state: LedgerState, *, deposits: int, withdrawals: int) -> list[str]:
    """The invariants visible in one state (cheap enough to run after every test step)."""
    breaches: list[str] = []
    dp, dpo, cp, cpo = totals(state.accounts.values())
    if dpo != cpo:
        breaches.append(f"conservation: posted debits {dpo} != posted credits {cpo}")
    if dp != cp:
        breaches.append(f"conservation: pending debits {dp} != pending credits {cp}")
    outside = sum(b.balance for a, b in state.accounts.items() if a != accounts.WORLD)
    if outside != deposits - withdrawals:
        breaches.append(
            f"closed system: {outside} held outside the world != deposits {deposits} - {withdrawals}"
        )
    for name, b in sorted(state.accounts.items()):
        if min(b.debits_pending, b.debits_posted, b.credits_pending, b.credits_posted) < 0:
            breaches.append(f"negative totals on {name}: {b}")
        if name != accounts.WORLD and b.available < 0:
            breaches.append(f"negative balance on {name}: available {b.available}")
    rake_sum = 0
    contributed: Counter[str] = Counter()
    for r in state.transfers.values():
        if r.phase is Phase.POST:
            contributed[r.credit] += r.amount
    for key, hand in sorted(state.hands.items()):
        if hand.status is HandStatus.OPEN:
            continue
        pot = state.accounts.get(accounts.pot(hand.table_id, hand.hand_no), accounts.Balances())
        if pot.balance or pot.credits_pending or pot.debits_pending:
            breaches.append(f"hand {key} is {hand.status} but its pot holds {pot}")
        if hand.status is HandStatus.SETTLED:
            rake_sum += hand.rake
            put_in = contributed[accounts.pot(hand.table_id, hand.hand_no)]
            if put_in != hand.pot:
                breaches.append(f"hand {key}: contributions {put_in} != recorded pot {hand.pot}")
            due = compute_rake(
                hand.rake_rules, pot=hand.pot, players_dealt_in=len(hand.stacks), saw_flop=hand.saw_flop
            )
            if hand.rake != due:
                breaches.append(f"hand {key}: rake {hand.rake} != {due} by its rake rules")
    house = state.accounts.get(accounts.HOUSE_RAKE, accounts.Balances()).balance
    if house != rake_sum:
        breaches.append(f"house rake {house} != sum of per-hand rakes {rake_sum}")
    return breaches


def _table_stakes(state: LedgerState, event: TransfersCommitted) -> list[str]:
    """Buy-ins and cash-outs that touched a seat whose stack was reserved at the time."""
    out = []
    for record in event.transfers:
        if record.code is TransferCode.BUY_IN:
            seat = record.credit
        elif record.code is TransferCode.CASH_OUT:
            seat = record.debit
        else:
            continue
        reserved = state.accounts.get(seat, accounts.Balances()).debits_pending
        if reserved:
            out.append(f"table stakes: {record.code} {record.id} on {seat} while {reserved} was reserved")
    return out
