"""``pokerctl demo``/``play`` notice a table that stops dealing instead of waiting forever."""

from __future__ import annotations

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.pokerctl.cmd_demo import StallWatch, describe


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def table(name: str, hands: int, status: int = tpb.TABLE_STATUS_WAITING) -> tpb.Table:
    return tpb.Table(table_id=name, hands_played=hands, status=status, version=40 + hands)  # type: ignore[arg-type]


def test_a_table_whose_hands_do_not_move_for_the_limit_is_stuck_and_only_that_one() -> None:
    clock = Clock()
    watch = StallWatch(["a", "b"], seconds=60, clock=clock)
    assert watch.stuck({"a": table("a", 0), "b": table("b", 0)}) == []
    clock.now += 59
    assert watch.stuck({"a": table("a", 0), "b": table("b", 3)}) == []
    clock.now += 2  # a: 61 s without a hand; b moved 2 s ago
    assert watch.stuck({"a": table("a", 0), "b": table("b", 3)}) == ["a"]
    assert watch.stuck({"a": table("a", 1), "b": table("b", 3)}) == []  # a dealt again


def test_the_stall_message_names_the_table_its_seats_and_the_dealers_hand() -> None:
    t = table("t9", 41)
    t.seats.append(tpb.Seat(seat=1, status=tpb.SEAT_STATUS_READY, player_id="ann", stack=182))
    t.seats.append(
        tpb.Seat(seat=2, status=tpb.SEAT_STATUS_SITTING_OUT, player_id="bob", stack=7, disconnected=True)
    )
    t.seats.append(tpb.Seat(seat=3, status=tpb.SEAT_STATUS_EMPTY))
    active = [
        dpb.ActiveHand(table_id="t9", hand_id="t9-42", stage=dpb.HAND_STAGE_RESERVING),
        dpb.ActiveHand(table_id="other", hand_id="other-1", stage=dpb.HAND_STAGE_PLAYING),
    ]
    line = describe(t, active)
    assert "status waiting, version 81, hands played 41" in line
    assert "1:ann ready 182" in line
    assert "2:bob sitting_out 7 disconnected" in line
    assert "t9-42 reserving" in line
    assert "other-1" not in line
