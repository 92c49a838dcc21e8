"""The calls that take one hand through its money and its seed: reserve the stacks, settle,
reveal the seed, release a voided hand's reservations, void it at the table.

Each is idempotent under an id derived from the table and hand number (``tablelog.ids``), and
treats the refusal that means "already done" as done, so a driver may repeat any of them after
a failure or a restart. Other failures reach the driver as ``CallFailed``.
"""

from __future__ import annotations

from openpoker.services.dealer.ports import AuditPort, CallFailed, Reveal, RngPort, TablePort, WalletPort
from openpoker.services.dealer.settlement import reservation, settlement
from openpoker.services.dealer.tracker import HandRecord
from openpoker.shell.logs import get_logger
from openpoker.tablelog import ids

# Reasons that mean "already done" when a step is retried.
_ALREADY_SETTLED = {"HAND_ALREADY_SETTLED"}
_NOTHING_TO_RELEASE = {"UNKNOWN_HAND", "HAND_ALREADY_VOIDED", "HAND_ALREADY_SETTLED"}
_ALREADY_VOIDED_AT_TABLE = {"HAND_NOT_LIVE", "HAND_ALREADY_FINISHED", "NO_HAND_IN_PROGRESS"}


async def reserve(wallet: WalletPort, table_id: str, h: HandRecord) -> None:
    """Wallet ``OpenHand``: reserve the stacks the hand started with (a retry is a duplicate)."""
    assert h.started is not None
    await wallet.open_hand(
        request_id=ids.request_id(table_id, h.number, "open"),
        table_id=table_id,
        hand_number=h.number,
        stacks=reservation(h.started),
        rake=h.started.rules.rake,
    )


async def settle(wallet: WalletPort, table_id: str, h: HandRecord) -> None:
    """Wallet ``SettleHand`` with the contributions, winnings and rake of the hand's events."""
    assert h.started is not None
    assert h.ended is not None
    s = settlement(h.started, h.ended, saw_flop=h.saw_flop)
    try:
        await wallet.settle_hand(
            request_id=ids.request_id(table_id, h.number, "settle"),
            table_id=table_id,
            hand_number=h.number,
            contributions=s.contributions,
            payouts=s.payouts,
            rake=s.rake,
            saw_flop=s.saw_flop,
        )
    except CallFailed as exc:
        if exc.retryable or exc.reason not in _ALREADY_SETTLED:
            raise


async def reveal(rng: RngPort, audit: AuditPort, table_id: str, h: HandRecord) -> bool:
    """Rng ``RevealSeed`` and the seed written to the audit record; False if rng has no record
    of the shuffle (nothing to reveal: the hand is settled all the same)."""
    try:
        version, commitment, deck_size, shuffled_for, seed = await rng.reveal_seed(hand_id=h.hand_id)
    except CallFailed as exc:
        if exc.retryable or exc.reason == "HAND_NOT_ENDED":
            raise  # rng reads the table log; it will see the end
        get_logger().error(
            "dealer.reveal_impossible", table_id=table_id, hand_id=h.hand_id, reason=exc.reason
        )
        return False
    await audit.record_reveal(
        Reveal(
            table_id=shuffled_for,
            hand_id=h.hand_id,
            hand_number=h.number,
            version=version,
            deck_size=deck_size,
            commitment=commitment,
            seed=seed,
        )
    )
    return True


async def release(wallet: WalletPort, table_id: str, h: HandRecord) -> int:
    """Wallet ``VoidHand``: release a voided hand's reservations; returns the chips released."""
    try:
        return await wallet.void_hand(
            request_id=ids.request_id(table_id, h.number, "release"),
            table_id=table_id,
            hand_number=h.number,
        )
    except CallFailed as exc:
        if exc.retryable or exc.reason not in _NOTHING_TO_RELEASE:
            raise
        return 0


async def void_at_table(table: TablePort, table_id: str, h: HandRecord, *, reason: str) -> int:
    """Table ``VoidHand``; returns the table version after it (0 when the table had voided or
    finished the hand already)."""
    try:
        return await table.void_hand(
            request_id=ids.request_id(table_id, h.number, "void"),
            table_id=table_id,
            hand_id=h.hand_id,
            reason=reason,
        )
    except CallFailed as exc:
        if exc.retryable or exc.reason not in _ALREADY_VOIDED_AT_TABLE:
            raise
        return 0
