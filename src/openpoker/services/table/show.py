"""A player's showdown choices and the show of a hand won uncontested (seed 000): protobuf ->
the table's command -> protobuf, for ``SetShowPreferences`` and ``ShowHand``.

The handler (``handlers.TableServicer``) names the player as every player RPC does (a player-role
caller only themself, a service for the player it names); here the command is for that player's
own seat (SEAT_NOT_OWNED when they sit nowhere at the table).
"""

from __future__ import annotations

from collections.abc import Sequence

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine import table
from openpoker.engine.table_events import SetShowPreferences, ShowUncontestedHand
from openpoker.services.table import mapping
from openpoker.services.table.app import TableApp
from openpoker.services.table.commands import seat_of
from openpoker.services.table.errors import SeatNotOwned
from openpoker.tablelog.model import LogEvent, TableModel


def _seat(model: TableModel, player: str) -> int:
    seat = seat_of(model, player)
    if seat is None:
        raise SeatNotOwned(player=player, table_id=model.table_id)
    return seat


async def set_preferences(
    app: TableApp, request: pb.SetShowPreferencesRequest, player: str
) -> pb.SetShowPreferencesResponse:
    """Record ``player``'s choices; a field left unset keeps its current value."""
    rid = mapping.request_id_of(request.request_id)
    table_id = mapping.table_id_of(request.table)

    def decide(model: TableModel) -> Sequence[LogEvent]:
        state = model.state
        assert state is not None
        seat = _seat(model, player)
        occ = state.seats[seat]
        auto_muck = request.auto_muck if request.HasField("auto_muck") else occ.auto_muck
        show = request.show_uncontested if request.HasField("show_uncontested") else occ.show_uncontested
        command = SetShowPreferences(seat=seat, auto_muck=auto_muck, show_uncontested=show)
        return table.decide(state, command)

    done = await app.execute(table_id, request_id=rid, decide=decide)
    out = pb.SetShowPreferencesResponse(version=done.outcome.version)
    mapping.table_view(done.model, player, into=out.table)
    return out


async def show_hand(app: TableApp, request: pb.ShowHandRequest, player: str) -> pb.ShowHandResponse:
    """Show ``player``'s hand won uncontested (CANNOT_SHOW_HAND when it is not theirs to show)."""
    rid = mapping.request_id_of(request.request_id)
    table_id = mapping.table_id_of(request.table)
    hand_id = mapping.hand_id_of(request.hand_id) if request.hand_id else ""

    def decide(model: TableModel) -> Sequence[LogEvent]:
        state = model.state
        assert state is not None
        return table.decide(state, ShowUncontestedHand(seat=_seat(model, player), hand_id=hand_id))

    done = await app.execute(table_id, request_id=rid, decide=decide)
    out = pb.ShowHandResponse(version=done.outcome.version)
    mapping.table_view(done.model, player, into=out.table)
    shown = next((s for s in out.table.seats if s.player_id == player), None)
    if shown is not None:
        out.cards.extend(shown.hole_cards)
    return out
