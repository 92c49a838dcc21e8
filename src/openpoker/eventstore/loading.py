"""Checking a log as it is loaded: the first stored message that is not the writer's next
envelope is a ``Finding``, never an exception.

Anyone who may publish on a log's subject can put a message there (garbage, a foreign envelope,
one carrying the writer's own message id). A loader that crashed on it would keep the service
down; one that folded it would change balances or a table. So each stored message is checked in
order, each check against the last good envelope (or the snapshot the load started from):

* it decodes as an envelope (``UNDECODABLE``: its version is reported as the one expected);
* its stream id is the log's (``WRONG_STREAM``);
* its version is the previous one + 1 (``VERSION_GAP``);
* its ``prev_hash`` is the previous envelope's hash (``CHAIN_BROKEN``);
* its hash recomputes from its content (``BAD_HASH``);
* the optional ``verifier`` accepts it (``REJECTED``: e.g. a signature check, which returns a
  description of what is wrong or None);
* its events decode and fold into the state (``EVENTS_DO_NOT_FOLD``: checked by the loader,
  which knows the domain, through ``fold_finding``).

A service that gets a finding keeps the state folded up to the last good envelope, serves reads
and refuses every write with ``LogQuarantined`` (FAILED_PRECONDITION, ``LOG_QUARANTINED``) until
an operator removes the message and restarts it (docs/operations.md#quarantined-logs). A
duplicate ack whose stored message is not the writer's own envelope is ``NOT_OURS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from openpoker.eventstore.chain import compute_hash
from openpoker.eventstore.envelope import Envelope, Snapshot, StoredEnvelope
from openpoker.eventstore.errors import CorruptMessage, EventStoreError
from openpoker.eventstore.port import EventStore
from openpoker.eventstore.signing import Keyring, check_signature

# A further check of each envelope (a signature): None when it passes, else what is wrong.
Verifier = Callable[[Envelope], str | None]
# The same of a snapshot before it is used (a snapshot that fails is not used: the log is read).
SnapshotVerifier = Callable[[Snapshot], str | None]


def signature_verifier(keyring: Keyring, *, writer: str) -> Verifier:
    """The signature check (``eventstore.signing``) as a loader's ``verifier``: an envelope not
    signed by a key of ``writer`` in ``keyring`` is ``REJECTED`` with what is wrong."""

    def verify(envelope: Envelope) -> str | None:
        problem = check_signature(envelope, keyring, writer=writer)
        return None if problem is None else problem.describe()

    return verify


class Problem(StrEnum):
    UNDECODABLE = "undecodable"
    WRONG_STREAM = "wrong stream"
    VERSION_GAP = "version gap"
    CHAIN_BROKEN = "chain broken"
    BAD_HASH = "bad hash"
    REJECTED = "rejected"
    EVENTS_DO_NOT_FOLD = "events do not fold"
    NOT_OURS = "not our envelope"


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """The first stored message of a log that is not its writer's next envelope."""

    stream: str  # the log's stream id: "wallet", or a table id
    subject: str
    sequence: int  # the message's stream sequence (what an operator removes)
    version: int  # the envelope's version (the expected one when it does not decode)
    problem: Problem
    detail: str = ""

    def describe(self) -> str:
        detail = f": {self.detail}" if self.detail else ""
        return (
            f"{self.problem} at stream sequence {self.sequence} (version {self.version}) "
            f"of {self.stream} on {self.subject}{detail}"
        )

    def fields(self) -> dict[str, object]:
        return {
            "stream": self.stream,
            "subject": self.subject,
            "sequence": self.sequence,
            "version": self.version,
            "problem": str(self.problem),
        }


class LogQuarantined(EventStoreError):
    """A log holds a message that is not its writer's: nothing is written past it until an
    operator removes it (docs/operations.md#quarantined-logs)."""

    reason = "LOG_QUARANTINED"
    kind = "precondition"

    def __init__(self, finding: Finding) -> None:
        super().__init__(
            f"log quarantined: {finding.describe()}",
            stream=finding.stream,
            sequence=finding.sequence,
            problem=str(finding.problem),
        )
        self.finding = finding


@dataclass(frozen=True, slots=True, kw_only=True)
class Tip:
    """The last good envelope of a log (version 0 and ``GENESIS`` when empty)."""

    version: int
    hash: bytes


def check_envelope(
    stored: StoredEnvelope,
    *,
    stream: str,
    subject: str,
    tip: Tip,
    verifier: Verifier | None = None,
) -> Finding | None:
    """The structural checks of one envelope against the tip it must follow."""
    env = stored.envelope

    def finding(problem: Problem, detail: str) -> Finding:
        return Finding(
            stream=stream,
            subject=subject,
            sequence=stored.sequence,
            version=env.version,
            problem=problem,
            detail=detail,
        )

    if env.stream_id != stream:
        return finding(Problem.WRONG_STREAM, f"stream id {env.stream_id!r}")
    if env.version != tip.version + 1:
        return finding(Problem.VERSION_GAP, f"version {env.version} follows {tip.version}")
    if env.prev_hash != tip.hash:
        return finding(Problem.CHAIN_BROKEN, "prev_hash is not the previous envelope's hash")
    try:
        recomputed = compute_hash(env, env.prev_hash)
    except (ValueError, OverflowError) as exc:  # a time the canonical encoding cannot hold
        return finding(Problem.BAD_HASH, str(exc))
    if recomputed != env.hash:
        return finding(Problem.BAD_HASH, "hash does not match the envelope's content")
    if verifier is not None and (why := verifier(env)) is not None:
        return finding(Problem.REJECTED, why)
    return None


def fold_finding(stored: StoredEnvelope, *, stream: str, subject: str, exc: Exception) -> Finding:
    """The finding for an envelope whose events did not decode or fold (``exc``)."""
    return Finding(
        stream=stream,
        subject=subject,
        sequence=stored.sequence,
        version=stored.envelope.version,
        problem=Problem.EVENTS_DO_NOT_FOLD,
        detail=f"{type(exc).__name__}: {exc}",
    )


def not_ours(
    stored: StoredEnvelope | None, *, stream: str, subject: str, ours: Envelope, sequence: int
) -> Finding:
    """A duplicate ack at ``sequence`` for ``ours`` whose stored message is something else."""
    return Finding(
        stream=stream,
        subject=subject,
        sequence=sequence,
        version=ours.version,
        problem=Problem.NOT_OURS,
        detail=f"the message stored under id {ours.msg_id} is not this writer's envelope"
        + ("" if stored is not None else " (it does not decode)"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedRead:
    """The envelopes that passed the structural checks, in order, and the first finding."""

    good: tuple[StoredEnvelope, ...]
    finding: Finding | None


def check_stored(
    stored: Sequence[StoredEnvelope],
    *,
    stream: str,
    subject: str,
    tip: Tip,
    verifier: Verifier | None = None,
    unreadable: CorruptMessage | None = None,
) -> CheckedRead:
    """Check ``stored`` in order after ``tip``; ``unreadable``: the read stopped at a message that
    does not decode (after ``stored``), itself a finding if every envelope before it passes."""
    good: list[StoredEnvelope] = []
    for item in stored:
        finding = check_envelope(item, stream=stream, subject=subject, tip=tip, verifier=verifier)
        if finding is not None:
            return CheckedRead(good=tuple(good), finding=finding)
        good.append(item)
        tip = Tip(version=item.envelope.version, hash=item.envelope.hash)
    if unreadable is not None:
        undecodable = Finding(
            stream=stream,
            subject=subject,
            sequence=unreadable.sequence,
            version=tip.version + 1,
            problem=Problem.UNDECODABLE,
            detail=unreadable.problem,
        )
        return CheckedRead(good=tuple(good), finding=undecodable)
    return CheckedRead(good=tuple(good), finding=None)


async def read_checked(
    events: EventStore,
    subject: str,
    *,
    stream: str,
    tip: Tip,
    after_sequence: int = 0,
    verifier: Verifier | None = None,
) -> CheckedRead:
    """``events.read`` after ``after_sequence``, checked from ``tip``: a message that does not
    decode ends the read (``CorruptMessage`` carries what was read before it) as a finding."""
    try:
        stored: Sequence[StoredEnvelope] = await events.read(subject, after_sequence=after_sequence)
        unreadable = None
    except CorruptMessage as exc:
        stored, unreadable = exc.read_before, exc
    return check_stored(
        stored, stream=stream, subject=subject, tip=tip, verifier=verifier, unreadable=unreadable
    )
