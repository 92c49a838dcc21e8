"""The deck of a ``StartHand``: opened for its table, hand and commitment, then checked to be
exactly the game's deck. Only the table service holds the deck keys (``shuffle.deck_seal``)."""

from __future__ import annotations

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.cards import Card
from openpoker.engine.rules import Rules
from openpoker.services.table import mapping
from openpoker.shuffle.deck_seal import DeckKeys, open_deck


def deck_of(
    keys: DeckKeys | None, request: pb.StartHandRequest, table_id: str, hand_id: str, rules: Rules
) -> tuple[Card, ...]:
    """SEALED_DECK_INVALID for a deck that does not open for this hand, INVALID_DECK for one that
    is not the game's deck. A plaintext rig without deck keys sends the card codes as they are."""
    if keys is None:
        try:
            codes = request.sealed_deck.decode("ascii")
        except UnicodeDecodeError:
            codes = ""  # refused by mapping.deck_of as not card codes
    else:
        codes = open_deck(
            keys, request.sealed_deck, table_id=table_id, hand_id=hand_id, commitment=request.deck_commitment
        )
    return mapping.deck_of(codes, rules)
