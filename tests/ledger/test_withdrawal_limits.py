"""Withdrawal limits in the pure core: given a funded cash account and its withdrawals, when one
more is asked, then it is paid out or refused with a typed error, the state unchanged; the
daily total is rebuilt from the log and from a snapshot."""

from __future__ import annotations

import datetime as dt

import pytest

from openpoker.ledger.codec import decode_state, dump_events, encode_state, load_events
from openpoker.ledger.commands import Deposit, Withdraw
from openpoker.ledger.decider import decide, fold
from openpoker.ledger.errors import (
    DailyWithdrawalLimitReached,
    InsufficientFunds,
    TransferIdReused,
    WithdrawalOverLimit,
)
from openpoker.ledger.limits import WithdrawalLimits

from .helpers import MemoryWallet

LIMITS = WithdrawalLimits(max_withdrawal=1_000, daily_withdrawal=2_500)
DAY1 = dt.datetime(2026, 11, 27, 23, 59, tzinfo=dt.UTC)
DAY2 = dt.datetime(2026, 11, 28, 0, 1, tzinfo=dt.UTC)


def funded(*players: str, amount: int = 10_000) -> MemoryWallet:
    w = MemoryWallet()
    for p in players:
        w.run(Deposit(request_id=f"fund-{p}", player=p, amount=amount))
    return w


def withdraw(rid: str, amount: int, at: dt.datetime = DAY1, player: str = "ann") -> Withdraw:
    return Withdraw(request_id=rid, player=player, amount=amount, at=at, limits=LIMITS)


def refused(w: MemoryWallet, command: Withdraw) -> Exception:
    before = encode_state(w.state)
    with pytest.raises((WithdrawalOverLimit, DailyWithdrawalLimitReached)) as err:
        decide(w.state, command)
    assert encode_state(w.state) == before
    return err.value


def test_one_withdrawal_over_the_limit_is_refused() -> None:
    w = funded("ann")
    err = refused(w, withdraw("w1", 1_001))
    assert isinstance(err, WithdrawalOverLimit)
    assert (err.reason, err.kind) == ("WITHDRAWAL_OVER_LIMIT", "precondition")
    assert err.metadata() == {"account": "cash/ann", "amount": "1001", "limit": "1000"}
    w.run(withdraw("w1", 1_000))  # the limit itself is allowed
    assert w.balance("cash/ann") == 9_000
    assert w.state.withdrawal_days == {"cash/ann": ("2026-11-27", 1_000)}


def test_the_daily_total_per_account_resets_on_the_next_utc_day() -> None:
    w = funded("ann", "bob")
    w.run(withdraw("w1", 1_000))
    w.run(withdraw("w2", 1_000))
    w.run(withdraw("x1", 1_000, player="bob"))  # another account has its own total
    err = refused(w, withdraw("w3", 501))
    assert isinstance(err, DailyWithdrawalLimitReached)
    assert (err.reason, err.kind) == ("DAILY_WITHDRAWAL_LIMIT_REACHED", "exhausted")
    assert err.metadata() == {"account": "cash/ann", "amount": "501", "withdrawn": "2000", "limit": "2500"}
    w.run(withdraw("w3", 500))
    # A deposit gives no room back: the limit counts money out.
    w.run(Deposit(request_id="d1", player="ann", amount=2_000))
    assert isinstance(refused(w, withdraw("w4", 1)), DailyWithdrawalLimitReached)
    w.run(withdraw("w4", 1_000, at=DAY2))
    assert w.state.withdrawal_days["cash/ann"] == ("2026-11-28", 1_000)
    assert w.state.withdrawal_days["cash/bob"] == ("2026-11-27", 1_000)
    assert w.state.deposit_days == {}  # undated deposits: the two totals are kept apart


def test_a_clock_that_stepped_back_counts_against_the_later_day() -> None:
    w = funded("ann")
    w.run(withdraw("w1", 1_000, at=DAY2))
    w.run(withdraw("w2", 1_000, at=DAY1))
    assert w.state.withdrawal_days["cash/ann"] == ("2026-11-28", 2_000)
    err = refused(w, withdraw("w3", 600, at=DAY1))
    assert isinstance(err, DailyWithdrawalLimitReached)
    assert err.withdrawn == 2_000
    w.run(withdraw("w3", 500, at=DAY1 - dt.timedelta(days=3)))
    assert w.state.withdrawal_days["cash/ann"] == ("2026-11-28", 2_500)


def test_a_withdrawal_refused_for_funds_counts_nothing() -> None:
    w = funded("ann", amount=800)
    with pytest.raises(InsufficientFunds):
        decide(w.state, withdraw("w1", 900))
    assert w.state.withdrawal_days == {}
    w.run(withdraw("w1", 800))
    assert w.state.withdrawal_days == {"cash/ann": ("2026-11-27", 800)}


def test_a_retry_is_answered_as_a_duplicate_whatever_the_limits_now() -> None:
    w = funded("ann")
    w.run(withdraw("w1", 1_000))
    w.run(withdraw("w2", 1_000))
    w.run(withdraw("w3", 500))
    decision, records = w.run(withdraw("w1", 1_000))
    assert decision.duplicate
    assert records[0].amount == 1_000
    # Even under a per-request limit lowered since, and on a later day.
    tighter = Withdraw(
        request_id="w1",
        player="ann",
        amount=1_000,
        at=DAY2,
        limits=WithdrawalLimits(max_withdrawal=10, daily_withdrawal=10),
    )
    assert decide(w.state, tighter).duplicate
    # The same request id for another amount is a reused id, not a limit.
    with pytest.raises(TransferIdReused):
        decide(w.state, withdraw("w1", 999))
    assert w.state.withdrawal_days == {"cash/ann": ("2026-11-27", 2_500)}


def test_the_daily_total_survives_a_restart_from_the_log_and_from_a_snapshot() -> None:
    w = funded("ann")
    w.run(withdraw("w1", 1_000))
    w.run(withdraw("w2", 1_000))
    replayed = fold(e for message in w.log for e in load_events(dump_events(message)))
    assert encode_state(replayed) == encode_state(w.state)
    assert replayed.withdrawal_days == {"cash/ann": ("2026-11-27", 2_000)}
    snap = decode_state(encode_state(w.state))
    assert snap.withdrawal_days == w.state.withdrawal_days
    for state in (replayed, snap):
        with pytest.raises(DailyWithdrawalLimitReached):
            decide(state, withdraw("w3", 501))
        assert decide(state, withdraw("w3", 500)).events


def test_logs_and_snapshots_without_withdrawal_days_still_load() -> None:
    w = funded("ann")
    w.run(Withdraw(request_id="w0", player="ann", amount=3_000))  # undated: written as before
    assert "day" not in dump_events(w.log[-1]).decode()
    old = encode_state(w.state)
    del old["withdrawal_days"]
    for state in (decode_state(old), fold(e for m in w.log for e in load_events(dump_events(m)))):
        assert state.withdrawal_days == {}
        assert state.balance("cash/ann").balance == 7_000
        assert decide(state, withdraw("w1", 1_000)).events


def test_a_withdrawal_under_a_daily_limit_needs_its_time() -> None:
    w = funded("ann")
    with pytest.raises(ValueError, match=r"Withdraw\.at"):
        decide(w.state, Withdraw(request_id="w1", player="ann", amount=1, limits=LIMITS))
    undated = Withdraw(request_id="w1", player="ann", amount=1, limits=WithdrawalLimits(max_withdrawal=5))
    assert decide(w.state, undated).events
