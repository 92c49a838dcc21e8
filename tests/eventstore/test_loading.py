"""``eventstore.loading``: each stored message is checked against the last good envelope, and
the first that is not the writer's next envelope is a finding, never an exception."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.eventstore import GENESIS, Draft, Envelope, RecordedEvent, StoredEnvelope, seal
from openpoker.eventstore.errors import CorruptMessage
from openpoker.eventstore.loading import (
    Finding,
    LogQuarantined,
    Problem,
    Tip,
    check_stored,
    fold_finding,
    read_checked,
    signature_verifier,
)
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.eventstore.signing import Keyring, PublicKey, Signer, raw_public

T0 = dt.datetime(2026, 11, 22, 3, 0, tzinfo=dt.UTC)
SUBJECT = "poker.test.log"
START = Tip(version=0, hash=GENESIS)


def draft(version: int, *, stream: str = "s1") -> Draft:
    return Draft(
        stream_id=stream,
        version=version,
        command_id=f"c{version}",
        owner_epoch=1,
        rules_version="r/1",
        engine_version="e1",
        events=(RecordedEvent(type="E", payload=b"{}"),),
        recorded_at=T0,
    )


def stored_chain(count: int) -> list[StoredEnvelope]:
    out: list[StoredEnvelope] = []
    prev = GENESIS
    for version in range(1, count + 1):
        env = seal(draft(version), prev)
        out.append(StoredEnvelope(envelope=env, sequence=10 * version))
        prev = env.hash
    return out


def check(stored: list[StoredEnvelope], **kw: object) -> tuple[int, Finding | None]:
    read = check_stored(stored, stream="s1", subject=SUBJECT, tip=START, **kw)  # type: ignore[arg-type]
    return len(read.good), read.finding


def replaced(stored: list[StoredEnvelope], index: int, envelope: Envelope) -> list[StoredEnvelope]:
    out = list(stored)
    out[index] = StoredEnvelope(envelope=envelope, sequence=stored[index].sequence)
    return out


def test_a_sound_log_has_no_finding() -> None:
    assert check(stored_chain(3)) == (3, None)


def test_a_log_after_a_snapshot_is_checked_from_its_tip() -> None:
    stored = stored_chain(3)
    tip = Tip(version=1, hash=stored[0].envelope.hash)
    read = check_stored(stored[1:], stream="s1", subject=SUBJECT, tip=tip)
    assert read.finding is None
    assert len(read.good) == 2


def _problem(stored: list[StoredEnvelope], **kw: object) -> tuple[int, Problem, int, int]:
    good, finding = check(stored, **kw)
    assert finding is not None
    return good, finding.problem, finding.sequence, finding.version


def test_each_broken_check_is_named_at_its_sequence_and_version() -> None:
    stored = stored_chain(3)
    second = stored[1].envelope
    rechained_elsewhere = seal(draft(2, stream="other"), stored[0].envelope.hash)
    assert _problem(replaced(stored, 1, rechained_elsewhere)) == (1, Problem.WRONG_STREAM, 20, 2)
    assert _problem(replaced(stored, 1, seal(draft(3), second.prev_hash))) == (1, Problem.VERSION_GAP, 20, 3)
    assert _problem(replaced(stored, 1, seal(draft(2), GENESIS))) == (1, Problem.CHAIN_BROKEN, 20, 2)
    tampered = dataclasses.replace(second, command_id="forged")
    assert _problem(replaced(stored, 1, tampered)) == (1, Problem.BAD_HASH, 20, 2)


def test_a_verifier_can_reject_an_envelope() -> None:
    def no_third(env: Envelope) -> str | None:
        return "not signed" if env.version == 3 else None

    good, finding = check(stored_chain(3), verifier=no_third)
    assert good == 2
    assert finding is not None
    assert (finding.problem, finding.sequence, finding.detail) == (Problem.REJECTED, 30, "not signed")


def test_an_undecodable_message_after_good_ones_is_a_finding_at_the_expected_version() -> None:
    stored = stored_chain(2)
    unreadable = CorruptMessage(subject=SUBJECT, sequence=30, problem="Error parsing message")
    read = check_stored(stored, stream="s1", subject=SUBJECT, tip=START, unreadable=unreadable)
    assert len(read.good) == 2
    assert read.finding is not None
    assert (read.finding.problem, read.finding.sequence, read.finding.version) == (Problem.UNDECODABLE, 30, 3)


def test_a_finding_before_an_undecodable_message_is_reported_first() -> None:
    stored = stored_chain(2)
    stored = replaced(stored, 1, seal(draft(2), GENESIS))
    unreadable = CorruptMessage(subject=SUBJECT, sequence=30, problem="bad")
    read = check_stored(stored, stream="s1", subject=SUBJECT, tip=START, unreadable=unreadable)
    assert read.finding is not None
    assert read.finding.problem is Problem.CHAIN_BROKEN


async def test_read_checked_turns_an_unreadable_message_into_a_finding() -> None:
    class Unreadable(InMemoryEventStore):
        async def read(
            self, subject: str, *, after_sequence: int = 0, from_version: int = 1
        ) -> list[StoredEnvelope]:
            before = await super().read(subject, after_sequence=after_sequence, from_version=from_version)
            raise CorruptMessage(subject=subject, sequence=99, problem="garbage", read_before=before)

    events = Unreadable()
    sequence = 0
    for item in stored_chain(2):
        sequence = (await events.append(SUBJECT, item.envelope, expected_sequence=sequence)).sequence
    read = await read_checked(events, SUBJECT, stream="s1", tip=START)
    assert [s.envelope.version for s in read.good] == [1, 2]
    assert read.finding is not None
    assert (read.finding.problem, read.finding.sequence) == (
        Problem.UNDECODABLE,
        99,
    )


def test_the_quarantine_error_carries_stream_sequence_and_problem() -> None:
    stored = stored_chain(1)[0]
    finding = fold_finding(stored, stream="s1", subject=SUBJECT, exc=KeyError("x"))
    err = LogQuarantined(finding)
    assert (err.reason, err.kind) == ("LOG_QUARANTINED", "precondition")
    assert err.metadata() == {"stream": "s1", "sequence": "10", "problem": "events do not fold"}
    assert "events do not fold at stream sequence 10 (version 1) of s1" in str(err)


@pytest.mark.parametrize("problem", list(Problem))
def test_every_problem_reads_as_words(problem: Problem) -> None:
    assert str(problem) == problem.value
    assert problem.value.islower()


def test_the_signature_check_plugs_in_as_a_verifier() -> None:
    signer = Signer.from_key("wallet", ed25519.Ed25519PrivateKey.generate())
    public = PublicKey(
        key_id=signer.key_id, writer="wallet", public=raw_public(signer.key.public_key()), created=T0
    )
    verifier = signature_verifier(Keyring(keys={signer.key_id: public}), writer="wallet")
    stored = [dataclasses.replace(s, envelope=signer.sign(s.envelope)) for s in stored_chain(3)]
    assert check(stored, verifier=verifier) == (3, None)
    stored[2] = dataclasses.replace(
        stored[2], envelope=dataclasses.replace(stored[2].envelope, signature=b"x" * 64)
    )
    good, finding = check(stored, verifier=verifier)
    assert good == 2
    assert finding is not None
    assert (finding.problem, finding.detail) == (
        Problem.REJECTED,
        f"bad signature at version 3 (key {signer.key_id!r})",
    )
