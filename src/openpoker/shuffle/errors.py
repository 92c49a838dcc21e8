"""Typed errors of the shuffle library (a branch of the engine's one exception tree).

Messages and fields never carry seed material: a seed reveals every hole card of its hand,
and errors end up in logs and in ``google.rpc.ErrorInfo`` metadata.
"""

from __future__ import annotations

from openpoker.engine.errors import EngineError


class ShuffleError(EngineError):
    """Base of every error raised by ``shuffle``."""

    reason = "SHUFFLE_ERROR"


class UnknownVersion(ShuffleError):
    """A shuffle algorithm version this build cannot derive (records keep their version forever)."""

    reason = "UNKNOWN_SHUFFLE_VERSION"

    def __init__(self, *, version: str) -> None:
        super().__init__(f"unknown shuffle algorithm version {version!r}", version=version)
        self.version = version


class BadSeed(ShuffleError):
    """Seed material of the wrong size (only the length is reported, never the bytes)."""

    reason = "BAD_SEED"

    def __init__(self, *, length: int, required: int) -> None:
        super().__init__(f"seed must be {required} bytes, got {length}", length=length, required=required)
        self.length = length
        self.required = required


class BadDeckSize(ShuffleError):
    reason = "BAD_DECK_SIZE"

    def __init__(self, *, size: int) -> None:
        super().__init__(f"no canonical deck of {size} cards (52 or 36)", size=size)
        self.size = size


class BadHandId(ShuffleError):
    reason = "BAD_HAND_ID"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"bad hand id: {problem}", problem=problem)
        self.problem = problem


class BadRange(ShuffleError):
    """``uniform_below(m)`` asked for an empty range or one wider than the word."""

    reason = "BAD_RANGE"

    def __init__(self, *, bound: int, bits: int) -> None:
        super().__init__(f"cannot draw below {bound} from {bits}-bit words", bound=bound, bits=bits)
        self.bound = bound
        self.bits = bits


class DrbgError(ShuffleError):
    """SP 800-90A limits: entropy too short, request too large, reseed required."""

    reason = "DRBG_ERROR"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"HMAC_DRBG: {problem}", problem=problem)
        self.problem = problem


class EntropyUnavailable(ShuffleError):
    """The OS CSPRNG failed: no shuffle (the table pauses), never a weaker fallback."""

    reason = "ENTROPY_UNAVAILABLE"
    kind = "precondition"

    def __init__(self, *, cause: str) -> None:
        super().__init__("the OS random source failed; refusing to shuffle", cause=cause)
