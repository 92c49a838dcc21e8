"""Pure converters between the dealer's values and ``poker.dealer.v1`` messages."""

from __future__ import annotations

import datetime as dt

from google.protobuf.timestamp_pb2 import Timestamp

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.services.dealer.driver import ActiveHandInfo, Stage
from openpoker.services.dealer.pausing import DEALER, Pause
from openpoker.tablelog import ids

STAGES: dict[Stage, int] = {
    Stage.SHUFFLING: pb.HAND_STAGE_SHUFFLING,
    Stage.RESERVING: pb.HAND_STAGE_RESERVING,
    Stage.PLAYING: pb.HAND_STAGE_PLAYING,
    Stage.SETTLING: pb.HAND_STAGE_SETTLING,
    Stage.REVEALING: pb.HAND_STAGE_REVEALING,
    Stage.VOIDING: pb.HAND_STAGE_VOIDING,
}


def timestamp(when: dt.datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(when)
    return ts


def active_hand(info: ActiveHandInfo) -> pb.ActiveHand:
    msg = pb.ActiveHand(
        name=ids.hand_name(info.table_id, info.hand_id),
        table_id=info.table_id,
        hand_id=info.hand_id,
        stage=STAGES[info.stage],  # type: ignore[arg-type]
        started_at=timestamp(info.started_at),
        seat_to_act=0 if info.seat_to_act is None else info.seat_to_act + 1,
        table_version=info.table_version,
    )
    if info.action_deadline is not None:
        msg.action_deadline.CopyFrom(timestamp(info.action_deadline))
    return msg


def paused_table(table_id: str, pause: Pause) -> pb.PausedTable:
    msg = pb.PausedTable(
        table=ids.table_name(table_id),
        paused_by=pb.PAUSED_BY_DEALER if pause.by == DEALER else pb.PAUSED_BY_OPERATOR,
        reason=pause.reason,
        failures=pause.failures,
        detail=pause.detail,
    )
    if pause.at is not None:
        msg.paused_at.CopyFrom(timestamp(pause.at))
    return msg
