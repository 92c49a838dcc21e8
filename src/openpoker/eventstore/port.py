"""The event store port: what services depend on (``typing.Protocol``).

Two implementations run the same contract tests (tests/integration/test_eventstore_contract.py):
``eventstore.memory.InMemoryEventStore`` (unit tests) and
``eventstore.jetstream.JetStreamEventStore`` (everything else).

Semantics of ``append`` (one envelope = one command's events = one stored message):

* ``expected_sequence`` is the stream sequence of the last message on ``subject`` the writer has
  seen (0 for an empty subject). If the subject has moved on, ``ConcurrencyConflict``.
* The message id is ``envelope.msg_id`` (``<stream_id>:<version>:<owner_epoch>``); a message id
  already stored within the duplicate window is not stored again and the result says
  ``duplicate=True`` with the original sequence.
* An ambiguous outcome (the ack timed out) is resolved by reading the first message on the
  subject after ``expected_sequence``: if its message id is ours, the append landed; if the
  subject is unchanged, the same message is sent again (same id, same expectation; dedupe makes
  that safe); if someone else's message is there, ``ConcurrencyConflict``.
"""

from __future__ import annotations

from typing import Protocol

from openpoker.eventstore.envelope import AppendResult, Envelope, Snapshot, StoredEnvelope


class EventStore(Protocol):
    async def append(self, subject: str, envelope: Envelope, *, expected_sequence: int) -> AppendResult:
        """Append one envelope if ``subject``'s last sequence is ``expected_sequence``."""
        ...

    async def last(self, subject: str) -> StoredEnvelope | None:
        """The last envelope on ``subject`` (leader-coherent), or None if the subject is empty."""
        ...

    async def read(
        self, subject: str, *, after_sequence: int = 0, from_version: int = 1
    ) -> list[StoredEnvelope]:
        """Envelopes on ``subject`` in order: stream sequence > ``after_sequence`` and version >=
        ``from_version``, up to the last one present when the read started."""
        ...

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Store a snapshot (replacing older ones for the stream as far as readers care)."""
        ...

    async def load_snapshot(self, stream_id: str) -> Snapshot | None:
        """The newest snapshot of ``stream_id``, or None."""
        ...
