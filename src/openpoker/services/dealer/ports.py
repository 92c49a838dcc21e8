"""What the dealer needs from the other services (``typing.Protocol``s).

The gRPC implementations are in ``services.dealer.clients``; unit tests use in-memory fakes.
Every method is idempotent under its request id (built by ``tablelog.ids``), so the
dealer may retry any of them after a timeout or a restart.

Failures reach the dealer as ``CallFailed`` with a ``retryable`` flag: retryable failures
(unavailable, deadline exceeded) are tried again later with the same ids; the others carry the
service's reason (``HAND_ALREADY_SETTLED``, ``STALE_VERSION``, ...) for the dealer to decide.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

from openpoker.engine.rules import RakeRules


class CallFailed(Exception):
    def __init__(
        self, *, service: str, method: str, code: str, reason: str, retryable: bool, message: str = ""
    ) -> None:
        super().__init__(f"{service}.{method}: {code} {reason} {message}".strip())
        self.service = service
        self.method = method
        self.code = code
        self.reason = reason
        self.retryable = retryable


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffled:
    """What the dealer passes on to ``StartHand`` (rng's reply also lists the cards in the clear;
    the dealer has no use for them, so they are not parsed)."""

    commitment: str
    version: str
    sealed_deck: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Reveal:
    """A revealed seed with what an auditor needs to check it against the table log."""

    table_id: str
    hand_id: str
    hand_number: int
    version: str
    deck_size: int
    commitment: str
    seed: bytes


class RngPort(Protocol):
    async def shuffle(self, *, request_id: str, table_id: str, hand_id: str, deck_size: int) -> Shuffled: ...

    async def reveal_seed(self, *, hand_id: str) -> tuple[str, str, int, str, bytes]:
        """(algorithm version, commitment, deck size, table id, seed)."""
        ...


class TablePort(Protocol):
    async def start_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_id: str,
        commitment: str,
        sealed_deck: bytes,
        expected_version: int,
    ) -> int:
        """Start the hand; returns the table version after it."""
        ...

    async def time_out_seat(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_id: str,
        seat: int,
        expected_version: int,
        observed_at: dt.datetime,
    ) -> int: ...

    async def report_connection(
        self,
        *,
        request_id: str,
        table_id: str,
        player_id: str,
        connected: bool,
        observed_at: dt.datetime,
        expected_version: int,
    ) -> int:
        """Append the player's disconnection or reconnection if the table is still at
        ``expected_version`` (else STALE_VERSION); returns the table version after it."""
        ...

    async def void_hand(self, *, request_id: str, table_id: str, hand_id: str, reason: str) -> int: ...

    async def hand_exists(self, *, table_id: str, hand_id: str) -> bool:
        """Whether the table ever scheduled ``hand_id`` (the engine remembers only its latest
        ids; the table service answers for older hands from its index)."""
        ...


class WalletPort(Protocol):
    async def open_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_number: int,
        stacks: tuple[tuple[str, int], ...],
        rake: RakeRules,
    ) -> bool:
        """Reserve the stacks; True if they were already reserved (a retry)."""
        ...

    async def settle_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_number: int,
        contributions: tuple[tuple[str, int], ...],
        payouts: tuple[tuple[str, int], ...],
        rake: int,
        saw_flop: bool,
    ) -> None: ...

    async def void_hand(self, *, request_id: str, table_id: str, hand_number: int) -> int:
        """Release every reservation of the hand; returns the chips released."""
        ...


class AuditPort(Protocol):
    async def record_reveal(self, reveal: Reveal) -> None:
        """Store the revealed seed durably (idempotent per hand)."""
        ...
