"""Which service or person is calling, as the handlers see it: ``caller_of`` and ``player_of``.

Over TLS (the default) the caller is the principal the server interceptor authenticated
(``shell.identity``): a service by its certificate, ``pokerctl`` by its staff certificate, a person
by token. ``caller_of`` names it as the per-method allow-lists do: a service's name,
``pokerctl``, or the token's role (``player``, ``cashier``, ``auditor``, ``operator``); headers
are ignored. ``player_of`` is the player a request is about: a player-role caller is always
themself (a request field naming anyone else is NOT_YOUR_SEAT); a service names the player in the
request (the dealer timing out a seat, the table moving a seat's money); ``pokerctl``'s staff
certificate holds the operator role and, like a cashier, auditor or operator token or no token,
sits in nobody's seat: it cannot act, view cards or move a seat's money for a player.

A plaintext server (``POKER_INSECURE``, in-process test rigs only) binds no principal, and the
``x-caller`` and ``x-player-id`` headers stand in for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grpc import aio

from openpoker.shell import identity
from openpoker.shell.errors import PermissionDenied, Unauthenticated
from openpoker.shell.identity import Kind, NotYourSeat
from openpoker.shell.tokens import Role, TokenMissing

CALLER_HEADER = "x-caller"
PLAYER_HEADER = "x-player-id"
ANYONE = "*"


class CallerRequired(Unauthenticated):
    reason = "CALLER_REQUIRED"

    def __init__(self) -> None:
        super().__init__("this call needs an identity: a client certificate or a bearer token")


class CallerNotAllowed(PermissionDenied):
    reason = "CALLER_NOT_ALLOWED"

    def __init__(self, *, caller: str, method: str) -> None:
        super().__init__("caller may not call this method", caller=caller, method=method)


def header(context: aio.ServicerContext[Any, Any], key: str) -> str:
    """A metadata value of this call, or ``""``."""
    for k, value in context.invocation_metadata() or ():
        if k == key:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""


def caller_of(context: aio.ServicerContext[Any, Any]) -> str:
    """The caller's name for allow-lists (see the module docstring), or ``""`` when anonymous."""
    principal = identity.bound()
    if principal is None:
        return header(context, CALLER_HEADER)
    if principal.kind is Kind.SERVICE or principal.kind is Kind.STAFF:
        return principal.name
    return principal.role.value if principal.role is not None else ""


def player_of(context: aio.ServicerContext[Any, Any], field: str, *, required: bool) -> str:
    """The player a request is about: ``field`` (or ``x-player-id`` on plaintext), checked
    against a player-role caller, who may name only themself."""
    principal = identity.bound()
    if principal is None:
        return field or header(context, PLAYER_HEADER)
    if principal.kind is Kind.USER and principal.role is Role.PLAYER:
        identity.require_self(principal, field or principal.name)
        return principal.name
    if principal.kind is Kind.ANONYMOUS and required:
        raise TokenMissing
    if principal.kind is Kind.SERVICE:
        return field  # the dealer and table act for the player they name
    if field:  # staff, a cashier, auditor or operator token, or no token: nobody's seat
        raise NotYourSeat(player=field)
    return ""


def authorize(allowed_callers: Mapping[str, frozenset[str]], method: str, caller: str) -> None:
    """Raise unless ``caller`` may call ``method`` (deny by default)."""
    allowed = allowed_callers.get(method, frozenset())
    if ANYONE in allowed:
        return
    if not caller:
        raise CallerRequired
    if caller not in allowed:
        raise CallerNotAllowed(caller=caller, method=method)
