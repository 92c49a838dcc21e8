"""gRPC handlers: caller check, protobuf -> app -> protobuf. Nothing else happens here.

Caller identity is the ``x-caller`` metadata (interim; see the proto's service comment):
deny by default, one allow-list per method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grpc import aio

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as pb_grpc
from openpoker.services.rng import mapping
from openpoker.services.rng.app import RngApp
from openpoker.shell.callers import ANYONE, authorize, caller_of
from openpoker.shell.logs import bind
from openpoker.shuffle.deck_seal import DeckKeys

ALLOWED_CALLERS: Mapping[str, frozenset[str]] = {
    "Shuffle": frozenset({"dealer"}),
    "RevealSeed": frozenset({"dealer", "auditor"}),
    "Verify": frozenset({ANYONE}),
}


class RngServicer(pb_grpc.RngServiceServicer):
    def __init__(self, app: RngApp, *, deck_keys: DeckKeys | None = None) -> None:
        self._app = app
        self._deck_keys = deck_keys

    def _enter(self, method: str, context: aio.ServicerContext[Any, Any]) -> None:
        caller = caller_of(context)
        bind(caller=caller or "-")
        authorize(ALLOWED_CALLERS, method, caller)

    async def Shuffle(
        self, request: pb.ShuffleRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.ShuffleResponse:
        self._enter("Shuffle", context)
        shuffled = await self._app.shuffle(
            table_id=request.table_id, hand_id=request.hand_id, deck_size=request.deck_size
        )
        return mapping.shuffle_response(shuffled, self._deck_keys)

    async def RevealSeed(
        self, request: pb.RevealSeedRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.RevealSeedResponse:
        self._enter("RevealSeed", context)
        return mapping.reveal_response(await self._app.reveal(hand_id=request.hand_id))

    async def Verify(
        self, request: pb.VerifyRequest, context: aio.ServicerContext[Any, Any]
    ) -> pb.VerifyResponse:
        self._enter("Verify", context)
        parsed = mapping.verify_request(request)
        if isinstance(parsed, pb.VerifyResponse):
            return parsed
        return mapping.verify_response(self._app.verify(parsed))
