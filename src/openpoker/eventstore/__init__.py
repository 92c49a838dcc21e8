"""Append-only event streams with optimistic concurrency, on NATS JetStream (``openpoker.eventstore``).

* ``envelope``: ``Envelope`` (one command's events; ``poker.common.v1.Envelope`` on the wire),
  ``Draft``, ``RecordedEvent``, ``StoredEnvelope``, ``AppendResult``, ``Snapshot``.
* ``chain``: ``seal(draft, prev_hash)`` and ``verify_chain(envelopes)``: the SHA-256 hash chain.
* ``port.EventStore``: the Protocol services depend on; ``memory.InMemoryEventStore`` and
  ``jetstream.JetStreamEventStore`` implement it and pass the same contract tests.
* ``errors``: ``ConcurrencyConflict`` (JetStream 10071/10164), ``AppendUnresolved``, ...
* ``loading``: each stored message checked as a log loads; the first that is not the writer's
  next envelope is a ``Finding`` and the log is quarantined (``LogQuarantined``).
* ``streams``: stream and bucket settings (``TABLE_EVENTS``, ``WALLET_EVENTS``,
  ``TABLE_SNAPSHOTS``, ``LEASES``) and ``ensure_stream``/``ensure_bucket``.
* ``subjects``: ``table_subject(table_id)`` = ``poker.table.<crc32 % 256>.<table_id>``.
* ``lease``: ``LeaseKeeper`` for partition leases (epoch = KV revision) and ``should_give_up``.

Typical write path (the table service)::

    last = await store.last(subject)                    # or the cached state's position
    env = seal(Draft(stream_id=t, version=v + 1, ...), prev_hash=last_hash)
    result = await store.append(subject, env, expected_sequence=last_seq)
"""

from openpoker.eventstore.chain import GENESIS, ChainReport, seal, verify_chain
from openpoker.eventstore.envelope import (
    AppendResult,
    Draft,
    Envelope,
    RecordedEvent,
    Snapshot,
    StoredEnvelope,
)
from openpoker.eventstore.errors import AppendUnresolved, ConcurrencyConflict, EventStoreError
from openpoker.eventstore.port import EventStore

__all__ = [
    "GENESIS",
    "AppendResult",
    "AppendUnresolved",
    "ChainReport",
    "ConcurrencyConflict",
    "Draft",
    "Envelope",
    "EventStore",
    "EventStoreError",
    "RecordedEvent",
    "Snapshot",
    "StoredEnvelope",
    "seal",
    "verify_chain",
]
