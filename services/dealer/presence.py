"""Presence facts to ``ReportConnection``: the dealer's side of disconnection protection.

The table service publishes a fact on core NATS (``poker.presence.<table_id>``,
``services.table.presence``) when a player's first ``WatchTable`` stream opens or their last one
ends. ``PresenceFeed`` hands each fact to ``DealerApp.observe_presence``, which keeps the latest
one per player in that table's ``PresenceBook`` and wakes the table's driver. The driver compares
the book with the table log it has folded (``TableState.seats[..].disconnected``) and, for a
seated player whose connection differs, sends ``ReportConnection`` with the time the table
service observed; repeats and late duplicates change nothing (the log already agrees).

The latest fact wins (by the observed time, then the instance's sequence): a table-service
instance counts a player's streams itself, so "connected while any stream is open" holds per
instance; a player with streams on two instances at once is the one case this simplifies. A
crashed instance publishes nothing for the streams it had; its players stay as the log says
until their client watches again. Facts are not durable: a restarted dealer knows none, and a
player the log shows disconnected stays so until their stream reopens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nats.aio.client import Client as Nats
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from engine.table import TableState
from services.table.presence import SUBJECTS, BadPresenceFact, PresenceFact
from shell.logs import get_logger


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionReport:
    """A ``ReportConnection`` the dealer owes the table log."""

    player: str
    connected: bool
    at_ms: int
    step: str  # names the fact, for an idempotent request id (the same fact, the same id)


class PresenceBook:
    """The latest presence fact per player at one table (pure; no I/O)."""

    def __init__(self) -> None:
        self._latest: dict[str, PresenceFact] = {}

    def __len__(self) -> int:
        return len(self._latest)

    def observe(self, fact: PresenceFact) -> bool:
        """Keep ``fact`` unless an equal or later one is known; True if kept."""
        old = self._latest.get(fact.player)
        if old is not None and (fact.at_ms, fact.seq) <= (old.at_ms, old.seq):
            return False
        self._latest[fact.player] = fact
        return True

    def forget(self, player: str, fact: PresenceFact) -> None:
        """Drop ``fact`` (the table refused it for good) unless a newer one came meanwhile."""
        if self._latest.get(player) is fact:
            del self._latest[player]

    def due(self, state: TableState) -> list[tuple[ConnectionReport, PresenceFact]]:
        """Facts about seated players that the log does not show yet, by seat."""
        out: list[tuple[ConnectionReport, PresenceFact]] = []
        for _, occupant in sorted(state.seats.items()):
            fact = self._latest.get(occupant.player)
            if fact is None or occupant.disconnected != fact.connected:
                continue  # nothing observed, or the log already agrees
            step = f"presence/{fact.player}/{int(fact.connected)}/{fact.at_ms}/{fact.instance}/{fact.seq}"
            report = ConnectionReport(
                player=fact.player, connected=fact.connected, at_ms=fact.at_ms, step=step
            )
            out.append((report, fact))
        return out


ObserveFact = Callable[[PresenceFact], None]  # DealerApp.observe_presence


class PresenceFeed:
    """A core NATS subscription to every table's presence subject."""

    def __init__(self, nc: Nats, observe: ObserveFact) -> None:
        self._nc = nc
        self._observe = observe
        self._sub: Subscription | None = None

    async def start(self) -> None:
        self._sub = await self._nc.subscribe(SUBJECTS, cb=self._on_message)

    async def _on_message(self, msg: Msg) -> None:
        try:
            fact = PresenceFact.decode(msg.subject, msg.data)
        except BadPresenceFact as exc:
            get_logger().warning("dealer.bad_presence_fact", subject=msg.subject, error=str(exc))
            return
        self._observe(fact)

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()
            self._sub = None
