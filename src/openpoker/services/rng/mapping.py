"""Pure converters between ``poker.rng.v1`` messages and domain values."""

from __future__ import annotations

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.engine.cards import STANDARD_DECK, Card, parse_card
from openpoker.engine.errors import InvalidCard
from openpoker.services.rng.app import Revealed, Shuffled
from openpoker.shuffle import Check, DealtCard, ShuffleRecord, Verification
from openpoker.shuffle.deck_seal import DeckKeys, seal_deck

_CHECKS: dict[Check, pb.VerifyCheck.ValueType] = {
    Check.UNKNOWN_VERSION: pb.VERIFY_CHECK_UNKNOWN_VERSION,
    Check.BAD_DECK_SIZE: pb.VERIFY_CHECK_BAD_DECK_SIZE,
    Check.BAD_HAND_ID: pb.VERIFY_CHECK_BAD_HAND_ID,
    Check.SEED_MISSING: pb.VERIFY_CHECK_SEED_MISSING,
    Check.SEED_LENGTH: pb.VERIFY_CHECK_SEED_LENGTH,
    Check.COMMITMENT_MALFORMED: pb.VERIFY_CHECK_COMMITMENT_MALFORMED,
    Check.COMMITMENT_MISMATCH: pb.VERIFY_CHECK_COMMITMENT_MISMATCH,
    Check.POSITION_OUT_OF_RANGE: pb.VERIFY_CHECK_POSITION_OUT_OF_RANGE,
    Check.DUPLICATE_POSITION: pb.VERIFY_CHECK_DUPLICATE_POSITION,
    Check.DECK_MISMATCH: pb.VERIFY_CHECK_DECK_MISMATCH,
}


# Every card's code, made once (the short deck is a subset): a deck is 52 lookups, not 52 str().
_CODES: dict[Card, str] = {card: str(card) for card in STANDARD_DECK}


def shuffle_response(s: Shuffled, keys: DeckKeys | None) -> pb.ShuffleResponse:
    """The shuffle as the dealer receives it: the deck sealed for the table's hand (as card codes
    only on a plaintext rig without deck keys)."""
    codes = "".join([_CODES[c] for c in s.deck])
    sealed = (
        codes.encode("ascii")
        if keys is None
        else seal_deck(keys, codes, table_id=s.table_id, hand_id=s.hand_id, commitment=s.commitment)
    )
    return pb.ShuffleResponse(
        commitment=s.commitment,
        algorithm_version=s.version,
        table_id=s.table_id,
        hand_id=s.hand_id,
        deck_size=s.deck_size,
        sealed_deck=sealed,
    )


def record_to_proto(r: ShuffleRecord) -> pb.ShuffleRecord:
    return pb.ShuffleRecord(
        algorithm_version=r.version,
        hand_id=r.hand_id,
        deck_size=r.deck_size,
        commitment=r.commitment,
        seed=r.seed or b"",
        dealt=[pb.DealtCard(position=d.position, card=str(d.card)) for d in r.dealt],
    )


def reveal_response(r: Revealed) -> pb.RevealSeedResponse:
    return pb.RevealSeedResponse(record=record_to_proto(r.record), table_id=r.table_id)


def record_from_proto(m: pb.ShuffleRecord) -> ShuffleRecord:
    """Raises ``InvalidCard`` for a dealt card that is not a card code."""
    return ShuffleRecord(
        version=m.algorithm_version,
        hand_id=m.hand_id,
        deck_size=m.deck_size,
        commitment=m.commitment,
        seed=m.seed or None,
        dealt=tuple(DealtCard(position=d.position, card=parse_card(d.card)) for d in m.dealt),
    )


def verify_response(v: Verification) -> pb.VerifyResponse:
    response = pb.VerifyResponse(ok=v.ok, detail=v.detail)
    if v.check is not None:
        response.failed_check = _CHECKS[v.check]
    if v.position is not None:
        response.position = v.position
    if v.expected is not None:
        response.expected_card = str(v.expected)
    if v.found is not None:
        response.found_card = str(v.found)
    return response


def verify_request(m: pb.VerifyRequest) -> ShuffleRecord | pb.VerifyResponse:
    """The record to verify, or the response for a record whose cards do not parse."""
    try:
        return record_from_proto(m.record)
    except InvalidCard as exc:
        return pb.VerifyResponse(
            ok=False, failed_check=pb.VERIFY_CHECK_BAD_CARD, detail=f"not a card: {exc.text!r}"
        )
