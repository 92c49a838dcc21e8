"""A tiny in-memory wallet for the pure-core tests: decide, then fold the events into a log."""

from __future__ import annotations

from dataclasses import dataclass, field

from openpoker.ledger.commands import Command
from openpoker.ledger.decider import Decision, LedgerState, decide, evolve, records_of
from openpoker.ledger.events import Event, LedgerOpened
from openpoker.ledger.transfers import TransferRecord


@dataclass
class MemoryWallet:
    currency: str = "CHIPS"
    state: LedgerState = field(default_factory=LedgerState)
    log: list[tuple[Event, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.append((LedgerOpened(currency=self.currency),))

    def append(self, events: tuple[Event, ...]) -> None:
        self.log.append(events)
        for event in events:
            evolve(self.state, event)

    def run(self, command: Command) -> tuple[Decision, tuple[TransferRecord, ...]]:
        decision = decide(self.state, command)
        if decision.events:
            self.append(decision.events)
        return decision, records_of(self.state, decision)

    def events(self) -> list[Event]:
        return [e for message in self.log for e in message]

    def balance(self, account: str) -> int:
        return self.state.balance(account).balance
