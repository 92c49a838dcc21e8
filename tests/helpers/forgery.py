"""Forged envelopes for the tests that show a log refusing them: the draft a forger chains onto a
log's last envelope, which ``eventstore.chain.seal`` turns into a well-formed envelope (signed or
not) that only its missing or wrong signature, or its events, give away."""

from __future__ import annotations

from collections.abc import Sequence

from openpoker.eventstore.envelope import Draft, Envelope, RecordedEvent


def next_draft(
    last: Envelope,
    events: Sequence[RecordedEvent],
    *,
    stream_id: str | None = None,
    epoch: int | None = None,
) -> Draft:
    """The envelope after ``last`` (its stream, or ``stream_id``), under ``last``'s owner epoch
    (so the writer's next message id) unless ``epoch`` is given."""
    return Draft(
        stream_id=last.stream_id if stream_id is None else stream_id,
        version=last.version + 1,
        command_id="forged",
        owner_epoch=last.owner_epoch if epoch is None else epoch,
        rules_version=last.rules_version,
        engine_version=last.engine_version,
        events=tuple(events),
        recorded_at=last.recorded_at,
    )
