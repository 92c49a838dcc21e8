"""Which service is calling: the ``x-caller`` metadata and per-method allow-lists.

Interim identity until mTLS (research/grpc.md section 3): each service names the callers
allowed per RPC; anything not listed is denied. ``ANYONE`` opens a method to every caller, named
or not. One place for the rule, so every service refuses the same way with the same reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grpc import aio

from openpoker.shell.errors import PermissionDenied, Unauthenticated

CALLER_HEADER = "x-caller"
ANYONE = "*"


class CallerRequired(Unauthenticated):
    reason = "CALLER_REQUIRED"

    def __init__(self) -> None:
        super().__init__(f"missing {CALLER_HEADER} metadata")


class CallerNotAllowed(PermissionDenied):
    reason = "CALLER_NOT_ALLOWED"

    def __init__(self, *, caller: str, method: str) -> None:
        super().__init__("caller may not call this method", caller=caller, method=method)


def caller_of(context: aio.ServicerContext[Any, Any]) -> str:
    """The ``x-caller`` value of this call, or ``""``."""
    for key, value in context.invocation_metadata() or ():
        if key == CALLER_HEADER:
            return value.decode() if isinstance(value, bytes) else str(value)
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
