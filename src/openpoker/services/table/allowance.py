"""``ResetAllInAllowance``, an operator's command: protobuf -> the table's reset -> protobuf.

The handler (``handlers.TableServicer``) checks the caller first (an operator token or
``pokerctl``'s staff certificate); here the request's player is taken as named, since an operator
sits in nobody's seat and acts on the player the request is about.
"""

from __future__ import annotations

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table import mapping
from openpoker.services.table.app import TableApp
from openpoker.services.table.errors import PlayerRequired
from openpoker.shell.logs import bind


async def reset(app: TableApp, request: pb.ResetAllInAllowanceRequest) -> pb.ResetAllInAllowanceResponse:
    """Reset the player's all-in allowance at the table; ``cleared`` 0 and the version unchanged
    when no protection of theirs counts there."""
    rid = mapping.request_id_of(request.request_id)
    table_id = mapping.table_id_of(request.table)
    if not request.player_id:
        raise PlayerRequired
    player = mapping.player_id_of(request.player_id)
    bind(player=player)
    done = await app.reset_allowance(request_id=rid, table_id=table_id, player=player)
    return pb.ResetAllInAllowanceResponse(version=done.outcome.version, cleared=done.outcome.cleared)
