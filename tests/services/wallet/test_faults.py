"""Deterministic fault injection (VOPR-style, research/wallet.md §5): lost appends, lost acks,
failed snapshots and wallet restarts at random points, while a driver retries every command.

The event store is the in-memory one behind a faulty proxy: an append may be dropped before it
is stored, or stored with its acknowledgement lost; snapshots may fail; between any two
attempts the wallet may "crash" (a new ``WalletApp`` loads from the store). After each seed's
run: the audit passes, every balance equals the model's, and no request id is in two messages.
"""

from __future__ import annotations

import random
from collections import Counter

import grpc
import pytest

from openpoker.engine.rake import compute_rake
from openpoker.engine.rules import RakeRules
from openpoker.eventstore import AppendResult, AppendUnresolved, Envelope, Snapshot, StoredEnvelope
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.ledger import accounts
from openpoker.ledger.audit import audit
from openpoker.ledger.commands import (
    BuyIn,
    CashOut,
    Command,
    Deposit,
    OpenHand,
    PlayerAmount,
    SettleHand,
    VoidHand,
    Withdraw,
)
from openpoker.ledger.events import Event
from openpoker.ledger.store import SUBJECT, WalletStore, from_recorded
from openpoker.services.wallet.app import WalletApp
from openpoker.services.wallet.errors import LedgerUnavailable
from openpoker.shell.errors import to_status

PLAYERS = ("a", "b", "c")
RAKE = RakeRules(basis_points=450, caps=((2, 40), (3, 90)))


class FaultyStore:
    """The ``EventStore`` port with injected faults (seeded)."""

    def __init__(self, inner: InMemoryEventStore, rng: random.Random) -> None:
        self.inner = inner
        self.rng = rng
        self.dropped = 0
        self.acks_lost = 0

    async def append(self, subject: str, envelope: Envelope, *, expected_sequence: int) -> AppendResult:
        roll = self.rng.random()
        if roll < 0.15:
            self.dropped += 1
            raise AppendUnresolved(subject=subject, msg_id=envelope.msg_id, attempts=1)
        result = await self.inner.append(subject, envelope, expected_sequence=expected_sequence)
        if roll < 0.30:
            self.acks_lost += 1
            raise AppendUnresolved(subject=subject, msg_id=envelope.msg_id, attempts=1)
        return result

    async def last(self, subject: str) -> StoredEnvelope | None:
        return await self.inner.last(subject)

    async def read(
        self, subject: str, *, after_sequence: int = 0, from_version: int = 1
    ) -> list[StoredEnvelope]:
        return await self.inner.read(subject, after_sequence=after_sequence, from_version=from_version)

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        if self.rng.random() < 0.3:
            raise ConnectionError("snapshot lost")
        await self.inner.save_snapshot(snapshot)

    async def load_snapshot(self, stream_id: str) -> Snapshot | None:
        return await self.inner.load_snapshot(stream_id)


class Model:
    def __init__(self) -> None:
        self.balances: Counter[str] = Counter()
        self.seats: dict[str, int] = {}
        self.hand_no = 0
        self.rakes = 0

    def next_commands(self, rng: random.Random, n: int) -> list[tuple[Command, ...]]:
        """A valid script: each item is one step (a hand is open + settle or void)."""
        steps: list[tuple[Command, ...]] = []
        for i in range(n):
            rid = f"r{i}"
            p = rng.choice(PLAYERS)
            cash = self.balances[accounts.cash(p)]
            kind = rng.choice(("deposit", "withdraw", "buy_in", "cash_out", "hand", "hand"))
            if kind == "withdraw" and cash > 0:
                amount = rng.randint(1, cash)
                steps.append((Withdraw(request_id=rid, player=p, amount=amount),))
                self.balances[accounts.cash(p)] -= amount
            elif kind == "buy_in" and cash > 0:
                amount = rng.randint(1, cash)
                steps.append((BuyIn(request_id=rid, table_id="t", player=p, amount=amount),))
                self.balances[accounts.cash(p)] -= amount
                self.seats[p] = self.seats.get(p, 0) + amount
            elif kind == "cash_out" and self.seats.get(p, 0) > 0:
                steps.append((CashOut(request_id=rid, table_id="t", player=p),))
                self.balances[accounts.cash(p)] += self.seats[p]
                self.seats[p] = 0
            elif kind == "hand" and sum(1 for v in self.seats.values() if v > 0) >= 2:
                steps.append(self._hand(rng, rid))
            else:
                amount = rng.randint(1, 5000)
                steps.append((Deposit(request_id=rid, player=p, amount=amount),))
                self.balances[accounts.cash(p)] += amount
        return steps

    def _hand(self, rng: random.Random, rid: str) -> tuple[Command, ...]:
        self.hand_no += 1
        dealt = [p for p, v in sorted(self.seats.items()) if v > 0]
        stacks = tuple(PlayerAmount(player=p, amount=self.seats[p]) for p in dealt)
        opened = OpenHand(request_id=f"{rid}o", table_id="t", hand_no=self.hand_no, stacks=stacks, rake=RAKE)
        if rng.random() < 0.25:
            return opened, VoidHand(request_id=f"{rid}v", table_id="t", hand_no=self.hand_no)
        put = {p: rng.randint(0, self.seats[p]) for p in dealt}
        pot = sum(put.values())
        saw_flop = rng.random() < 0.6
        rake = compute_rake(RAKE, pot=pot, players_dealt_in=len(dealt), saw_flop=saw_flop)
        winners = rng.sample(dealt, rng.randint(1, len(dealt)))
        share, odd = divmod(pot - rake, len(winners))
        payouts = {w: share + (odd if k == 0 else 0) for k, w in enumerate(winners)}
        for p, a in put.items():
            self.seats[p] -= a
        for p, a in payouts.items():
            self.seats[p] += a
        self.rakes += rake
        settle = SettleHand(
            request_id=f"{rid}s",
            table_id="t",
            hand_no=self.hand_no,
            contributions=tuple(PlayerAmount(player=p, amount=a) for p, a in put.items()),
            payouts=tuple(PlayerAmount(player=p, amount=a) for p, a in payouts.items()),
            rake=rake,
            saw_flop=saw_flop,
        )
        return opened, settle


async def _start(store: WalletStore) -> WalletApp:
    for _ in range(50):
        app = WalletApp(store, currency="CHIPS", snapshot_every=4)
        try:
            await app.start()
        except AppendUnresolved:
            continue
        return app
    raise AssertionError("the wallet never started")


@pytest.mark.parametrize("seed", range(6))
async def test_faults_and_restarts_never_lose_or_repeat_money(seed: int) -> None:
    rng = random.Random(seed)
    inner = InMemoryEventStore()
    faulty = FaultyStore(inner, random.Random(seed * 7919 + 1))
    store = WalletStore(faulty)
    app = await _start(store)
    model = Model()
    restarts = duplicates = 0
    for step in model.next_commands(rng, 120):
        for command in step:
            for _ in range(100):
                if rng.random() < 0.1:
                    app = await _start(store)  # crash: memory gone, rebuilt from the store
                    restarts += 1
                try:
                    outcome = await app.execute(command)
                except AppendUnresolved:
                    continue
                duplicates += outcome.duplicate
                break
            else:
                raise AssertionError(f"{command} never went through")
    app = await _start(store)
    state = app.state
    for account, amount in model.balances.items():
        assert state.balance(account).balance == amount, account
    for player, amount in model.seats.items():
        seat = state.balance(accounts.escrow("t", player))
        assert (seat.balance, seat.debits_pending) == (amount, 0)
    assert state.balance(accounts.HOUSE_RAKE).balance == model.rakes

    stored = await inner.read(SUBJECT)
    messages = [(s.envelope.command_id, s.envelope) for s in stored]
    report, _ = audit(event for _, env in messages for event in _events(env))
    assert report.ok, report.breaches
    repeated = [rid for rid, n in Counter(rid for rid, _ in messages).items() if n > 1]
    assert repeated == []
    # The run must have exercised what it claims to.
    assert faulty.dropped > 5
    assert faulty.acks_lost > 5
    assert restarts > 5
    assert duplicates > 0


def _events(env: Envelope) -> list[Event]:
    return [from_recorded(r) for r in env.events]


class Unreachable(FaultyStore):
    async def read(
        self, subject: str, *, after_sequence: int = 0, from_version: int = 1
    ) -> list[StoredEnvelope]:
        raise ConnectionResetError("nats went away")


async def test_an_unreadable_ledger_is_unavailable_not_internal() -> None:
    app = WalletApp(WalletStore(Unreachable(InMemoryEventStore(), random.Random(0))), currency="CHIPS")
    with pytest.raises(LedgerUnavailable) as info:
        await app.start()
    assert info.value.reason == "LEDGER_UNAVAILABLE"
    assert to_status(info.value, domain="poker.wallet").code == grpc.StatusCode.UNAVAILABLE
