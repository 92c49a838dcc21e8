"""The wallet service's own errors (statuses via ``shell.errors.to_status``).

The ledger's domain errors (``ledger_errors``: INSUFFICIENT_FUNDS, UNKNOWN_ACCOUNT,
INVALID_AMOUNT, TRANSFER_ID_REUSED, SETTLEMENT_MISMATCH, HAND_ALREADY_SETTLED, ...) carry a
``kind`` and map by themselves; these are the errors of the gRPC edge.
"""

from __future__ import annotations

from openpoker.shell.errors import InvalidArgument, Unavailable


class InvalidRakeRules(InvalidArgument):
    reason = "INVALID_RAKE_RULES"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"invalid rake rules: {problem}", problem=problem)


class LedgerUnavailable(Unavailable):
    """The ledger could not be read back (NATS away): retry the same request later."""

    reason = "LEDGER_UNAVAILABLE"

    def __init__(self, *, cause: str) -> None:
        super().__init__("the ledger cannot be read right now", cause=cause)
