"""Paging of list RPCs (AIP-158), the same in every service.

``page_size``: 0 asks for the default, more than the maximum gets the maximum, a negative size
is refused (INVALID_PAGE_SIZE). A page token is opaque to clients: URL-safe base64 of a small JSON
object holding the offset of the next page (``o``) and the request fields the listing depends
on (an account, a filter), so a token used with a different request is refused
(INVALID_PAGE_TOKEN) rather than silently paging through another list. Listings are read from
the start each time, so an offset is as good as a cursor and simpler.
"""

from __future__ import annotations

import base64
import json

from openpoker.shell.errors import InvalidArgument

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
_OFFSET = "o"

Bound = str | int  # a request field a token is bound to


class InvalidPageSize(InvalidArgument):
    reason = "INVALID_PAGE_SIZE"

    def __init__(self, *, page_size: int) -> None:
        super().__init__("page_size must not be negative", page_size=page_size)


class InvalidPageToken(InvalidArgument):
    """A token this server did not issue, or one issued for a different request."""

    reason = "INVALID_PAGE_TOKEN"

    def __init__(self) -> None:
        super().__init__("page_token is not one this server issued for this request")


def page_size(requested: int) -> int:
    """The number of items to return for a request's ``page_size``."""
    if requested < 0:
        raise InvalidPageSize(page_size=requested)
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def page_token(offset: int, **bound: Bound) -> str:
    """The token for the page starting at ``offset``, bound to the request fields ``bound``
    (short keys: they travel in every token)."""
    assert _OFFSET not in bound
    raw = json.dumps({**bound, _OFFSET: offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def next_page_token(offset: int, total: int, **bound: Bound) -> str:
    """The token for the page at ``offset`` of a listing of ``total`` items, or ``""`` (the
    last page was sent)."""
    return page_token(offset, **bound) if offset < total else ""


def page_offset(token: str, **bound: Bound) -> int:
    """The offset a request's ``page_token`` stands for (0 for none); ``InvalidPageToken`` for a
    token that does not decode or was issued for other values of the fields ``bound``."""
    if not token:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        offset = data[_OFFSET]
        ok = (
            isinstance(offset, int)
            and not isinstance(offset, bool)
            and offset >= 0
            and all(data[key] == value and type(data[key]) is type(value) for key, value in bound.items())
        )
    except (ValueError, KeyError, TypeError):  # binascii.Error and bad UTF-8 are ValueErrors
        ok = False
    if not ok:
        raise InvalidPageToken
    return int(offset)
