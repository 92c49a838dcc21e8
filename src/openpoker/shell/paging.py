"""Paging of list RPCs (AIP-158): the page-size rule and the page-token errors every service shares."""

from __future__ import annotations

from openpoker.shell.errors import InvalidArgument


class InvalidPageSize(InvalidArgument):
    reason = "INVALID_PAGE_SIZE"

    def __init__(self, *, page_size: int) -> None:
        super().__init__("page_size must not be negative", page_size=page_size)


class InvalidPageToken(InvalidArgument):
    """A token this server did not issue, or one issued for a different request."""

    reason = "INVALID_PAGE_TOKEN"

    def __init__(self) -> None:
        super().__init__("page_token is not one this server issued for this request")
