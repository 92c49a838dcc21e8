"""Deposit limits in the pure core: given deposits, when one more is asked, then it is accepted or
refused with a typed error, the state unchanged; the daily total is rebuilt from the log."""

from __future__ import annotations

import datetime as dt

import pytest

from openpoker.ledger.codec import decode_state, dump_events, encode_state, load_events
from openpoker.ledger.commands import Deposit, Withdraw
from openpoker.ledger.decider import decide, fold
from openpoker.ledger.errors import BalanceCeiling, DailyLimitReached, DepositOverLimit
from openpoker.ledger.limits import DepositLimits, day_of

from .helpers import MemoryWallet

LIMITS = DepositLimits(max_deposit=1_000, daily_deposit=2_500, max_balance=4_000)
DAY1 = dt.datetime(2026, 11, 27, 23, 59, tzinfo=dt.UTC)
DAY2 = dt.datetime(2026, 11, 28, 0, 1, tzinfo=dt.UTC)


def deposit(rid: str, amount: int, at: dt.datetime = DAY1, player: str = "ann") -> Deposit:
    return Deposit(request_id=rid, player=player, amount=amount, at=at, limits=LIMITS)


def refused(w: MemoryWallet, command: Deposit) -> Exception:
    before = encode_state(w.state)
    with pytest.raises((DepositOverLimit, DailyLimitReached, BalanceCeiling)) as err:
        decide(w.state, command)
    assert encode_state(w.state) == before
    return err.value


def test_one_deposit_over_the_limit_is_refused() -> None:
    w = MemoryWallet()
    err = refused(w, deposit("d1", 1_001))
    assert isinstance(err, DepositOverLimit)
    assert (err.reason, err.kind, err.metadata()["limit"]) == ("DEPOSIT_OVER_LIMIT", "precondition", "1000")
    w.run(deposit("d1", 1_000))  # the limit itself is allowed
    assert w.balance("cash/ann") == 1_000


def test_the_daily_total_per_account_resets_on_the_next_utc_day() -> None:
    w = MemoryWallet()
    w.run(deposit("d1", 1_000))
    w.run(deposit("d2", 1_000))
    w.run(deposit("x1", 1_000, player="bob"))  # another account has its own total
    err = refused(w, deposit("d3", 501))
    assert isinstance(err, DailyLimitReached)
    assert (err.reason, err.kind) == ("DAILY_LIMIT_REACHED", "exhausted")
    assert err.metadata() | {} == {
        "account": "cash/ann",
        "amount": "501",
        "deposited": "2000",
        "limit": "2500",
    }
    w.run(deposit("d3", 500))
    # A withdrawal gives no room back: the limit counts money in.
    w.run(Withdraw(request_id="w1", player="ann", amount=2_000))
    assert isinstance(refused(w, deposit("d4", 1)), DailyLimitReached)
    w.run(deposit("d4", 1_000, at=DAY2))
    assert w.state.deposit_days["cash/ann"] == ("2026-11-28", 1_000)
    # A clock that stepped back still counts against the latest day.
    w.run(deposit("d5", 1_000, at=DAY1))
    assert w.state.deposit_days["cash/ann"] == ("2026-11-28", 2_000)
    assert isinstance(refused(w, deposit("d6", 600, at=DAY1)), DailyLimitReached)


def test_a_deposit_may_not_lift_the_balance_above_the_ceiling() -> None:
    w = MemoryWallet()
    for day in range(2):
        at = DAY1 + dt.timedelta(days=day)
        w.run(deposit(f"a{day}", 1_000, at=at))
        w.run(deposit(f"b{day}", 1_000, at=at))
    err = refused(w, deposit("c", 1, at=DAY1 + dt.timedelta(days=2)))
    assert isinstance(err, BalanceCeiling)
    assert (err.reason, err.metadata()["limit"], err.metadata()["balance"]) == (
        "BALANCE_CEILING",
        "4000",
        "4000",
    )


def test_a_retry_answers_the_first_result_whatever_the_limits_now() -> None:
    w = MemoryWallet()
    w.run(deposit("d1", 1_000))
    w.run(deposit("d2", 1_000))
    w.run(deposit("d3", 500))
    decision, records = w.run(deposit("d1", 1_000))
    assert decision.duplicate
    assert records[0].amount == 1_000


def test_the_daily_total_survives_a_restart_from_the_log_and_from_a_snapshot() -> None:
    w = MemoryWallet()
    w.run(deposit("d1", 1_000))
    w.run(deposit("d2", 1_000))
    replayed = fold(e for message in w.log for e in load_events(dump_events(message)))
    assert encode_state(replayed) == encode_state(w.state)
    assert replayed.deposit_days == {"cash/ann": ("2026-11-27", 2_000)}
    snap = decode_state(encode_state(w.state))
    assert snap.deposit_days == w.state.deposit_days
    for state in (replayed, snap):
        with pytest.raises(DailyLimitReached):
            decide(state, deposit("d3", 501))


def test_without_limits_nothing_is_counted_against_anyone() -> None:
    w = MemoryWallet()
    w.run(Deposit(request_id="d1", player="ann", amount=10**12))
    assert w.state.deposit_days == {}
    assert "day" not in dump_events(w.log[-1]).decode()  # undated deposits are written as before


def test_the_day_is_the_utc_date_of_an_aware_time() -> None:
    assert day_of(dt.datetime(2026, 11, 28, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=5)))) == "2026-11-27"
    with pytest.raises(ValueError, match="timezone-aware"):
        day_of(dt.datetime(2026, 11, 28))
