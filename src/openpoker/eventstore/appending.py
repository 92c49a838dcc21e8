"""The append algorithm both stores share: publish, then resolve conflicts and lost acks.

Kept apart from the transports so the in-memory store and the JetStream store behave the same by
construction; each store supplies ``publish`` (one raw attempt) and ``first_after`` (the first
message on the subject after a sequence, as ``(sequence, msg_id)``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from openpoker.eventstore.envelope import AppendResult
from openpoker.eventstore.errors import AppendUnresolved, ConcurrencyConflict

# JetStream error codes meaning "the subject is not at the expected sequence".
CONFLICT_CODES = frozenset({10071, 10164})


class RawConflict(Exception):
    """A store's raw publish was refused for a wrong last sequence."""

    def __init__(self, *, actual_sequence: int | None, error_code: int) -> None:
        super().__init__(f"wrong last sequence ({error_code})")
        self.actual_sequence = actual_sequence
        self.error_code = error_code


class AmbiguousAck(Exception):
    """The publish may or may not have been stored (timeout, no responders, 503)."""


async def append_resolving(
    *,
    publish: Callable[[], Awaitable[AppendResult]],
    first_after: Callable[[], Awaitable[tuple[int, str] | None]],
    subject: str,
    msg_id: str,
    expected_sequence: int,
    attempts: int,
) -> AppendResult:
    for _ in range(attempts):
        try:
            return await publish()
        except RawConflict as conflict:
            landed = await first_after()
            if landed is not None and landed[1] == msg_id:
                # Our earlier attempt landed (its ack was lost) and this retry hit our own message.
                return AppendResult(sequence=landed[0], duplicate=True)
            raise ConcurrencyConflict(
                subject=subject,
                expected_sequence=expected_sequence,
                actual_sequence=conflict.actual_sequence,
                error_code=conflict.error_code,
                msg_id=msg_id,
            ) from None
        except AmbiguousAck:
            try:
                landed = await first_after()
            except AmbiguousAck:
                continue  # cannot even read: try the same message again
            if landed is None:
                continue  # nothing after our expectation: not stored; send again
            if landed[1] == msg_id:
                return AppendResult(sequence=landed[0], duplicate=True)
            raise ConcurrencyConflict(
                subject=subject,
                expected_sequence=expected_sequence,
                actual_sequence=landed[0],
                error_code=None,
                msg_id=msg_id,
            ) from None
    raise AppendUnresolved(subject=subject, msg_id=msg_id, attempts=attempts)
