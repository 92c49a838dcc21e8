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
    """Reset the player's all-in allowance at the table (and its uses in the site-wide record);
    ``cleared`` 0 and the version unchanged when no protection of theirs counts there. Without a
    table, at every table: the site-wide record emptied and each table it names reset; version
    0 and ``cleared`` the protections that counted in the record."""
    rid = mapping.request_id_of(request.request_id)
    table_id = mapping.table_id_of(request.table) if request.table else ""
    if not request.player_id:
        raise PlayerRequired
    player = mapping.player_id_of(request.player_id)
    bind(player=player)
    if not table_id:  # every table: the site-wide record, and the tables it names
        cleared = await app.reset_allowance_everywhere(request_id=rid, player=player)
        return pb.ResetAllInAllowanceResponse(version=0, cleared=cleared)
    done = await app.reset_allowance(request_id=rid, table_id=table_id, player=player)
    return pb.ResetAllInAllowanceResponse(version=done.outcome.version, cleared=done.outcome.cleared)
