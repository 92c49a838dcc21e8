"""gRPC handlers: caller check, protobuf -> app -> protobuf. Nothing else happens here.

The dealer's API is the operator's: pausing, resuming and voiding need an operator token or
``pokerctl``'s staff certificate; the read-only status (GetDealerStatus, ListActiveHands) also an
auditor. Callers are named by ``shell.callers.caller_of`` (the ``x-caller`` header on a plaintext
test rig only): deny by default, UNAUTHENTICATED CALLER_REQUIRED for an anonymous caller,
PERMISSION_DENIED CALLER_NOT_ALLOWED for another.

Until the dealer has folded the table logs after its start (``DealerApp.live``) every RPC is
refused with UNAVAILABLE ``DEALER_CATCHING_UP``: its view of the tables would be partial (a
table not folded yet is not "not found", and a hand list would be empty).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from grpc import aio

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from openpoker.engine.version import ENGINE_VERSION
from openpoker.services.dealer import mapping
from openpoker.services.dealer.app import DealerApp, HandFinished, UnknownHand
from openpoker.services.dealer.errors import (
    BadName,
    CatchingUp,
    HandAlreadyFinished,
    HandNotFound,
    TableNotFound,
)
from openpoker.shell import paging
from openpoker.shell.callers import authorize, caller_of
from openpoker.shell.logs import bind
from openpoker.tablelog import ids

_OPERATORS = frozenset({"operator", "pokerctl"})
_READERS = frozenset({"operator", "auditor", "pokerctl"})
ALLOWED_CALLERS: Mapping[str, frozenset[str]] = {
    "GetDealerStatus": _READERS,
    "ListActiveHands": _READERS,
    "VoidHand": _OPERATORS,
    "PauseTable": _OPERATORS,
    "ResumeTable": _OPERATORS,
}


class DealerServicer(pb_grpc.DealerServiceServicer):
    def __init__(
        self,
        app: DealerApp,
        *,
        pending: Callable[[], Awaitable[int]] | None = None,
        behind: Callable[[], int | None] | None = None,
    ) -> None:
        self._app = app
        self._pending = pending  # consumer lag (the feed), if any
        self._behind = behind  # messages left to fold before the dealer has caught up, if known

    def _enter(self, method: str, context: aio.ServicerContext[Any, Any]) -> None:
        caller = caller_of(context)
        bind(caller=caller or "-")
        authorize(ALLOWED_CALLERS, method, caller)
        if not self._app.live:
            raise CatchingUp(behind=None if self._behind is None else self._behind())

    async def GetDealerStatus(
        self, request: pb.GetDealerStatusRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.GetDealerStatusResponse:
        self._enter("GetDealerStatus", context)
        app = self._app
        pending = 0 if self._pending is None else await self._pending()
        return pb.GetDealerStatusResponse(
            tables_followed=sum(1 for d in app.drivers.values() if d.track.state is not None),
            active_hands=len(app.active_hands()),
            paused_tables=app.paused_tables(),
            hands_completed=app.hands_completed,
            pending_events=pending,
            started_at=mapping.timestamp(app.started_at),
            engine_version=ENGINE_VERSION,
            paused=[mapping.paused_table(t, p) for t, p in app.pauses_shown()],
        )

    async def ListActiveHands(
        self, request: pb.ListActiveHandsRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.ListActiveHandsResponse:
        self._enter("ListActiveHands", context)
        size = paging.page_size(request.page_size)
        offset = paging.page_offset(request.page_token, t=request.table)
        hands = self._app.active_hands()
        if request.table:
            table_id = ids.parse_table_name(request.table)
            if table_id is None:
                raise BadName(name=request.table, expected="tables/{table}")
            hands = [h for h in hands if h.table_id == table_id]
        page = hands[offset : offset + size]
        return pb.ListActiveHandsResponse(
            hands=[mapping.active_hand(h) for h in page],
            next_page_token=paging.next_page_token(offset + size, len(hands), t=request.table),
        )

    async def VoidHand(
        self, request: pb.VoidHandRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.VoidHandResponse:
        self._enter("VoidHand", context)
        parsed = ids.parse_hand_name(request.name)
        if parsed is None:
            raise BadName(name=request.name, expected="tables/{table}/hands/{hand}")
        table_id, hand_id = parsed
        bind(table_id=table_id, hand_id=hand_id)
        try:
            info, released = await self._app.void_hand(table_id, hand_id, request.reason)
        except UnknownHand:
            raise HandNotFound(name=request.name) from None
        except HandFinished:
            raise HandAlreadyFinished(name=request.name) from None
        return pb.VoidHandResponse(hand=mapping.active_hand(info), released=released)

    async def _pause(self, table: str, paused: bool) -> str:
        table_id = ids.parse_table_name(table)
        if table_id is None:
            raise BadName(name=table, expected="tables/{table}")
        bind(table_id=table_id)
        if await self._app.set_paused(table_id, paused) is None:
            raise TableNotFound(table=table)
        return table

    async def PauseTable(
        self, request: pb.PauseTableRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.PauseTableResponse:
        self._enter("PauseTable", context)
        return pb.PauseTableResponse(table=await self._pause(request.table, True), paused=True)

    async def ResumeTable(
        self, request: pb.ResumeTableRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.ResumeTableResponse:
        self._enter("ResumeTable", context)
        return pb.ResumeTableResponse(table=await self._pause(request.table, False), paused=False)
