"""``pokerctl watch``'s frame (pure: a Table message in, text out) and the demo's table plan."""

from __future__ import annotations

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.pokerctl.cmd_demo import percentile, table_plan
from openpoker.pokerctl.cmd_watch import describe_action, render


def table() -> tpb.Table:
    return tpb.Table(
        name="tables/t1",
        table_id="t1",
        version=42,
        hands_played=3,
        config=tpb.TableConfig(
            game=tpb.GAME_OMAHA,
            structure=tpb.STRUCTURE_POT_LIMIT,
            stakes=tpb.Stakes(small_blind=1, big_blind=2),
        ),
        seats=[
            tpb.Seat(
                seat=1,
                player_id="ann",
                stack=190,
                bet=4,
                status=tpb.SEAT_STATUS_ACTIVE,
                hole_cards=["As", "Kd", "7c", "2h"],
                is_button=True,
            ),
            tpb.Seat(seat=2, status=tpb.SEAT_STATUS_EMPTY),
            tpb.Seat(
                seat=3,
                player_id="bob",
                stack=196,
                bet=2,
                status=tpb.SEAT_STATUS_ACTIVE,
                hole_cards=["", "", "", ""],
            ),
        ],
        current_hand=tpb.Hand(
            hand_id="t1-4",
            hand_number=4,
            street=tpb.STREET_FLOP,
            outcome=tpb.HAND_OUTCOME_IN_PROGRESS,
            board=["Qs", "Jh", "Tc"],
            pots=[tpb.Pot(amount=8)],
            to_act=tpb.LegalActions(
                seat=3,
                actions=[tpb.ACTION_TYPE_FOLD, tpb.ACTION_TYPE_CALL, tpb.ACTION_TYPE_RAISE],
                call_amount=2,
                min_raise_to=8,
                max_raise_to=18,
            ),
        ),
    )


def test_a_frame_shows_what_the_viewer_may_see() -> None:
    frame = render(table(), ["ann raises to 4"], viewer="ann")
    lines = frame.splitlines()
    assert lines[0] == "tables/t1  Omaha Pot Limit 1/2  version 42  hands played 3"
    assert "watching as ann" in frame
    assert "hand #4 (t1-4)  flop  pot 8" in frame
    assert "board: Qs Jh Tc" in frame
    ann = next(line for line in lines if "ann " in line and "190" in line)
    bob = next(line for line in lines if "bob" in line)
    assert ann.split()[:2] == ["1", "D"]
    assert "As Kd 7c 2h" in ann
    assert "?? ?? ?? ??" in bob
    assert "<- to act (folds, calls, raises to; call 2; to 8..18)" in bob
    assert "<- to act" not in ann
    assert not any(line.startswith(" 2 ") for line in lines)  # empty seats are left out
    assert lines[-1] == "last actions: ann raises to 4"


def test_between_hands_and_action_text() -> None:
    t = table()
    t.current_hand.outcome = tpb.HAND_OUTCOME_SHOWDOWN
    frame = render(t)
    assert "between hands" in frame
    assert "watching as a spectator" in frame
    assert "<- to act" not in frame
    record = tpb.ActionRecord(seat=3, action=tpb.ACTION_TYPE_CALL, amount=2, all_in=True, automatic=True)
    assert describe_action(record, {3: "bob"}) == "bob calls 2 (all-in) [time]"
    assert describe_action(tpb.ActionRecord(seat=5, action=tpb.ACTION_TYPE_FOLD), {}) == "seat 5 folds"


def test_demo_tables_cover_every_game_and_structure() -> None:
    plan = table_plan(9, "d-")
    assert [name for name, _ in plan][:2] == ["d-1", "d-2"]
    assert len({(c.game, c.structure) for _, c in plan}) == 9
    assert percentile([], 50) == 0.0
    assert percentile([5.0], 99) == 5.0
    assert percentile([float(i) for i in range(1, 101)], 50) == 50.5
