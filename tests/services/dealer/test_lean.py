"""The dealer's per-hand savings keep its behaviour: decoded events shared by their bytes, one
wake-up timer per table kept while a decision's deadline stays, the stream sequence read from
the reply subject, request ids spelt out."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from nats.aio.msg import Msg

from openpoker.engine import codec
from openpoker.engine import table as engine_table
from openpoker.engine.hand_events import ActionKind, Checked
from openpoker.eventstore.envelope import RecordedEvent
from openpoker.services.dealer.feed import stream_sequence
from openpoker.services.dealer.tracker import TableTrack, decode_event
from openpoker.tablelog import ids
from tests.helpers.waiting import until
from tests.services.dealer.fakes import seat_to_act
from tests.services.dealer.rig import FAST, SLOW, Rig, rules

T = "t1"


def recorded(event: object) -> RecordedEvent:
    return RecordedEvent(type=type(event).__name__, payload=json.dumps(codec.encode(event)).encode())


def test_equal_bytes_decode_to_one_shared_value_and_different_bytes_do_not() -> None:
    first = decode_event(recorded(Checked(seat=1)))
    again = decode_event(recorded(Checked(seat=1)))  # equal bytes, another object
    other = decode_event(recorded(Checked(seat=0)))
    assert first == Checked(seat=1)
    assert again is first
    assert other == Checked(seat=0)


def test_a_payload_the_engine_does_not_know_is_still_skipped() -> None:
    assert decode_event(RecordedEvent(type="OwnerChanged", payload=b'{"epoch": 2, "owner": "x"}')) is None
    assert decode_event(RecordedEvent(type="Checked", payload=b"not json")) is None
    assert decode_event(RecordedEvent(type="Checked", payload=b'{"seat": "one"}')) is None


async def test_two_tables_folding_the_same_bytes_keep_their_own_state() -> None:
    """Events shared between folds are values: a fold of one log is the same whether or not
    another log decoded the same bytes before."""
    rig = Rig()
    rig.app.go_live()
    for table_id in ("a", "b"):
        rig.table.open(table_id, rules(time=SLOW))
        rig.seat(table_id, {0: f"ann-{table_id}", 1: f"bob-{table_id}"})
    await until(lambda: all(rig.table.state(t).hand is not None for t in ("a", "b")), what="hands")
    for table_id in ("a", "b"):
        seat = seat_to_act(rig.table, table_id)
        assert seat is not None
        rig.table.act(table_id, seat, ActionKind.CALL)
    await rig.app.stop()
    for table_id in ("a", "b"):
        track = TableTrack(table_id=table_id)
        for sequence, (t, env) in enumerate(rig.table.envelopes, start=1):
            if t == table_id:
                track.apply(env, sequence)
        live = rig.app.drivers[table_id].track
        assert track.state is not None
        assert live.state is not None
        table = rig.table.state(table_id)
        assert engine_table.view(track.state, None) == engine_table.view(table, None)
        assert engine_table.view(live.state, None) == engine_table.view(table, None)
        assert track.decision() == live.decision() == engine_table.decision_time_ms(table)
        assert track.version == live.version


async def test_one_timer_per_decision_however_often_the_driver_wakes() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    d = rig.app.driver(T)
    await until(lambda: d.clock is not None and d.timer is not None, what="a decision's clock")
    timer, deadline = d.timer, d.clock.deadline if d.clock else None
    for _ in range(5):  # wake-ups that change nothing (as envelopes of other facts do)
        d.wake.set()
        await asyncio.sleep(0.01)
    assert d.timer is timer
    assert d.clock is not None
    assert d.clock.deadline == deadline
    # A new decision gets a new timer.
    seat = seat_to_act(rig.table, T)
    assert seat is not None
    rig.table.act(T, seat, ActionKind.CALL)
    await until(lambda: d.timer is not timer and d.timer is not None, what="the next decision's timer")
    assert timer is not None
    assert timer.cancelled()
    await rig.app.stop()
    assert d.timer is None  # nothing left on the loop after a stop


async def test_the_kept_timer_still_times_the_seat_out() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=FAST))
    rig.seat(T, {0: "ann", 1: "bob"})
    d = rig.app.driver(T)
    await until(lambda: d.timer is not None, what="a decision's clock")
    for _ in range(3):
        d.wake.set()
        await asyncio.sleep(0.002)
    await until(lambda: rig.app.timeouts >= 1, what="a time-out")
    assert any(method == "TimeOutSeat" for method, _ in rig.table.calls)
    await rig.app.stop()


def _msg(reply: str) -> Msg:
    return Msg(_client=None, subject="poker.table.1.t1", reply=reply, data=b"")  # type: ignore[arg-type]


def test_the_stream_sequence_is_read_from_either_reply_form() -> None:
    v1 = _msg("$JS.ACK.TABLE_EVENTS.consumer.1.4711.12.1732262400000000000.3")
    assert stream_sequence(v1) == 4711 == v1.metadata.sequence.stream
    v2 = _msg("$JS.ACK.dom.ACCHASH.TABLE_EVENTS.consumer.1.815.12.1732262400000000000.3.tok")
    assert stream_sequence(v2) == 815 == v2.metadata.sequence.stream


@pytest.mark.parametrize(
    ("table_id", "number", "step"),
    [
        ("t1", 1, "open"),
        ("bench-0017", 123_456, "start/42"),
        ("h" + "0" * 24, 7, "timeout/12/3"),
        ("tåble-é", 2, "presence/ann/1/1732262400000/inst/run/9"),
    ],
)
def test_request_ids_are_the_uuid5_of_the_step(table_id: str, number: int, step: str) -> None:
    expected = uuid.uuid5(
        uuid.uuid5(uuid.NAMESPACE_URL, "https://openpoker.invalid/dealer"),
        f"dealer/{table_id}/{number}/{step}",
    )
    assert ids.request_id(table_id, number, step) == str(expected)
