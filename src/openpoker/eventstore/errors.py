"""The event store's exception tree, a branch of the project's one base (``openpoker.errors``):
each error has a stable ``reason``, a ``kind`` (``conflict`` -> ABORTED) and its fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from openpoker.errors import ErrorKind, OpenPokerError

if TYPE_CHECKING:
    from openpoker.eventstore.envelope import StoredEnvelope


class EventStoreError(OpenPokerError):
    reason = "EVENT_STORE_ERROR"
    kind: ClassVar[ErrorKind] = "unavailable"


class ConcurrencyConflict(EventStoreError):
    """The subject moved past ``expected_sequence``: someone else appended first.

    JetStream answers 10071 ("wrong last sequence: N") on one server and 10164 (no number) on a
    cluster while another append with the same expectation is in flight; both mean this.
    The writer re-reads (it may be stale, or fenced by a newer owner) and decides again.
    """

    reason = "CONCURRENCY_CONFLICT"
    kind = "conflict"

    def __init__(
        self,
        *,
        subject: str,
        expected_sequence: int,
        actual_sequence: int | None,
        error_code: int | None,
        msg_id: str,
    ) -> None:
        # The numbers the server did not give are left out of the fields, not sent as "None".
        known = {"actual_sequence": actual_sequence, "error_code": error_code}
        super().__init__(
            f"append to {subject} expected last sequence {expected_sequence}, found "
            f"{'unknown' if actual_sequence is None else actual_sequence}",
            subject=subject,
            expected_sequence=expected_sequence,
            msg_id=msg_id,
            **{k: v for k, v in known.items() if v is not None},
        )
        self.subject = subject
        self.expected_sequence = expected_sequence
        self.actual_sequence = actual_sequence
        self.error_code = error_code
        self.msg_id = msg_id


class AppendUnresolved(EventStoreError):
    """Every attempt timed out and reading back could not tell whether the append landed."""

    reason = "APPEND_UNRESOLVED"
    kind = "unavailable"

    def __init__(self, *, subject: str, msg_id: str, attempts: int) -> None:
        super().__init__(
            f"append {msg_id} to {subject} unresolved after {attempts} attempts",
            subject=subject,
            msg_id=msg_id,
            attempts=attempts,
        )
        self.subject = subject
        self.msg_id = msg_id
        self.attempts = attempts


class CorruptMessage(EventStoreError):
    """A stored message that does not decode as an envelope; ``read_before``: what a read had
    decoded before it, so a loader can keep the good prefix (``eventstore.loading``)."""

    reason = "CORRUPT_MESSAGE"
    kind = "precondition"

    def __init__(
        self, *, subject: str, sequence: int, problem: str, read_before: Sequence[StoredEnvelope] = ()
    ) -> None:
        super().__init__(
            f"message {sequence} on {subject}: {problem}", subject=subject, sequence=sequence, problem=problem
        )
        self.subject = subject
        self.sequence = sequence
        self.problem = problem
        self.read_before = tuple(read_before)


class StreamSettingsMismatch(EventStoreError):
    """A stream or bucket exists with settings other than the ones asked for."""

    reason = "STREAM_SETTINGS_MISMATCH"
    kind = "precondition"

    def __init__(self, *, stream: str, differences: str) -> None:
        super().__init__(f"stream {stream} exists with other settings: {differences}", stream=stream)
        self.stream = stream
        self.differences = differences


class StreamUnavailable(EventStoreError):
    """A stream or bucket that is missing and could not be made: on a NATS with permissions only
    the admin identity creates streams, at set-up (``pokerctl up``), before the services start."""

    reason = "STREAM_UNAVAILABLE"
    kind = "precondition"

    def __init__(self, *, stream: str) -> None:
        super().__init__(
            f"stream {stream} is missing and could not be created (no answer: no permission to "
            "create it, or NATS is unreachable); create it at set-up with the admin identity",
            stream=stream,
        )
        self.stream = stream
