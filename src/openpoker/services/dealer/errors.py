"""The dealer service's own errors (statuses via ``shell.errors.to_status``, domain
``poker.dealer``)."""

from __future__ import annotations

from openpoker.errors import shown
from openpoker.shell.errors import FailedPrecondition, InvalidArgument, NotFound


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
