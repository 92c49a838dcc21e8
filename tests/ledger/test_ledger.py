"""The ledger's pure core: given commands, then balances, records or a typed error."""

from __future__ import annotations

import pytest

from openpoker.engine.rules import RakeRules
from openpoker.ledger import accounts
from openpoker.ledger.audit import audit
from openpoker.ledger.codec import decode_state, dump_events, encode_state, load_events
from openpoker.ledger.commands import (
    BuyIn,
    CashOut,
    Deposit,
    OpenHand,
    PlayerAmount,
    SettleHand,
    VoidHand,
    Withdraw,
)
from openpoker.ledger.decider import LedgerState, decide, fold
from openpoker.ledger.errors import (
    BalanceOverflow,
    ExceedsPendingAmount,
    HandAlreadyOpen,
    HandAlreadySettled,
    HandAlreadyVoided,
    HandNotClosed,
    InsufficientFunds,
    InvalidAmount,
    InvalidIdentifier,
    PendingTransferResolved,
    PlayerInHand,
    SettlementMismatch,
    TransferIdReused,
    UnknownAccount,
    UnknownHand,
)
from openpoker.ledger.events import HandSettled, TransfersCommitted
from openpoker.ledger.transfers import (
    Phase,
    PostPending,
    Transfer,
    TransferCode,
    TransferRecord,
    VoidPending,
    plan_batch,
)

from .helpers import MemoryWallet

INT64_MAX = 2**63 - 1
STARS_50_100 = RakeRules(basis_points=500, caps=((2, 125), (3, 125), (5, 275)))


def pa(**amounts: int) -> tuple[PlayerAmount, ...]:
    return tuple(PlayerAmount(player=p, amount=a) for p, a in amounts.items())


def funded(**cash: int) -> MemoryWallet:
    w = MemoryWallet()
    for player, amount in cash.items():
        w.run(Deposit(request_id=f"d-{player}", player=player, amount=amount))
    return w


def test_deposit_credits_cash_and_debits_the_world() -> None:
    w = funded(alice=5000)
    assert w.balance(accounts.cash("alice")) == 5000
    assert w.balance(accounts.WORLD) == -5000


def test_retry_is_a_no_op_returning_the_first_result() -> None:
    w = funded(alice=5000)
    before = encode_state(w.state)
    decision, records = w.run(Deposit(request_id="d-alice", player="alice", amount=5000))
    assert decision.duplicate
    assert records[0].amount == 5000
    assert records[0].id == "deposit/d-alice"
    assert encode_state(w.state) == before
    assert len(w.log) == 2  # LedgerOpened + the first deposit only


def test_same_request_id_with_other_fields_is_refused() -> None:
    w = funded(alice=5000)
    with pytest.raises(TransferIdReused) as info:
        w.run(Deposit(request_id="d-alice", player="alice", amount=5001))
    assert info.value.field == "amount"
    assert info.value.reason == "TRANSFER_ID_REUSED"
    with pytest.raises(TransferIdReused) as info:
        w.run(Deposit(request_id="d-alice", player="bob", amount=5000))
    assert info.value.field == "credit"
    assert w.balance(accounts.cash("alice")) == 5000


def test_overdraft_is_refused_with_what_is_available() -> None:
    w = funded(alice=300)
    with pytest.raises(InsufficientFunds) as info:
        w.run(Withdraw(request_id="w1", player="alice", amount=301))
    assert (info.value.account, info.value.available, info.value.amount) == ("cash/alice", 300, 301)
    assert info.value.metadata() == {"account": "cash/alice", "available": "300", "amount": "301"}
    w.run(Withdraw(request_id="w2", player="alice", amount=300))
    assert w.balance(accounts.cash("alice")) == 0
    assert w.balance(accounts.WORLD) == 0


def test_unknown_accounts() -> None:
    w = funded(alice=300)
    with pytest.raises(UnknownAccount) as info:
        w.run(Withdraw(request_id="w1", player="bob", amount=1))
    assert info.value.account == "cash/bob"
    with pytest.raises(UnknownAccount):
        w.run(CashOut(request_id="c1", table_id="t1", player="alice"))
    with pytest.raises(UnknownAccount):
        w.state.balance(accounts.cash("carol"))
    with pytest.raises(UnknownHand):
        w.run(VoidHand(request_id="v", table_id="t1", hand_no=1))


@pytest.mark.parametrize(
    ("amount", "problem"), [(0, "must be positive"), (-5, "must be positive"), (2**63, "int64")]
)
def test_bad_amounts(amount: int, problem: str) -> None:
    w = funded(alice=300)
    for command in (
        Deposit(request_id="x", player="alice", amount=amount),
        Withdraw(request_id="x", player="alice", amount=amount),
        BuyIn(request_id="x", table_id="t1", player="alice", amount=amount),
        CashOut(request_id="x", table_id="t1", player="alice", amount=amount),
    ):
        with pytest.raises(InvalidAmount, match=problem) as info:
            w.run(command)
        assert info.value.reason == "INVALID_AMOUNT"


def test_balances_cannot_overflow_int64() -> None:
    w = funded(alice=INT64_MAX)
    with pytest.raises(BalanceOverflow):
        w.run(Deposit(request_id="more", player="alice", amount=1))
    with pytest.raises(BalanceOverflow):  # the world's debits would overflow too
        w.run(Deposit(request_id="bob", player="bob", amount=1))


@pytest.mark.parametrize("bad", ["", "a/b", "-x", "x" * 129, "sp ace"])
def test_bad_identifiers(bad: str) -> None:
    w = funded(alice=300)
    with pytest.raises(InvalidIdentifier):
        w.run(Deposit(request_id="ok", player=bad, amount=1))
    with pytest.raises(InvalidIdentifier):
        w.run(Deposit(request_id=bad, player="alice", amount=1))


def _table(w: MemoryWallet, **stacks: int) -> None:
    for player, amount in stacks.items():
        w.run(BuyIn(request_id=f"b-{player}", table_id="t1", player=player, amount=amount))


def test_worked_settlement_six_dealt_in() -> None:
    # research/wallet.md §4.1: the $312.99 hand at $0.50/$1, six dealt in, cents.
    stacks = {"ludatil": 20000, "belqi": 40000, "rietzel": 9443, "mato": 5000, "alesik": 3000, "aem": 7000}
    w = funded(**dict.fromkeys(stacks, 50_000))
    _table(w, **stacks)
    w.run(OpenHand(request_id="o", table_id="t1", hand_no=7, stacks=pa(**stacks), rake=STARS_50_100))
    seat = accounts.escrow("t1", "belqi")
    assert w.state.balance(seat).available == 0  # the whole stack is reserved
    assert w.state.balance(seat).balance == 40000
    decision, records = w.run(
        SettleHand(
            request_id="s",
            table_id="t1",
            hand_no=7,
            contributions=pa(ludatil=10878, belqi=10878, rietzel=9443, mato=100),
            payouts=pa(ludatil=28154 + 2870),
            rake=275,
            saw_flop=True,
        )
    )
    assert not decision.duplicate
    assert w.balance(accounts.escrow("t1", "ludatil")) == 20000 - 10878 + 31024
    assert w.balance(seat) == 40000 - 10878  # the uncalled 20166 came back by the partial post
    assert w.balance(accounts.escrow("t1", "alesik")) == 3000
    assert w.balance(accounts.HOUSE_RAKE) == 275
    pot = w.state.balance(accounts.pot("t1", 7))
    assert (pot.balance, pot.credits_pending, pot.debits_pending) == (0, 0, 0)
    posts = [r for r in records if r.phase is Phase.POST]
    assert {r.debit: r.released for r in posts}[seat] == 40000 - 10878
    report, _ = audit(w.events())
    assert report.ok, report.breaches
    assert report.house_rake == 275


def _open(w: MemoryWallet) -> None:
    w.run(OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=1000, b=1000), rake=STARS_50_100))


def _settle(**changes: object) -> SettleHand:
    fields: dict[str, object] = {
        "request_id": "s",
        "table_id": "t1",
        "hand_no": 1,
        "contributions": pa(a=400, b=400),
        "payouts": pa(a=760),
        "rake": 40,
        "saw_flop": True,
    }
    fields.update(changes)
    return SettleHand(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"payouts": pa(a=761)}, "contributions must equal payouts plus rake"),
        ({"payouts": pa(a=800), "rake": 0}, "rake differs"),
        ({"payouts": pa(a=770), "rake": 30}, "rake differs"),
        ({"saw_flop": False}, "rake differs"),  # no flop, no drop: 40 is too much
        ({"contributions": pa(a=1001, b=400)}, "above the reserved stack"),
        ({"contributions": pa(a=400, c=400)}, "not dealt in"),
        ({"payouts": pa(a=700, c=60)}, "payout to a player not dealt in"),
    ],
)
def test_settlements_that_do_not_add_up_are_refused(changes: dict[str, object], problem: str) -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    before = encode_state(w.state)
    with pytest.raises(SettlementMismatch, match=problem) as info:
        w.run(_settle(**changes))
    assert info.value.reason == "SETTLEMENT_MISMATCH"
    assert encode_state(w.state) == before


def test_the_rake_is_rounded_down_to_the_tables_chip_unit() -> None:
    # 5% of 2,740 is 137; in chips of 100 the table takes 100, and so must the wallet.
    in_hundreds = RakeRules(basis_points=500, unit=100)
    w = funded(a=2000, b=2000)
    _table(w, a=2000, b=2000)
    w.run(OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=2000, b=2000), rake=in_hundreds))
    with pytest.raises(SettlementMismatch, match="rake differs"):
        w.run(_settle(contributions=pa(a=1370, b=1370), payouts=pa(a=2603), rake=137))
    w.run(_settle(contributions=pa(a=1370, b=1370), payouts=pa(a=2640), rake=100))
    assert w.balance(accounts.HOUSE_RAKE) == 100
    report, _ = audit(w.events())  # the audit recomputes it under the recorded rules
    assert report.ok, report.breaches
    assert decode_state(encode_state(w.state)) == w.state


def test_no_flop_no_drop_settlement() -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.run(_settle(contributions=pa(a=20, b=10), payouts=pa(a=30), rake=0, saw_flop=False))
    assert w.balance(accounts.escrow("t1", "a")) == 1010
    assert w.balance(accounts.HOUSE_RAKE) == 0


def test_hand_settled_once_then_retries_and_closing_steps() -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.run(_settle())
    assert w.run(_settle())[0].duplicate
    assert w.run(_settle(request_id="another"))[0].duplicate  # hand steps are keyed by the hand
    with pytest.raises(HandAlreadySettled):
        w.run(_settle(payouts=pa(b=760)))
    with pytest.raises(HandAlreadySettled):
        w.run(VoidHand(request_id="v", table_id="t1", hand_no=1))
    assert w.run(
        OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=1000, b=1000), rake=STARS_50_100)
    )[0].duplicate
    with pytest.raises(HandAlreadyOpen):
        w.run(OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=999, b=1000), rake=STARS_50_100))
    with pytest.raises(HandAlreadyOpen):
        w.run(OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=1000, b=1000), rake=RakeRules()))
    assert w.balance(accounts.HOUSE_RAKE) == 40
    assert audit(w.events())[0].ok


def test_void_releases_every_reservation_once() -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.run(VoidHand(request_id="v", table_id="t1", hand_no=1))
    assert w.run(VoidHand(request_id="v2", table_id="t1", hand_no=1))[0].duplicate
    with pytest.raises(HandAlreadyVoided):
        w.run(_settle())
    for p in "ab":
        b = w.state.balance(accounts.escrow("t1", p))
        assert (b.balance, b.available, b.debits_pending) == (1000, 1000, 0)
    assert audit(w.events())[0].ok


def test_table_stakes_no_cash_out_or_top_up_mid_hand() -> None:
    w = funded(a=2000, b=2000)
    _table(w, a=1000, b=1000)
    _open(w)
    with pytest.raises(PlayerInHand):
        w.run(CashOut(request_id="c", table_id="t1", player="a", amount=1))
    with pytest.raises(PlayerInHand):
        w.run(BuyIn(request_id="top", table_id="t1", player="a", amount=100))
    with pytest.raises(PlayerInHand):
        w.run(OpenHand(request_id="o2", table_id="t1", hand_no=2, stacks=pa(a=10, b=10), rake=STARS_50_100))
    w.run(_settle())
    _, records = w.run(CashOut(request_id="c", table_id="t1", player="a"))
    assert records[0].amount == 1360
    assert w.balance(accounts.cash("a")) == 1000 + 1360
    # "Everything" retried after the seat is empty answers the first result, not zero.
    assert w.run(CashOut(request_id="c", table_id="t1", player="a"))[1][0].amount == 1360


def test_a_cash_out_after_a_hand_waits_until_that_hand_is_opened_and_settled() -> None:
    # The table lets a player leave as soon as their hand is over for them, possibly before the
    # dealer has reserved the hand: their escrow still holds the stack from before the hand,
    # and paying out the table's stack then would leave the reservation short.
    w = funded(a=2000, b=2000)
    _table(w, a=1000, b=1000)
    leave = CashOut(request_id="left-b", table_id="t1", player="b", amount=600, after_hand=1)
    with pytest.raises(HandNotClosed) as info:
        w.run(leave)  # hand 1 not even opened yet
    assert (info.value.hand_no, info.value.reason) == (1, "HAND_NOT_CLOSED")
    _open(w)
    with pytest.raises(HandNotClosed):
        w.run(leave)  # reserved, not settled
    w.run(_settle(contributions=pa(a=400, b=400), payouts=pa(a=760), rake=40))
    _, records = w.run(leave)
    assert records[0].amount == 600
    assert w.balance(accounts.escrow("t1", "b")) == 0
    assert w.run(leave)[0].duplicate  # a retry answers the first result
    assert audit(w.events())[0].ok


def test_a_cash_out_after_a_voided_hand_goes_through() -> None:
    w = funded(a=2000, b=2000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.run(VoidHand(request_id="v", table_id="t1", hand_no=1))
    _, records = w.run(CashOut(request_id="left-a", table_id="t1", player="a", amount=1000, after_hand=1))
    assert records[0].amount == 1000
    assert w.balance(accounts.escrow("t1", "a")) == 0


def test_open_hand_needs_the_stacks_at_the_table() -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=500)
    with pytest.raises(UnknownAccount) as info:
        w.run(OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=500, b=500), rake=RakeRules()))
    assert info.value.account == "escrow/t1/b"
    _table(w, b=1000)
    with pytest.raises(InsufficientFunds) as funds:
        _open(w)  # a has 500, not 1000
    assert funds.value.account == "escrow/t1/a"
    assert not w.state.hands


def test_decide_leaves_the_state_unchanged() -> None:
    w = funded(a=2000, b=1000)
    _table(w, a=1000, b=1000)
    before = encode_state(w.state)
    opening = OpenHand(request_id="o", table_id="t1", hand_no=1, stacks=pa(a=1000, b=1000), rake=RakeRules())
    assert decide(w.state, opening).events
    assert decide(w.state, Withdraw(request_id="w", player="a", amount=1)).events
    assert encode_state(w.state) == before


def test_linked_batch_is_all_or_nothing() -> None:
    w = funded(a=100)
    state = w.state
    ops = (
        Transfer(id="x1", debit="cash/a", credit="cash/b", amount=60, code=TransferCode.BUY_IN),
        Transfer(id="x2", debit="cash/a", credit="cash/c", amount=60, code=TransferCode.BUY_IN),
    )
    with pytest.raises(InsufficientFunds) as info:
        plan_batch(state.accounts, state.transfers, state.resolved, ops)
    assert info.value.available == 40  # the second transfer saw the first one's effect
    records = plan_batch(state.accounts, state.transfers, state.resolved, ops[:1])
    assert records[0].amount == 60


def test_two_phase_post_partial_and_resolve_once() -> None:
    state = fold(MemoryWallet().events())
    ops = (
        Transfer(id="d", debit="world", credit="cash/a", amount=100, code=TransferCode.DEPOSIT),
        Transfer(id="p", debit="cash/a", credit="cash/b", amount=70, code=TransferCode.BUY_IN, pending=True),
        PostPending(id="post", pending_id="p", amount=30, code=TransferCode.BUY_IN),
    )
    records = plan_batch(state.accounts, state.transfers, state.resolved, ops)
    assert (records[2].amount, records[2].released, records[2].debit) == (30, 40, "cash/a")
    with pytest.raises(PendingTransferResolved):
        plan_batch(
            state.accounts,
            state.transfers,
            state.resolved,
            (*ops, VoidPending(id="void", pending_id="p", code=TransferCode.BUY_IN)),
        )
    with pytest.raises(ExceedsPendingAmount):
        plan_batch(
            state.accounts,
            state.transfers,
            state.resolved,
            (*ops[:2], PostPending(id="post", pending_id="p", amount=71, code=TransferCode.BUY_IN)),
        )
    # Pessimistic: a pending debit counts against what is available at once.
    with pytest.raises(InsufficientFunds):
        plan_batch(
            state.accounts,
            state.transfers,
            state.resolved,
            (
                *ops[:2],
                Transfer(id="q", debit="cash/a", credit="cash/c", amount=31, code=TransferCode.BUY_IN),
            ),
        )


def test_codec_and_snapshot_round_trip() -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.run(_settle())
    for message in w.log:
        assert tuple(load_events(dump_events(message))) == message
    assert encode_state(decode_state(encode_state(w.state))) == encode_state(w.state)
    assert encode_state(fold(w.events(), LedgerState())) == encode_state(w.state)


def _forge(w: MemoryWallet, *records: TransferRecord) -> None:
    w.append((TransfersCommitted(request_id="forged", transfers=records),))


def test_audit_names_each_kind_of_breach() -> None:
    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    assert audit(w.events())[0].ok
    # A cash-out behind the wallet's back while the stack is reserved: table stakes, overdraft.
    _forge(
        w,
        TransferRecord(
            id="x1",
            phase=Phase.SINGLE,
            code=TransferCode.CASH_OUT,
            debit="escrow/t1/a",
            credit="cash/a",
            amount=5,
        ),
    )
    breaches = audit(w.events())[0].breaches
    assert any(b.startswith("table stakes: cash_out x1 on escrow/t1/a") for b in breaches)
    assert any(b.startswith("negative balance on escrow/t1/a") for b in breaches)

    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.run(_settle())
    # The same settlement written twice (as a buggy writer without dedupe would).
    w.append(w.log[-1])
    breaches = audit(w.events())[0].breaches
    assert any("transfer id hand/t1/1/rake recorded 2 times" in b for b in breaches)
    assert any("pending transfer hand/t1/1/reserve/a resolved 2 times" in b for b in breaches)
    assert any("hand t1/1 settled or voided 2 times" in b for b in breaches)

    w = funded(a=1000, b=1000)
    _table(w, a=1000, b=1000)
    _open(w)
    w.append((HandSettled(table_id="t1", hand_no=1, pot=0, rake=7, saw_flop=True, players_dealt_in=2),))
    breaches = audit(w.events())[0].breaches
    assert any("rake 7 != 0 by its rake rules" in b for b in breaches)
    assert any("house rake 0 != sum of per-hand rakes 7" in b for b in breaches)
    assert any("is settled but its pot holds" in b for b in breaches)
