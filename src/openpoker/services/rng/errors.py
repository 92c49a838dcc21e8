"""The rng service's own errors (statuses via ``shell.errors.to_status``).

Library errors (``shuffle.BadHandId``, ``BadDeckSize``, ...) are engine errors of kind
``invalid`` and map to INVALID_ARGUMENT by themselves. No error here carries seed material.
"""

from __future__ import annotations

from openpoker.shell.errors import AlreadyExists, DataLoss, FailedPrecondition, InvalidArgument, NotFound


class InvalidTableId(InvalidArgument):
    reason = "INVALID_TABLE_ID"

    def __init__(self) -> None:
        super().__init__("table_id must be a non-empty NATS subject token (no . * > or spaces)")


class HandIdReused(AlreadyExists):
    """A hand id already shuffled for another table or deck size (hand ids are unique forever)."""

    reason = "HAND_ID_REUSED"

    def __init__(self, *, hand_id: str) -> None:
        super().__init__("hand id already shuffled for another table or deck size", hand_id=hand_id)


class ShuffleNotFound(NotFound):
    reason = "SHUFFLE_NOT_FOUND"

    def __init__(self, *, hand_id: str) -> None:
        super().__init__("no shuffle for this hand", hand_id=hand_id)


class HandNotEnded(FailedPrecondition):
    """The seed of a live hand would reveal every player's hole cards."""

    reason = "HAND_NOT_ENDED"

    def __init__(self, *, table_id: str, hand_id: str) -> None:
        super().__init__("the hand has not ended", table_id=table_id, hand_id=hand_id)


class SeedUnsealable(DataLoss):
    """A stored sealed seed fails authentication: wrong key, or the record was tampered with."""

    reason = "SEED_UNSEALABLE"

    def __init__(self, *, hand_id: str, key_id: str) -> None:
        super().__init__("the stored seed cannot be unsealed", hand_id=hand_id, keyId=key_id)
