"""The engine's one exception tree.

Every error carries a stable machine-readable ``reason`` (UPPER_SNAKE, used as the
``google.rpc.ErrorInfo.reason`` by the services), a ``kind`` hinting the gRPC status
(``invalid`` for malformed input, ``precondition`` for an action illegal now), and the
numbers behind it as fields, so a caller never parses the message.

Subclasses are plain classes (not dataclasses) because exceptions must stay picklable and
mutable enough for tracebacks; fields are set once in ``__init__``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

ErrorKind = Literal["invalid", "precondition", "not_found", "conflict", "permission"]


class EngineError(Exception):
    """Base of every error the engine raises."""

    reason: ClassVar[str] = "ENGINE_ERROR"
    kind: ClassVar[ErrorKind] = "invalid"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields: dict[str, object] = dict(fields)

    def metadata(self) -> dict[str, str]:
        """Fields as strings, ready for ``ErrorInfo.metadata``."""
        return {k: str(v) for k, v in self.fields.items()}


class InvalidCard(EngineError):
    reason = "INVALID_CARD"

    def __init__(self, *, text: str) -> None:
        super().__init__(f"not a card: {text!r}", text=text)
        self.text = text


class InvalidRules(EngineError):
    """A rules value that cannot be played (negative stakes, rake over 750 bp, ...)."""

    reason = "INVALID_RULES"

    def __init__(self, *, field: str, problem: str) -> None:
        super().__init__(f"invalid rules: {field}: {problem}", field=field, problem=problem)
        self.field = field
        self.problem = problem


class RuleViolation(EngineError):
    """A command that is well formed but not allowed in the current state."""

    reason = "RULE_VIOLATION"
    kind = "precondition"
