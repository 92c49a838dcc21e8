"""The bytes the wallet stores for each event: they are hashed into the log's chain and read by
every later version, so they are pinned here, written out by hand (sorted keys, ``json``'s
default separators, as the log has held them from its first message)."""

from __future__ import annotations

import json

from openpoker.engine.rules import RakeRules
from openpoker.ledger.commands import PlayerAmount
from openpoker.ledger.events import Event, HandOpened, HandSettled, LedgerOpened, TransfersCommitted
from openpoker.ledger.store import from_recorded, to_recorded
from openpoker.ledger.transfers import Phase, TransferCode, TransferRecord

RESERVE = TransferRecord(
    id="hand/t1/7/reserve/p1",
    phase=Phase.PENDING,
    code=TransferCode.HAND_RESERVE,
    debit="escrow/t1/p1",
    credit="pot/t1/7",
    amount=300,
)
POST = TransferRecord(
    id="hand/t1/7/post/p1",
    phase=Phase.POST,
    code=TransferCode.HAND_CONTRIBUTION,
    debit="escrow/t1/p1",
    credit="pot/t1/7",
    amount=40,
    pending_id="hand/t1/7/reserve/p1",
    released=260,
)


def test_stored_event_bytes_are_unchanged() -> None:
    cases: list[tuple[Event, bytes]] = [
        (LedgerOpened(currency="CHIPS"), b'{"currency": "CHIPS", "type": "LedgerOpened"}'),
        (
            TransfersCommitted(request_id="r-1", transfers=(RESERVE, POST)),
            b'{"request_id": "r-1", "transfers": [{"amount": 300, "code": "hand_reserve", '
            b'"credit": "pot/t1/7", "debit": "escrow/t1/p1", "id": "hand/t1/7/reserve/p1", '
            b'"phase": "pending"}, {"amount": 40, "code": "hand_contribution", "credit": "pot/t1/7", '
            b'"debit": "escrow/t1/p1", "id": "hand/t1/7/post/p1", "pending_id": '
            b'"hand/t1/7/reserve/p1", "phase": "post", "released": 260}], "type": "TransfersCommitted"}',
        ),
        (
            HandOpened(
                table_id="t1",
                hand_no=7,
                stacks=(PlayerAmount(player="p1", amount=300),),
                rake=RakeRules(basis_points=500, caps=((2, 50),), no_flop_no_drop=True),
            ),
            b'{"hand_no": 7, "rake": {"basis_points": 500, "caps": [[2, 50]], "no_flop_no_drop": true}, '
            b'"stacks": [["p1", 300]], "table_id": "t1", "type": "HandOpened"}',
        ),
        (  # a rake unit other than 1 is written; 1, what events before it existed meant, is not
            HandOpened(
                table_id="t1",
                hand_no=8,
                stacks=(PlayerAmount(player="p1", amount=300),),
                rake=RakeRules(basis_points=500, caps=(), no_flop_no_drop=True, unit=100),
            ),
            b'{"hand_no": 8, "rake": {"basis_points": 500, "caps": [], "no_flop_no_drop": true, '
            b'"unit": 100}, "stacks": [["p1", 300]], "table_id": "t1", "type": "HandOpened"}',
        ),
        (
            HandSettled(table_id="t1", hand_no=7, pot=80, rake=4, saw_flop=True, players_dealt_in=2),
            b'{"hand_no": 7, "players_dealt_in": 2, "pot": 80, "rake": 4, "saw_flop": true, '
            b'"table_id": "t1", "type": "HandSettled"}',
        ),
    ]
    for event, stored in cases:
        recorded = to_recorded(event)
        assert recorded.payload == stored
        assert recorded.type == json.loads(stored)["type"]
        assert from_recorded(recorded) == event
