"""The dealer service's own errors (statuses via ``shell.errors.to_status``, domain
``poker.dealer``)."""

from __future__ import annotations

from openpoker.shell.errors import FailedPrecondition, InvalidArgument, NotFound


class TableNotFound(NotFound):
    reason = "TABLE_NOT_FOUND"

    def __init__(self, *, table: str) -> None:
        super().__init__(f"the dealer follows no table {table!r}", table=table)


class HandNotFound(NotFound):
    reason = "HAND_NOT_FOUND"

    def __init__(self, *, name: str) -> None:
        super().__init__(f"no hand {name!r}", name=name)


class HandAlreadyFinished(FailedPrecondition):
    reason = "HAND_ALREADY_FINISHED"

    def __init__(self, *, name: str) -> None:
        super().__init__(f"hand {name!r} has already ended", name=name)


class BadName(InvalidArgument):
    reason = "INVALID_NAME"

    def __init__(self, *, name: str, expected: str) -> None:
        super().__init__(f"{name!r} is not of the form {expected}", name=name, expected=expected)
