"""The wallet's functional core: ``decide`` a command against the state, ``evolve`` by events.

Theory of operation. The state is the fold of the wallet's log: balances of every account,
every transfer ever made (by id: the idempotency keys are never pruned), which pending
transfers are resolved, and each hand's status. ``decide`` turns a command into the linked
batch of transfers it means (``hands.py`` for the hand steps), then:

1. if every transfer id of the batch is already recorded with the same fields, the command is
   a retry: no events, and the answer is the recorded transfers (the first result);
2. if an id is recorded with other fields, or a hand is already closed differently, it is
   refused with a typed error;
3. otherwise the batch is checked all-or-nothing (``transfers.plan_batch``: overdraft, unknown
   account, amounts, pending transfers resolved once) and its events are returned.

``decide`` never changes the state; ``evolve`` applies facts and never fails on a valid log.
The state is a private mutable object (folding thousands of transfers through frozen copies
would be slow) that only ``evolve`` touches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import assert_never

from openpoker.ledger import accounts, limits
from openpoker.ledger.accounts import Balances
from openpoker.ledger.commands import (
    BuyIn,
    CashOut,
    Command,
    Deposit,
    OpenHand,
    SettleHand,
    VoidHand,
    Withdraw,
)
from openpoker.ledger.errors import (
    HandAlreadyOpen,
    HandAlreadySettled,
    HandAlreadyVoided,
    HandNotClosed,
    InvalidIdentifier,
    LedgerError,
    PlayerInHand,
    UnknownAccount,
    UnknownHand,
)
from openpoker.ledger.events import (
    Event,
    HandOpened,
    HandSettled,
    HandStatus,
    HandVoided,
    LedgerOpened,
    TransfersCommitted,
)
from openpoker.ledger.hands import (
    HandRecord,
    check_hand_no,
    hand_key,
    open_ops,
    settle_ops,
    void_ops,
)
from openpoker.ledger.transfers import (
    Transfer,
    TransferCode,
    TransferOp,
    TransferRecord,
    apply_record,
    check_amount,
    existing,
    plan_batch,
)


@dataclass(slots=True)
class LedgerState:
    currency: str = ""
    accounts: dict[str, Balances] = field(default_factory=dict)
    transfers: dict[str, TransferRecord] = field(default_factory=dict)
    # pending transfer id -> id of the post or void that resolved it
    resolved: dict[str, str] = field(default_factory=dict)
    hands: dict[str, HandRecord] = field(default_factory=dict)
    # cash account -> (UTC day, deposits of that day): its latest dated deposits (ledger.limits)
    deposit_days: limits.DayTotals = field(default_factory=dict)
    # cash account -> (UTC day, withdrawals of that day): likewise for money paid out
    withdrawal_days: limits.DayTotals = field(default_factory=dict)
    commands: int = 0  # events applied that moved money (for status pages)

    def balance(self, account: str) -> Balances:
        if account not in self.accounts and account not in accounts.SYSTEM_ACCOUNTS:
            raise UnknownAccount(account=account)
        return self.accounts.get(account, Balances())

    def hand(self, table_id: str, hand_no: int) -> HandRecord:
        hand = self.hands.get(hand_key(table_id, hand_no))
        if hand is None:
            raise UnknownHand(table_id=table_id, hand_no=hand_no)
        return hand


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What a command means: the events to append (none for a retry) and its transfers' ids."""

    events: tuple[Event, ...]
    transfer_ids: tuple[str, ...]

    @property
    def duplicate(self) -> bool:
        return not self.events


def check_request_id(request_id: str) -> str:
    # Request ids go into transfer ids: same alphabet as player ids (UUIDs fit).
    try:
        return accounts.check_id("request_id", request_id)
    except InvalidIdentifier:
        raise InvalidIdentifier(field="request_id", value=request_id) from None


def decide(state: LedgerState, command: Command) -> Decision:
    match command:
        case Deposit():
            check_request_id(command.request_id)
            check_amount("amount", command.amount)
            account = accounts.cash(command.player)
            op = Transfer(
                id=f"deposit/{command.request_id}",
                debit=accounts.WORLD,
                credit=account,
                amount=command.amount,
                code=TransferCode.DEPOSIT,
            )
            if existing(state.transfers, (op,)):
                return _duplicate((op,))  # a retry answers the first result, whatever the limits now
            day = limits.day_of(command.at) if command.at is not None else ""
            if command.limits.daily_deposit is not None and not day:
                raise ValueError("a deposit under a daily limit needs its time (Deposit.at)")
            limits.check_deposit(
                command.limits,
                account=account,
                balance=state.accounts.get(account, Balances()),
                amount=command.amount,
                deposited_today=limits.total_on(state.deposit_days, account, day),
            )
            return _batch(state, command.request_id, (op,), day=day)
        case Withdraw():
            check_request_id(command.request_id)
            check_amount("amount", command.amount)
            account = accounts.cash(command.player)
            op = Transfer(
                id=f"withdraw/{command.request_id}",
                debit=account,
                credit=accounts.WORLD,
                amount=command.amount,
                code=TransferCode.WITHDRAWAL,
            )
            if existing(state.transfers, (op,)):
                return _duplicate((op,))  # a retry answers the first result, whatever the limits now
            day = limits.day_of(command.at) if command.at is not None else ""
            if command.limits.daily_withdrawal is not None and not day:
                raise ValueError("a withdrawal under a daily limit needs its time (Withdraw.at)")
            limits.check_withdrawal(
                command.limits,
                account=account,
                amount=command.amount,
                withdrawn_today=limits.total_on(state.withdrawal_days, account, day),
            )
            return _batch(state, command.request_id, (op,), day=day)
        case BuyIn():
            check_request_id(command.request_id)
            check_amount("amount", command.amount)
            seat = accounts.escrow(command.table_id, command.player)
            op = Transfer(
                id=f"buy_in/{command.request_id}",
                debit=accounts.cash(command.player),
                credit=seat,
                amount=command.amount,
                code=TransferCode.BUY_IN,
            )
            return _batch(state, command.request_id, (op,), idle_seat=(command.table_id, command.player))
        case CashOut():
            check_request_id(command.request_id)
            seat = accounts.escrow(command.table_id, command.player)
            tid = f"cash_out/{command.request_id}"
            if command.after_hand and tid not in state.transfers:
                # The table's stack already reflects that hand; the escrow does only once the
                # hand is settled or voided here (it may not even be reserved yet).
                hand = state.hands.get(hand_key(command.table_id, check_hand_no(command.after_hand)))
                if hand is None or hand.status is HandStatus.OPEN:
                    raise HandNotClosed(
                        table_id=command.table_id, hand_no=command.after_hand, player=command.player
                    )
            amount = command.amount
            if amount is None:
                # "Everything": on a retry, what was taken the first time.
                recorded = state.transfers.get(tid)
                if recorded is None:
                    _require_idle(state, command.table_id, command.player)
                    amount = state.balance(seat).available
                else:
                    amount = recorded.amount
            check_amount("amount", amount)
            op = Transfer(
                id=tid,
                debit=seat,
                credit=accounts.cash(command.player),
                amount=amount,
                code=TransferCode.CASH_OUT,
            )
            return _batch(state, command.request_id, (op,), idle_seat=(command.table_id, command.player))
        case OpenHand():
            check_request_id(command.request_id)
            ops = open_ops(command)
            key = hand_key(command.table_id, command.hand_no)
            if key in state.hands:
                # A retry only if the same stacks under the same rake rules (recorded at open).
                if state.hands[key].rake_rules == command.rake and _retry(state, ops):
                    return _duplicate(ops)
                raise HandAlreadyOpen(table_id=command.table_id, hand_no=command.hand_no)
            for stack in command.stacks:
                _require_idle(state, command.table_id, stack.player)
            opened = HandOpened(
                table_id=command.table_id, hand_no=command.hand_no, stacks=command.stacks, rake=command.rake
            )
            return _batch(state, command.request_id, ops, before=(opened,))
        case SettleHand():
            check_request_id(command.request_id)
            hand = state.hand(command.table_id, command.hand_no)
            if hand.status is HandStatus.VOIDED:
                raise HandAlreadyVoided(table_id=hand.table_id, hand_no=hand.hand_no)
            ops, pot = settle_ops(hand, command)
            if hand.status is HandStatus.SETTLED:
                if _retry(state, ops):
                    return _duplicate(ops)
                raise HandAlreadySettled(table_id=hand.table_id, hand_no=hand.hand_no)
            settled = HandSettled(
                table_id=hand.table_id,
                hand_no=hand.hand_no,
                pot=pot,
                rake=command.rake,
                saw_flop=command.saw_flop,
                players_dealt_in=len(hand.stacks),
            )
            return _batch(state, command.request_id, ops, after=(settled,))
        case VoidHand():
            check_request_id(command.request_id)
            hand = state.hand(command.table_id, command.hand_no)
            ops = void_ops(hand)
            if hand.status is HandStatus.SETTLED:
                raise HandAlreadySettled(table_id=hand.table_id, hand_no=hand.hand_no)
            if hand.status is HandStatus.VOIDED:
                return _duplicate(ops)
            voided = HandVoided(table_id=hand.table_id, hand_no=hand.hand_no)
            return _batch(state, command.request_id, ops, after=(voided,))
        case _:
            assert_never(command)


def _retry(state: LedgerState, ops: tuple[TransferOp, ...]) -> bool:
    try:
        return existing(state.transfers, ops)
    except LedgerError:
        return False


def _duplicate(ops: tuple[TransferOp, ...]) -> Decision:
    return Decision(events=(), transfer_ids=tuple(op.id for op in ops))


def _require_idle(state: LedgerState, table_id: str, player: str) -> None:
    seat = state.accounts.get(accounts.escrow(table_id, player))
    if seat is not None and seat.debits_pending > 0:
        raise PlayerInHand(table_id=table_id, player=player)


def _batch(
    state: LedgerState,
    request_id: str,
    ops: tuple[TransferOp, ...],
    *,
    idle_seat: tuple[str, str] | None = None,
    before: tuple[Event, ...] = (),
    after: tuple[Event, ...] = (),
    day: str = "",
) -> Decision:
    if existing(state.transfers, ops):
        return _duplicate(ops)
    if idle_seat is not None:
        _require_idle(state, *idle_seat)
    records = plan_batch(state.accounts, state.transfers, state.resolved, ops)
    committed = TransfersCommitted(request_id=request_id, transfers=records, day=day)
    return Decision(events=(*before, committed, *after), transfer_ids=tuple(op.id for op in ops))


def evolve(state: LedgerState, event: Event) -> LedgerState:
    """Apply one fact (mutating the private state) and return the state."""
    match event:
        case LedgerOpened():
            state.currency = event.currency
        case TransfersCommitted():
            for record in event.transfers:
                apply_record(state.accounts, record)
                state.transfers[record.id] = record
                if record.pending_id:
                    state.resolved[record.pending_id] = record.id
                if event.day and record.code is TransferCode.DEPOSIT:
                    limits.record_on(state.deposit_days, record.credit, event.day, record.amount)
                elif event.day and record.code is TransferCode.WITHDRAWAL:
                    limits.record_on(state.withdrawal_days, record.debit, event.day, record.amount)
            state.commands += 1
        case HandOpened():
            state.hands[hand_key(event.table_id, event.hand_no)] = HandRecord(
                table_id=event.table_id, hand_no=event.hand_no, stacks=event.stacks, rake_rules=event.rake
            )
        case HandSettled():
            hand = state.hands[hand_key(event.table_id, event.hand_no)]
            hand.status = HandStatus.SETTLED
            hand.pot = event.pot
            hand.rake = event.rake
            hand.saw_flop = event.saw_flop
        case HandVoided():
            state.hands[hand_key(event.table_id, event.hand_no)].status = HandStatus.VOIDED
        case _:
            assert_never(event)
    return state


def fold(events: Iterable[Event], state: LedgerState | None = None) -> LedgerState:
    state = LedgerState() if state is None else state
    for event in events:
        evolve(state, event)
    return state


def records_of(state: LedgerState, decision: Decision) -> tuple[TransferRecord, ...]:
    """The transfers a decision stands for, as recorded (after its events were applied)."""
    return tuple(state.transfers[tid] for tid in decision.transfer_ids)
