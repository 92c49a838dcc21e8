"""The table service's own errors (the engine's ``RuleViolation`` tree maps by itself).

Every error is mapped to a gRPC status by ``shell.errors.to_status`` (one ``ErrorInfo``, domain
``poker.table``, numbers in its metadata) by its ``kind``: engine rule violations are
``precondition`` (FAILED_PRECONDITION with the engine's reason), ``eventstore.ConcurrencyConflict``
is ``conflict`` (ABORTED).
"""

from __future__ import annotations

from openpoker.errors import shown
from openpoker.shell.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)

# -- malformed requests (INVALID_ARGUMENT): the message says what, the fields hold the values --


class InvalidTableName(InvalidArgument):
    reason = "INVALID_TABLE_NAME"


class InvalidHandName(InvalidArgument):
    reason = "INVALID_HAND_NAME"


class InvalidHandId(InvalidArgument):
    reason = "INVALID_HAND_ID"


class RequestIdRequired(InvalidArgument):
    reason = "REQUEST_ID_REQUIRED"


class InvalidSeat(InvalidArgument):
    reason = "INVALID_SEAT"


class InvalidAmount(InvalidArgument):
    reason = "INVALID_AMOUNT"


class InvalidAction(InvalidArgument):
    reason = "INVALID_ACTION"


class InvalidChoice(InvalidArgument):
    reason = "INVALID_CHOICE"


class InvalidDeck(InvalidArgument):
    reason = "INVALID_DECK"


class InvalidTime(InvalidArgument):
    reason = "INVALID_TIME"


class InvalidGame(InvalidArgument):
    reason = "INVALID_GAME"


class InvalidStructure(InvalidArgument):
    reason = "INVALID_STRUCTURE"


class InvalidStakes(InvalidArgument):
    reason = "INVALID_STAKES"


class InvalidBuyIn(InvalidArgument):
    reason = "INVALID_BUY_IN"


class InvalidFormat(InvalidArgument):
    reason = "INVALID_FORMAT"


# -- everything else ----------------------------------------------------------------------------


class TableNotFound(NotFound):
    reason = "TABLE_NOT_FOUND"

    def __init__(self, table_id: str) -> None:
        super().__init__(f"no table {table_id}", table_id=table_id)


class HandNotFound(NotFound):
    reason = "HAND_NOT_FOUND"

    def __init__(self, table_id: str, hand_id: str) -> None:
        super().__init__(f"no hand {hand_id} at table {table_id}", table_id=table_id, hand_id=hand_id)


class TableExists(FailedPrecondition):
    reason = "TABLE_ALREADY_EXISTS"

    def __init__(self, table_id: str) -> None:
        super().__init__(f"table {table_id} already exists", table_id=table_id)


class HandNotFinished(FailedPrecondition):
    reason = "HAND_NOT_FINISHED"

    def __init__(self, hand_id: str) -> None:
        super().__init__(f"hand {hand_id} is still being played", hand_id=hand_id)


class StaleVersion(Aborted):
    reason = "STALE_VERSION"

    def __init__(self, *, expected_version: int, current_version: int) -> None:
        super().__init__(
            f"the table is at version {current_version}, not {expected_version}",
            expected_version=expected_version,
            current_version=current_version,
        )


class SeatNotOwned(PermissionDenied):
    reason = "SEAT_NOT_OWNED"

    def __init__(self, *, player: str, table_id: str) -> None:
        super().__init__(
            f"{player or 'nobody'} has no seat at table {table_id}", player=player, table_id=table_id
        )


class InvalidPlayerId(InvalidArgument):
    reason = "INVALID_PLAYER_ID"

    def __init__(self, *, player: str) -> None:
        super().__init__(
            f"not a player id: {shown(player)}: 1-128 characters of A-Z a-z 0-9 . _ : @ -, "
            "starting alphanumeric",
            player=shown(player),
        )


class PlayerRequired(InvalidArgument):
    reason = "PLAYER_REQUIRED"

    def __init__(self) -> None:
        super().__init__("the request must name the player (player_id or x-player-id metadata)")


class BatchTooLarge(InvalidArgument):
    reason = "BATCH_TOO_LARGE"

    def __init__(self, *, size: int, limit: int) -> None:
        super().__init__(f"a batch holds at most {limit} actions, not {size}", size=size, limit=limit)


class CallerNotDealer(PermissionDenied):
    reason = "CALLER_NOT_DEALER"

    def __init__(self, *, caller: str, method: str) -> None:
        super().__init__(
            f"{method} is for the dealer only (x-caller: dealer), not {caller or 'an anonymous caller'}",
            caller=caller,
            method=method,
        )


class NotOwner(Unavailable):
    """Another table-service instance owns the table's partition (or took it over)."""

    reason = "NOT_OWNER"

    def __init__(self, *, table_id: str, partition: int, owner: str) -> None:
        super().__init__(
            f"table {table_id} (partition {partition}) is owned by {owner or 'another instance'}",
            table_id=table_id,
            partition=partition,
            owner=owner,
        )


class TooManyConflicts(Aborted):
    reason = "APPEND_CONFLICT"

    def __init__(self, *, table_id: str, attempts: int) -> None:
        super().__init__(f"table {table_id}: lost the append race {attempts} times", table_id=table_id)


class RequestSpent(FailedPrecondition):
    """The wallet had seen this request's buy-in but the table never recorded the request: the
    chips were refunded; send the request again with a new request id."""

    reason = "REQUEST_ID_SPENT"

    def __init__(self, *, request_id: str) -> None:
        super().__init__(
            f"request {request_id} was already used and refunded: use a new id", request_id=request_id
        )


class AllowanceRecordUnavailable(Unavailable):
    """The site-wide allowance record (KV ``poker-allowances``) could not be written: a reset
    that cannot clear it is refused, to be tried again, rather than half done in silence."""

    reason = "ALLOWANCE_RECORD_UNAVAILABLE"

    def __init__(self, *, player: str, detail: str) -> None:
        super().__init__(
            f"the allowance record of {shown(player)} could not be written: {detail}",
            player=shown(player),
        )
