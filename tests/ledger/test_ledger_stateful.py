"""Hypothesis stateful test of the ledger against an independent model (research/wallet.md §5).

Rules mix deposits, withdrawals, buy-ins, cash-outs, hands opened, settled (correctly or with
sums that do not add up) and voided, exact retries, mutated retries and restarts from the log
(full replay, and snapshot + tail). After every step:

- the audit of the whole log finds no breach: total debits equal total credits, everything
  outside the world equals deposits minus withdrawals, no negative balance outside the world,
  each hand settled or voided at most once, house rake equals the sum of per-hand rakes;
- every balance equals the model's (a plain dict of what each player should hold);
- a rebuild from the log equals the live state.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    rule,
)

from openpoker.engine.rake import compute_rake
from openpoker.engine.rules import RakeRules
from openpoker.ledger import accounts
from openpoker.ledger.audit import audit
from openpoker.ledger.codec import decode_state, encode_state
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
from openpoker.ledger.decider import LedgerState, fold
from openpoker.ledger.errors import (
    HandAlreadySettled,
    HandAlreadyVoided,
    InsufficientFunds,
    LedgerError,
    PlayerInHand,
    SettlementMismatch,
    TransferIdReused,
    UnknownAccount,
)

from .helpers import MemoryWallet

pytestmark = pytest.mark.slow  # 150 runs of up to 50 steps: over 10 s on 2 shared cores

PLAYERS = ("ann", "bob", "cyd", "dee")
TABLES = ("t1", "t2")
RAKE = RakeRules(basis_points=500, caps=((2, 50), (3, 100), (5, 150)))

amounts = st.integers(min_value=1, max_value=5_000)
Outcome = Command | MultipleResults[Command]  # nothing joins the bundle when refused


class LedgerMachine(RuleBasedStateMachine):
    done = Bundle("done")  # commands the wallet accepted, for retries
    open_hands = Bundle("open_hands")

    @initialize()
    def start(self) -> None:
        self.wallet = MemoryWallet()
        self.counter = 0
        self.cash: dict[str, int] = {}
        self.seat: dict[tuple[str, str], int] = {}
        self.reserved: dict[tuple[str, str], int] = {}  # (table, player) -> stack in a hand
        self.hand_no = dict.fromkeys(TABLES, 0)
        self.deposits = 0
        self.withdrawals = 0
        self.rakes: dict[tuple[str, int], int] = {}
        self.closed: dict[tuple[str, int], str] = {}
        # Everyone starts with cash and a seat at each table, so hands happen early.
        for player in PLAYERS:
            self.deposit(player, 20_000)
            for table in TABLES:
                self.buy_in(table, player, 5_000)

    def rid(self) -> str:
        self.counter += 1
        return f"r{self.counter}"

    def refused(self, command: Command) -> LedgerError:
        before = encode_state(self.wallet.state)
        messages = len(self.wallet.log)
        try:
            self.wallet.run(command)
        except LedgerError as error:
            assert encode_state(self.wallet.state) == before
            assert len(self.wallet.log) == messages
            return error
        raise AssertionError(f"{command} was accepted")

    def accepted(self, command: Command) -> Command:
        decision, _ = self.wallet.run(command)
        assert not decision.duplicate
        return command

    # -- money in and out ---------------------------------------------------------------
    @rule(target=done, player=st.sampled_from(PLAYERS), amount=amounts)
    def deposit(self, player: str, amount: int) -> Command:
        self.cash[player] = self.cash.get(player, 0) + amount
        self.deposits += amount
        return self.accepted(Deposit(request_id=self.rid(), player=player, amount=amount))

    @rule(target=done, player=st.sampled_from(PLAYERS), amount=amounts)
    def withdraw(self, player: str, amount: int) -> Outcome:
        command = Withdraw(request_id=self.rid(), player=player, amount=amount)
        if player not in self.cash:
            assert isinstance(self.refused(command), UnknownAccount)
            return multiple()
        if self.cash[player] < amount:
            assert isinstance(self.refused(command), InsufficientFunds)
            return multiple()
        self.cash[player] -= amount
        self.withdrawals += amount
        return self.accepted(command)

    @rule(target=done, table=st.sampled_from(TABLES), player=st.sampled_from(PLAYERS), amount=amounts)
    def buy_in(self, table: str, player: str, amount: int) -> Outcome:
        command = BuyIn(request_id=self.rid(), table_id=table, player=player, amount=amount)
        if (table, player) in self.reserved:
            assert isinstance(self.refused(command), PlayerInHand)
            return multiple()
        if player not in self.cash:
            assert isinstance(self.refused(command), UnknownAccount)
            return multiple()
        if self.cash[player] < amount:
            assert isinstance(self.refused(command), InsufficientFunds)
            return multiple()
        self.cash[player] -= amount
        self.seat[table, player] = self.seat.get((table, player), 0) + amount
        return self.accepted(command)

    @rule(
        target=done,
        table=st.sampled_from(TABLES),
        player=st.sampled_from(PLAYERS),
        amount=st.none() | amounts,
    )
    def cash_out(self, table: str, player: str, amount: int | None) -> Outcome:
        command = CashOut(request_id=self.rid(), table_id=table, player=player, amount=amount)
        have = self.seat.get((table, player))
        if have is None:
            assert isinstance(self.refused(command), UnknownAccount)
            return multiple()
        if (table, player) in self.reserved:
            assert isinstance(self.refused(command), PlayerInHand)
            return multiple()
        take = have if amount is None else amount
        if take == 0 or take > have:
            assert isinstance(self.refused(command), LedgerError)
            return multiple()
        self.seat[table, player] -= take
        self.cash[player] += take
        return self.accepted(command)

    # -- hands --------------------------------------------------------------------------
    @rule(target=open_hands, table=st.sampled_from(TABLES), data=st.data())
    def open_hand(self, table: str, data: st.DataObject) -> OpenHand | MultipleResults[OpenHand]:
        idle = [p for p in PLAYERS if self.seat.get((table, p), 0) > 0 and (table, p) not in self.reserved]
        if len(idle) < 2:
            return multiple()
        players = data.draw(st.lists(st.sampled_from(idle), min_size=2, unique=True))
        self.hand_no[table] += 1
        stacks = tuple(PlayerAmount(player=p, amount=self.seat[table, p]) for p in players)
        command = OpenHand(
            request_id=self.rid(), table_id=table, hand_no=self.hand_no[table], stacks=stacks, rake=RAKE
        )
        self.accepted(command)
        event("opened")
        for s in stacks:
            self.reserved[table, s.player] = s.amount
        return command

    def _settlement(self, hand: OpenHand, data: st.DataObject) -> tuple[SettleHand, dict[str, int], int]:
        contributions = {
            s.player: data.draw(st.integers(0, s.amount), label=f"contribution {s.player}")
            for s in hand.stacks
        }
        pot = sum(contributions.values())
        saw_flop = data.draw(st.booleans(), label="saw_flop")
        rake = compute_rake(RAKE, pot=pot, players_dealt_in=len(hand.stacks), saw_flop=saw_flop)
        winners = data.draw(
            st.lists(st.sampled_from([s.player for s in hand.stacks]), min_size=1, unique=True),
            label="winners",
        )
        share, odd = divmod(pot - rake, len(winners))
        payouts = {w: share + (odd if i == 0 else 0) for i, w in enumerate(winners)}
        command = SettleHand(
            request_id=self.rid(),
            table_id=hand.table_id,
            hand_no=hand.hand_no,
            contributions=tuple(PlayerAmount(player=p, amount=a) for p, a in contributions.items()),
            payouts=tuple(PlayerAmount(player=p, amount=a) for p, a in payouts.items()),
            rake=rake,
            saw_flop=saw_flop,
        )
        return command, payouts, rake

    def _release(self, hand: OpenHand) -> None:
        for s in hand.stacks:
            del self.reserved[hand.table_id, s.player]

    @rule(target=done, hand=consumes(open_hands), data=st.data())
    def settle_hand(self, hand: OpenHand, data: st.DataObject) -> Command:
        command, payouts, rake = self._settlement(hand, data)
        if data.draw(st.booleans(), label="tamper"):
            # One chip too many to the first winner: the wallet must refuse and move nothing.
            first = command.payouts[0]
            bad = replace(command, payouts=(replace(first, amount=first.amount + 1), *command.payouts[1:]))
            assert isinstance(self.refused(bad), SettlementMismatch)
        self.accepted(command)
        event("settled")
        for c in command.contributions:
            self.seat[hand.table_id, c.player] -= c.amount
        for p, a in payouts.items():
            self.seat[hand.table_id, p] += a
        self.rakes[hand.table_id, hand.hand_no] = rake
        self.closed[hand.table_id, hand.hand_no] = "settled"
        self._release(hand)
        return command

    @rule(target=done, hand=consumes(open_hands))
    def void_hand(self, hand: OpenHand) -> Command:
        command = VoidHand(request_id=self.rid(), table_id=hand.table_id, hand_no=hand.hand_no)
        self.accepted(command)
        self.closed[hand.table_id, hand.hand_no] = "voided"
        self._release(hand)
        return command

    # -- retries and restarts -----------------------------------------------------------
    @rule(command=done)
    def exact_retry(self, command: Command) -> None:
        before = encode_state(self.wallet.state)
        decision, _ = self.wallet.run(command)
        assert decision.duplicate
        assert encode_state(self.wallet.state) == before

    @rule(command=done, bump=st.integers(1, 3))
    def mutated_retry(self, command: Command, bump: int) -> None:
        match command:
            case Deposit() | Withdraw() | BuyIn():
                error = self.refused(replace(command, amount=command.amount + bump))
                assert isinstance(error, TransferIdReused)
            case CashOut():
                recorded = self.wallet.state.transfers[f"cash_out/{command.request_id}"].amount
                assert isinstance(self.refused(replace(command, amount=recorded + bump)), TransferIdReused)
            case SettleHand():
                first = command.payouts[0]
                bad = replace(
                    command, payouts=(replace(first, amount=first.amount + bump), *command.payouts[1:])
                )
                assert isinstance(self.refused(bad), HandAlreadySettled | SettlementMismatch)
            case VoidHand():
                status = self.closed[command.table_id, command.hand_no]
                assert status == "voided"
                hand = self.wallet.state.hand(command.table_id, command.hand_no)
                settle = SettleHand(
                    request_id=self.rid(),
                    table_id=command.table_id,
                    hand_no=command.hand_no,
                    contributions=(),
                    payouts=(PlayerAmount(player=hand.stacks[0].player, amount=0),),
                    rake=0,
                    saw_flop=False,
                )
                assert isinstance(self.refused(settle), HandAlreadyVoided)
            case OpenHand():
                raise AssertionError("open hands are not in the done bundle")

    @rule(snapshot_at=st.floats(0, 1))
    def restart(self, snapshot_at: float) -> None:
        """Drop memory and rebuild: from the whole log, or from a snapshot plus the tail."""
        live = encode_state(self.wallet.state)
        cut = int(len(self.wallet.log) * snapshot_at)
        head = [e for message in self.wallet.log[:cut] for e in message]
        tail = [e for message in self.wallet.log[cut:] for e in message]
        snapshot = decode_state(encode_state(fold(head, LedgerState())))
        rebuilt = fold(tail, snapshot)
        assert encode_state(rebuilt) == live
        self.wallet.state = rebuilt

    # -- invariants ---------------------------------------------------------------------
    @invariant()
    def ledger_is_sound(self) -> None:
        report, state = audit(self.wallet.events())
        assert report.ok, report.breaches
        assert report.deposits == self.deposits
        assert report.withdrawals == self.withdrawals
        assert report.held_outside_world == self.deposits - self.withdrawals
        assert report.house_rake == sum(self.rakes.values())
        assert encode_state(state) == encode_state(self.wallet.state)

    @invariant()
    def balances_match_the_model(self) -> None:
        state = self.wallet.state
        for player, amount in self.cash.items():
            assert state.balance(accounts.cash(player)).balance == amount
        for (table, player), amount in self.seat.items():
            b = state.balance(accounts.escrow(table, player))
            assert b.balance == amount
            assert b.debits_pending == self.reserved.get((table, player), 0)
        for (table, hand_no), status in self.closed.items():
            assert state.hand(table, hand_no).status.value == status


LedgerMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=50)
TestLedgerMachine = LedgerMachine.TestCase
