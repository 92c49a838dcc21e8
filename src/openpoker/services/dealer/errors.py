"""The dealer service's own errors (statuses via ``shell.errors.to_status``, domain
``poker.dealer``)."""

from __future__ import annotations

from openpoker.errors import shown
from openpoker.shell.errors import FailedPrecondition, InvalidArgument, NotFound, Unavailable


class TableNotFound(NotFound):
    reason = "TABLE_NOT_FOUND"

    def __init__(self, *, table: str) -> None:
        super().__init__(f"the dealer follows no table {shown(table)}", table=shown(table))


class HandNotFound(NotFound):
    reason = "HAND_NOT_FOUND"

    def __init__(self, *, name: str) -> None:
        super().__init__(f"no hand {shown(name)}", name=shown(name))


class HandAlreadyFinished(FailedPrecondition):
    reason = "HAND_ALREADY_FINISHED"

    def __init__(self, *, name: str) -> None:
        super().__init__(f"hand {shown(name)} has already ended", name=shown(name))


class BadName(InvalidArgument):
    reason = "INVALID_NAME"

    def __init__(self, *, name: str, expected: str) -> None:
        super().__init__(f"{shown(name)} is not of the form {expected}", name=shown(name), expected=expected)


class CatchingUp(Unavailable):
    """The dealer has not folded the table logs since it started: what it would answer (or do)
    could be stale. Its health is NOT_SERVING meanwhile; try again."""

    reason = "DEALER_CATCHING_UP"

    def __init__(self, *, behind: int | None = None) -> None:
        fields = {} if behind is None else {"behind": str(behind)}
        super().__init__("the dealer is catching up with the table logs; try again", **fields)


class LogUnreachable(Unavailable):
    """The table log's stream could not be asked how far the dealer is behind (NATS away)."""

    reason = "TABLE_LOG_UNAVAILABLE"

    def __init__(self) -> None:
        super().__init__("the table log cannot be reached; try again")
