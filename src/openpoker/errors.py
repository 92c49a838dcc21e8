"""The project's one exception base: every error a caller may see derives from ``OpenPokerError``.

An error class declares two class attributes and nothing else about how it travels:

* ``reason``: a stable UPPER_SNAKE name, the ``google.rpc.ErrorInfo.reason`` on the wire;
* ``kind``: what went wrong, which picks the gRPC status code (``shell.errors.KIND_CODES``):
  ``invalid`` (malformed input), ``precondition`` (not allowed now), ``not_found``, ``exists``,
  ``conflict`` (a lost optimistic-concurrency race: re-read and decide again), ``permission``,
  ``unavailable`` (try again later), and one kind for each remaining status code.

The numbers behind an error are keyword fields (``BetBelowMinimum(amount=30, minimum=40)``),
rendered by ``metadata()``, so no caller parses a message. Subclasses are plain classes, not
dataclasses, so they stay picklable and keep tracebacks; the fields are a dict the service shell
may adjust before mapping (the table service shifts seat numbers to the API's numbering).

This module is at the bottom of the layers: it imports nothing of the project and does no I/O,
so the pure engine derives its errors from it too.
"""

from __future__ import annotations

from typing import ClassVar, Literal

ErrorKind = Literal[
    "invalid",
    "precondition",
    "not_found",
    "exists",
    "conflict",
    "permission",
    "unauthenticated",
    "exhausted",
    "unavailable",
    "unimplemented",
    "out_of_range",
    "deadline",
    "cancelled",
    "data_loss",
    "unknown",
    "internal",
]


MAX_SHOWN = 64  # longest client-sent value an error repeats back


def shown(value: str) -> str:
    """A value a client sent, as an error may repeat it: itself when short, else only its length
    (an oversized name is refused, never echoed back)."""
    return repr(value) if len(value) <= MAX_SHOWN else f"<{len(value)} characters>"


class OpenPokerError(Exception):
    """Base of every error the project raises on purpose."""

    reason: ClassVar[str] = "INTERNAL"
    kind: ClassVar[ErrorKind] = "internal"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields: dict[str, object] = dict(fields)

    def metadata(self) -> dict[str, str]:
        """The fields as strings, ready for ``ErrorInfo.metadata`` (the shell camel-cases keys)."""
        return {k: str(v) for k, v in self.fields.items()}
