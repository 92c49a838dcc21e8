"""The pure parts of escrow reconciliation and of the background retries: what to return,
when, under which id; which wallet refusals are worth another try, and how long to wait."""

from __future__ import annotations

import re

import grpc
import pytest

from openpoker.services.table.reconcile import RETURN_PREFIX, Plan, Return, Sighting, plan, return_id
from openpoker.services.table.retrying import RETRY_CAP, permanent, retry_delay
from openpoker.services.table.wallet import Escrow, WalletRefused

WALLET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")  # the wallet's request-id alphabet


def escrow(
    player: str = "bob", balance: int = 200, *, reserved: int = 0, credited: int = 200, debited: int = 0
) -> Escrow:
    return Escrow(player=player, balance=balance, reserved=reserved, credited=credited, debited=debited)


def run(
    escrows: list[Escrow],
    *,
    holders: frozenset[str] = frozenset(),
    busy: frozenset[str] = frozenset(),
    sightings: dict[str, Sighting] | None = None,
    now: float = 100.0,
    grace: float = 30.0,
) -> Plan:
    return plan(
        table_id="t1",
        escrows=escrows,
        holders=holders,
        busy=busy,
        sightings=sightings or {},
        now=now,
        grace=grace,
    )


def test_an_orphan_is_returned_once_it_stayed_unchanged_for_the_grace() -> None:
    first = run([escrow()], now=100.0)
    assert first.returns == ()
    assert first.sightings == {"bob": Sighting(escrow=escrow(), since=100.0)}
    early = run([escrow()], sightings=dict(first.sightings), now=129.9)
    assert early.returns == ()
    assert early.sightings == first.sightings  # the first sighting is kept, not renewed
    due = run([escrow()], sightings=dict(early.sightings), now=130.0)
    assert due.returns == (Return(player="bob", amount=200, request_id=return_id("t1", escrow())),)


def test_an_escrow_that_changed_starts_over() -> None:
    seen = run([escrow()], now=0.0).sightings
    moved = escrow(balance=500, credited=500)  # another buy-in landed since
    later = run([moved], sightings=dict(seen), now=1000.0)
    assert later.returns == ()
    assert later.sightings == {"bob": Sighting(escrow=moved, since=1000.0)}


@pytest.mark.parametrize(
    ("holders", "busy", "reserved"),
    [
        (frozenset({"bob"}), frozenset(), 0),  # seated (or left the live hand)
        (frozenset(), frozenset({"bob"}), 0),  # a join, refund or cash-out in flight here
        (frozenset(), frozenset(), 50),  # a hand holds part of it in the wallet
    ],
)
def test_escrow_the_table_accounts_for_is_left_alone_and_forgotten(
    holders: frozenset[str], busy: frozenset[str], reserved: int
) -> None:
    seen = {"bob": Sighting(escrow=escrow(reserved=reserved), since=0.0)}
    out = run([escrow(reserved=reserved)], holders=holders, busy=busy, sightings=seen, now=1000.0)
    assert out == Plan(returns=(), sightings={})


def test_only_the_unaccounted_players_are_returned() -> None:
    escrows = [escrow("ann", 300, credited=300), escrow("bob"), escrow("cy", 0, credited=80, debited=80)]
    seen = run(escrows, holders=frozenset({"ann"}), now=0.0).sightings
    out = run(escrows, holders=frozenset({"ann"}), sightings=dict(seen), now=60.0)
    assert [(r.player, r.amount) for r in out.returns] == [("bob", 200)]


def test_the_return_id_is_deterministic_short_and_names_the_orphan() -> None:
    e = escrow()
    assert return_id("t1", e) == return_id("t1", escrow())  # any pass, any instance
    others = {
        return_id("t2", e),
        return_id("t1", escrow("ann")),
        return_id("t1", escrow(credited=400)),
        return_id("t1", escrow(debited=1)),
    }
    assert return_id("t1", e) not in others
    assert len(others) == 4
    long_id = return_id("t" * 128, escrow("p" * 128))
    for rid in (return_id("t1", e), long_id):
        assert rid.startswith(RETURN_PREFIX)
        assert WALLET_ID.fullmatch(rid)


def test_retry_delays_double_up_to_the_cap() -> None:
    delays = [retry_delay(n) for n in range(40)]
    assert delays[:4] == [0.2, 0.4, 0.8, 1.6]
    assert max(delays) == RETRY_CAP == delays[-1]
    assert delays == sorted(delays)
    assert sum(delays) > 600  # tries go on well past the old two minutes


def refusal(code: grpc.StatusCode, reason: str) -> WalletRefused:
    return WalletRefused(code=code, reason=reason, message="no", metadata={})


@pytest.mark.parametrize(
    ("exc", "final"),
    [
        (refusal(grpc.StatusCode.UNAVAILABLE, "LEDGER_UNAVAILABLE"), False),
        (refusal(grpc.StatusCode.DEADLINE_EXCEEDED, ""), False),
        (refusal(grpc.StatusCode.FAILED_PRECONDITION, "HAND_NOT_CLOSED"), False),
        (refusal(grpc.StatusCode.FAILED_PRECONDITION, "PLAYER_IN_HAND"), False),
        (ConnectionError("reset"), False),
        (refusal(grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS"), True),
        (refusal(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_AMOUNT"), True),
        (refusal(grpc.StatusCode.ALREADY_EXISTS, "TRANSFER_ID_REUSED"), True),
        (refusal(grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), True),
    ],
)
def test_which_refusals_are_final(exc: Exception, final: bool) -> None:
    assert permanent(exc) is final
