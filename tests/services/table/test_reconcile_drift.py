"""Escrow reconciliation reports a seat whose escrow drifted from its stack: an ``escrow.drift``
warning once the drift stayed unchanged for the grace, ``Reconciler.drifts`` while it lasts, and
no money moved for it (an operator must act)."""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from openpoker.dispute.escrow import EscrowDrift
from openpoker.services.table.reconcile import Reconciler, Seats, seat_drifts
from openpoker.services.table.wallet import Escrow


def escrow(player: str, balance: int, *, reserved: int = 0) -> Escrow:
    return Escrow(player=player, balance=balance, reserved=reserved, credited=balance, debited=0)


class Wallet:
    def __init__(self, escrows: Sequence[Escrow]) -> None:
        self.escrows_now = tuple(escrows)
        self.cash_outs: list[tuple[str, int]] = []

    async def escrows(self, table_id: str) -> tuple[Escrow, ...]:
        return self.escrows_now

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None:
        self.cash_outs.append((player, amount))


class Side:
    def __init__(self, seats: Seats, *, busy: frozenset[str] = frozenset()) -> None:
        self.seats_now = seats
        self.busy = busy

    async def claim(self) -> None:
        return None

    async def reconcilable_tables(self) -> list[str]:
        return ["t1"]

    async def log_holders(self, table_id: str) -> frozenset[str] | None:
        return frozenset(self.seats_now.stacks)

    def money_in_flight(self, table_id: str) -> frozenset[str]:
        return self.busy

    async def escrow_holders(self, table_id: str) -> frozenset[str]:
        return frozenset(self.seats_now.stacks)

    async def seats(self, table_id: str, *, read: bool) -> Seats | None:
        return self.seats_now


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def between_hands(**stacks: int) -> Seats:
    return Seats(stacks=stacks, in_hand=False)


def test_a_reserved_escrow_is_compared_only_while_the_log_is_in_the_hand() -> None:
    escrows = [escrow("ann", 200, reserved=200), escrow("bob", 150)]
    # The log ended the hand (ann won 20), the wallet has not settled it: ann is not compared.
    assert seat_drifts("t1", escrows=escrows, seats=between_hands(ann=220, bob=150), busy=frozenset()) == []
    # During the hand the stack is the one it started with, the escrow's posted balance.
    during = Seats(stacks={"ann": 200, "bob": 150}, in_hand=True)
    assert seat_drifts("t1", escrows=escrows, seats=during, busy=frozenset()) == []
    during = Seats(stacks={"ann": 210, "bob": 150}, in_hand=True)
    assert seat_drifts("t1", escrows=escrows, seats=during, busy=frozenset()) == [
        EscrowDrift(table_id="t1", player="ann", stack=210, escrow=200)
    ]


def test_a_player_with_money_in_flight_is_not_compared() -> None:
    seats = between_hands(ann=200)
    assert seat_drifts("t1", escrows=[escrow("ann", 500)], seats=seats, busy=frozenset({"ann"})) == []


async def test_an_emptied_escrow_is_logged_once_after_the_grace_and_no_money_moves() -> None:
    # bob's escrow was emptied behind the table's back: the wallet no longer lists it.
    wallet = Wallet([escrow("ann", 200)])
    side = Side(between_hands(ann=200, bob=180))
    clock = Clock()
    with structlog.testing.capture_logs() as logs:
        reconciler = Reconciler(wallet=wallet, side=side, every=3600.0, grace=30.0, clock=clock)
        await reconciler.run_once("t1")  # first sighting
        assert reconciler.drifts == {}
        clock.now += 10.0
        await reconciler.run_once("t1")  # still within the grace
        assert reconciler.drifts == {}
        clock.now += 25.0
        await reconciler.run_once("t1")
        clock.now += 60.0
        await reconciler.run_once("t1")  # still there: reported, not logged again
    bob = EscrowDrift(table_id="t1", player="bob", stack=180, escrow=0)
    assert reconciler.drifts == {"t1": (bob,)}
    drift_logs = [e for e in logs if e["event"] == "escrow.drift"]
    assert drift_logs == [
        {
            "event": "escrow.drift",
            "log_level": "warning",
            "table_id": "t1",
            "player": "bob",
            "table_stack": 180,
            "escrow": 0,
        }
    ]
    assert wallet.cash_outs == []  # ann is seated, bob's drift is for an operator
    # An operator puts it right: the drift is gone.
    wallet.escrows_now = (escrow("ann", 200), escrow("bob", 180))
    await reconciler.run_once("t1")
    assert reconciler.drifts == {}


async def test_a_drift_that_changes_starts_over() -> None:
    wallet = Wallet([escrow("ann", 100)])
    side = Side(between_hands(ann=200))
    clock = Clock()
    reconciler = Reconciler(wallet=wallet, side=side, every=3600.0, grace=30.0, clock=clock)
    await reconciler.run_once("t1")
    clock.now += 40.0
    wallet.escrows_now = (escrow("ann", 90),)
    await reconciler.run_once("t1")
    assert reconciler.drifts == {}
    clock.now += 40.0
    await reconciler.run_once("t1")
    assert reconciler.drifts == {"t1": (EscrowDrift(table_id="t1", player="ann", stack=200, escrow=90),)}
