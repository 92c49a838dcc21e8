"""The wallet application: load -> fold -> decide -> append -> evolve, one command at a time.

A single writer, serial (TigerBeetle executes one batch at a time on one core; a few commands
per hand are far below what one JetStream subject takes). The write path:

1. ``decide`` against the in-memory state (a retry is answered from the state: no write);
2. append the events as one message (optimistic concurrency on the subject, Msg-Id dedupe);
3. only then apply them to the state and answer.

A crash before 2 loses nothing (the caller retries); a crash after 2 but before the answer is
healed by the retry, which finds the transfer ids in the replayed state and answers the first
result. If an append fails or its outcome is unknown, the in-memory state may lag the log, so
the next command reloads it first; a concurrency conflict (another writer) reloads and decides
again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass

from openpoker.eventstore import ConcurrencyConflict, EventStoreError
from openpoker.eventstore.loading import Finding, LogQuarantined, Verifier
from openpoker.ledger import accounts
from openpoker.ledger.accounts import Balances
from openpoker.ledger.commands import Command
from openpoker.ledger.decider import LedgerState, decide, evolve, records_of
from openpoker.ledger.errors import CurrencyMismatch
from openpoker.ledger.events import Event, LedgerOpened, TransfersCommitted
from openpoker.ledger.limits import DepositLimits, WithdrawalLimits
from openpoker.ledger.store import Position, WalletStore
from openpoker.ledger.transfers import TransferRecord
from openpoker.services.wallet.config import DEFAULT_DEPOSIT_LIMITS, DEFAULT_WITHDRAWAL_LIMITS, SERVICE
from openpoker.services.wallet.errors import LedgerUnavailable
from openpoker.shell import metrics
from openpoker.shell.logs import get_logger

CONFLICT_RETRIES = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    transfers: tuple[TransferRecord, ...]
    duplicate: bool


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class WalletApp:
    def __init__(
        self,
        store: WalletStore,
        *,
        currency: str,
        snapshot_every: int = 1000,
        clock: Callable[[], dt.datetime] = _utc_now,
        deposit_limits: DepositLimits = DEFAULT_DEPOSIT_LIMITS,
        withdrawal_limits: WithdrawalLimits = DEFAULT_WITHDRAWAL_LIMITS,
        verifier: Verifier | None = None,
    ) -> None:
        self._store = store
        self._verifier = verifier  # a further check of each loaded envelope (a signature)
        # The first stored message that is not the wallet's: set, the wallet serves the state
        # folded before it and refuses every write until restarted after an operator's repair.
        self._finding: Finding | None = None
        # Told of a quarantine as it happens (the server reports it in its health).
        self.on_quarantine: Callable[[Finding], None] = lambda _: None
        self.deposit_limits = deposit_limits
        self.withdrawal_limits = withdrawal_limits
        self._currency = currency
        self._snapshot_every = snapshot_every
        self._clock = clock
        self._lock = asyncio.Lock()
        self._state = LedgerState()
        self._position = Position()
        self._epoch = 0
        self._stale = True
        self._since_snapshot = 0
        self._snapshot_size = 0  # commands in the ledger at the last snapshot or load
        self._by_account: dict[str, list[str]] = {}
        self._escrows: dict[str, set[str]] = {}  # table id -> players with an escrow account there

    @property
    def currency(self) -> str:
        return self._currency

    def now(self) -> dt.datetime:
        """The wallet's clock: deposits and withdrawals carry it into the decider (their day
        counts toward the daily limits)."""
        return self._clock()

    @property
    def store(self) -> WalletStore:
        return self._store

    @property
    def state(self) -> LedgerState:
        return self._state

    @property
    def quarantined(self) -> Finding | None:
        """Why writes are refused (``LOG_QUARANTINED``), or None."""
        return self._finding

    async def start(self) -> None:
        """Load the ledger; open it with the configured currency if the log is empty. A log
        holding a foreign or corrupt message starts quarantined (reads only)."""
        async with self._lock:
            await self._reload()
            if not self._state.currency and self._finding is None:
                await self._append((LedgerOpened(currency=self._currency),), request_id="open-ledger")

    def _quarantine(self, finding: Finding) -> None:
        if self._finding is None:
            self._finding = finding
            get_logger().error("log.corrupt", detail=finding.detail, **finding.fields())
            metrics.quarantined(SERVICE, finding.stream, finding.problem.value)
            self.on_quarantine(finding)

    async def _reload(self) -> None:
        self._stale = True
        refused = self._store.snapshots_refused
        try:
            loaded = await self._store.load_checked(verifier=self._verifier)
        except EventStoreError:
            raise  # typed already (unavailable, corrupt message, ...)
        except Exception as exc:  # nats-py timeouts and connection errors
            raise LedgerUnavailable(cause=type(exc).__name__) from exc
        if self._store.snapshots_refused != refused:  # not the wallet's: the log was folded instead
            get_logger().warning("snapshot.refused", stream="wallet")
            metrics.snapshot_refused(SERVICE)
        self._state, self._position = loaded.state, loaded.position
        if loaded.finding is not None:
            self._quarantine(loaded.finding)
        if self._state.currency and self._state.currency != self._currency:
            raise CurrencyMismatch(expected=self._state.currency, got=self._currency)
        # Grows with every start: distinct message ids from any earlier writer (store.py).
        self._epoch = max(self._position.epoch + 1, time.time_ns() // 1000)
        self._by_account = {}
        self._escrows = {}
        self._snapshot_size = self._state.commands
        for record in self._state.transfers.values():
            self._index(record)
        self._stale = False
        get_logger().info(
            "wallet.loaded",
            version=self._position.version,
            sequence=self._position.sequence,
            transfers=len(self._state.transfers),
        )

    def _index(self, record: TransferRecord) -> None:
        for account in (record.debit, record.credit):
            ids = self._by_account.get(account)
            if ids is None:
                ids = self._by_account[account] = []
                if accounts.kind_of(account) is accounts.AccountKind.ESCROW:
                    _, table_id, player = account.split("/", 2)
                    self._escrows.setdefault(table_id, set()).add(player)
            ids.append(record.id)

    async def _append(self, events: tuple[Event, ...], *, request_id: str) -> None:
        try:
            position, _ = await self._store.append(
                events, request_id=request_id, position=self._position, epoch=self._epoch, now=self._clock()
            )
        except LogQuarantined as exc:
            self._quarantine(exc.finding)
            raise
        except BaseException:
            self._stale = True  # the message may or may not have landed: reload before the next command
            raise
        self._position = position
        for event in events:
            evolve(self._state, event)
            if isinstance(event, TransfersCommitted):
                for record in event.transfers:
                    self._index(record)
        self._since_snapshot += 1
        if self._since_snapshot >= self._snapshot_due():
            await self._snapshot()

    def _snapshot_due(self) -> int:
        """Commands between snapshots: ``snapshot_every``, or as many as the ledger held at the
        last snapshot (or when this process loaded it) if that is more. A snapshot encodes the
        whole state (every transfer ever: ids are never pruned), so at a fixed interval its CPU
        per command grew with the ledger without bound (a third of a second per snapshot at
        2,000 six-player hands); with the interval doubling as the ledger
        does, it stays constant per command, and the log a restart replays after the snapshot
        it loads stays a bounded fraction of the ledger (at most as long as the part that
        snapshot covers, unless the process restarted since)."""
        return max(self._snapshot_every, self._snapshot_size)

    async def _snapshot(self) -> None:
        self._since_snapshot = 0
        self._snapshot_size = self._state.commands
        try:
            await self._store.save_snapshot(self._state, self._position)
        except Exception as exc:  # a snapshot is a cache: never fail a command for it
            get_logger().warning("wallet.snapshot_failed", error=str(exc))

    async def execute(self, command: Command) -> Outcome:
        async with self._lock:
            for attempt in range(CONFLICT_RETRIES + 1):
                if self._stale and self._finding is None:
                    await self._reload()
                if self._finding is not None:
                    raise LogQuarantined(self._finding)
                decision = decide(self._state, command)
                if decision.duplicate:
                    return Outcome(transfers=records_of(self._state, decision), duplicate=True)
                try:
                    await self._append(decision.events, request_id=command.request_id)
                except ConcurrencyConflict:
                    if attempt == CONFLICT_RETRIES:
                        raise
                    get_logger().warning("wallet.conflict", attempt=attempt)
                    continue
                return Outcome(transfers=records_of(self._state, decision), duplicate=False)
        raise AssertionError("unreachable")  # pragma: no cover

    async def snapshot(self) -> None:
        async with self._lock:
            await self._snapshot()

    def check_currency(self, currency: str) -> None:
        if currency and currency != self._currency:
            raise CurrencyMismatch(expected=self._currency, got=currency)

    def balance(self, account: str) -> tuple[str, Balances]:
        return account, self._state.balance(account)

    def transfers_of(
        self, account: str, *, offset: int, limit: int
    ) -> tuple[list[TransferRecord], int | None]:
        """A page of the account's transfers, oldest first, and the next offset (None at the end)."""
        self._state.balance(account)  # UNKNOWN_ACCOUNT for a name never used
        ids = self._by_account.get(account, [])
        page = [self._state.transfers[i] for i in ids[offset : offset + limit]]
        following = offset + limit
        return page, (following if following < len(ids) else None)

    def escrows_of(self, table_id: str) -> list[tuple[str, Balances]]:
        """The players with chips in escrow at ``table_id`` (posted or pending amounts not zero),
        sorted by player; ``InvalidIdentifier`` for a table id no account can have."""
        accounts.check_id("table_id", table_id)
        out = []
        for player in sorted(self._escrows.get(table_id, ())):
            b = self._state.balance(accounts.escrow(table_id, player))
            if b.balance or b.debits_pending or b.credits_pending:
                out.append((player, b))
        return out
