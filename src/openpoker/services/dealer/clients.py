"""The dealer's ports over gRPC: rng, table and wallet clients.

Every call carries ``x-caller: dealer`` and a deadline (``call_timeout``); a fault
(``shell.retry.TRANSIENT_CODES``: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) is tried
again, ``attempts`` times in all, with the SAME request, so the same idempotency key, after the
shared capped back-off with jitter (``shell.retry``). Whatever still fails becomes
``CallFailed`` with the status code and the ErrorInfo reason; the driver then tries the step
again later (its own back-off), so a service that restarts only delays the table.

Seats: the engine numbers seats from 0, the table API from 1 (``Seat.seat`` is 1..seat_count);
the conversion happens here and nowhere else in the dealer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from grpc import aio

from openpoker.api.rng.v1 import rng_service_pb2 as rng_pb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as rng_grpc
from openpoker.api.table.v1 import table_service_pb2 as table_pb
from openpoker.api.table.v1 import table_service_pb2_grpc as table_grpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wallet_pb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wallet_grpc
from openpoker.engine.rules import RakeRules
from openpoker.services.dealer.ports import CallFailed, Shuffled
from openpoker.shell.client import rich_error
from openpoker.shell.retry import BACKOFF, Backoff, retry_unary, transient
from openpoker.tablelog import ids

CALLER = (("x-caller", "dealer"),)
T = TypeVar("T")


class Caller:
    def __init__(self, *, service: str, timeout: float, attempts: int, backoff: Backoff = BACKOFF) -> None:
        self.service = service
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = backoff

    async def __call__(self, method: str, call: Callable[..., Awaitable[T]], request: Any) -> T:
        try:
            reply: T = await retry_unary(
                call,
                request,
                timeout=self.timeout,
                metadata=CALLER,
                what=f"{self.service}.{method}",
                attempts=self.attempts,
                backoff=self.backoff,
            )
        except grpc.RpcError as err:
            info = rich_error(err)
            raise CallFailed(
                service=self.service,
                method=method,
                code=info.code.name,
                reason=info.reason,
                retryable=transient(err),
                message=info.message,
            ) from None
        return reply


def _stamp(when: dt.datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(when)
    return ts


class GrpcRng:
    def __init__(self, channel: aio.Channel, *, timeout: float, attempts: int) -> None:
        self._stub: Any = rng_grpc.RngServiceStub(channel)
        self._call = Caller(service="rng", timeout=timeout, attempts=attempts)

    async def shuffle(self, *, request_id: str, table_id: str, hand_id: str, deck_size: int) -> Shuffled:
        reply: rng_pb.ShuffleResponse = await self._call(
            "Shuffle",
            self._stub.Shuffle,
            rng_pb.ShuffleRequest(
                request_id=request_id, table_id=table_id, hand_id=hand_id, deck_size=deck_size
            ),
        )
        return Shuffled(
            commitment=reply.commitment,
            version=reply.algorithm_version,
            sealed_deck=reply.sealed_deck,
        )

    async def reveal_seed(self, *, hand_id: str) -> tuple[str, str, int, str, bytes]:
        reply: rng_pb.RevealSeedResponse = await self._call(
            "RevealSeed", self._stub.RevealSeed, rng_pb.RevealSeedRequest(hand_id=hand_id)
        )
        r = reply.record
        return r.algorithm_version, r.commitment, r.deck_size, reply.table_id, r.seed


class GrpcTable:
    def __init__(self, channel: aio.Channel, *, timeout: float, attempts: int) -> None:
        self._stub: Any = table_grpc.TableServiceStub(channel)
        self._call = Caller(service="table", timeout=timeout, attempts=attempts)

    async def start_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_id: str,
        commitment: str,
        sealed_deck: bytes,
        expected_version: int,
    ) -> int:
        reply: table_pb.StartHandResponse = await self._call(
            "StartHand",
            self._stub.StartHand,
            table_pb.StartHandRequest(
                request_id=request_id,
                table=ids.table_name(table_id),
                hand_id=hand_id,
                deck_commitment=commitment,
                sealed_deck=sealed_deck,
                expected_version=expected_version,
            ),
        )
        return int(reply.version)

    async def time_out_seat(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_id: str,
        seat: int,
        expected_version: int,
        observed_at: dt.datetime,
    ) -> int:
        reply: table_pb.TimeOutSeatResponse = await self._call(
            "TimeOutSeat",
            self._stub.TimeOutSeat,
            table_pb.TimeOutSeatRequest(
                request_id=request_id,
                table=ids.table_name(table_id),
                hand_id=hand_id,
                seat=seat + 1,
                expected_version=expected_version,
                observed_at=_stamp(observed_at),
            ),
        )
        return int(reply.version)

    async def report_connection(
        self,
        *,
        request_id: str,
        table_id: str,
        player_id: str,
        connected: bool,
        observed_at: dt.datetime,
        expected_version: int,
    ) -> int:
        reply: table_pb.ReportConnectionResponse = await self._call(
            "ReportConnection",
            self._stub.ReportConnection,
            table_pb.ReportConnectionRequest(
                request_id=request_id,
                table=ids.table_name(table_id),
                player_id=player_id,
                connected=connected,
                observed_at=_stamp(observed_at),
                expected_version=expected_version,
            ),
        )
        return int(reply.table.version)

    async def void_hand(self, *, request_id: str, table_id: str, hand_id: str, reason: str) -> int:
        reply: table_pb.VoidHandResponse = await self._call(
            "VoidHand",
            self._stub.VoidHand,
            table_pb.VoidHandRequest(
                request_id=request_id, name=ids.hand_name(table_id, hand_id), reason=reason
            ),
        )
        return int(reply.version)

    async def hand_exists(self, *, table_id: str, hand_id: str) -> bool:
        try:
            await self._call(
                "GetHand", self._stub.GetHand, table_pb.GetHandRequest(name=ids.hand_name(table_id, hand_id))
            )
        except CallFailed as err:
            if err.code == "NOT_FOUND":
                return False
            raise
        return True


def rake_to_proto(rake: RakeRules) -> wallet_pb.RakeRules:
    """The wallet's message for ``rake`` (built once per table's rules: every ``OpenHand`` of a
    table sends the same; the request copies it, so the kept message is never changed)."""
    msg = _rake_messages.get(rake)
    if msg is None:
        if len(_rake_messages) >= _RAKE_MESSAGES_KEPT:
            _rake_messages.clear()
        msg = _rake_messages[rake] = _rake_message(rake)
    return msg


_RAKE_MESSAGES_KEPT = 256
_rake_messages: dict[RakeRules, wallet_pb.RakeRules] = {}


def _rake_message(rake: RakeRules) -> wallet_pb.RakeRules:
    return wallet_pb.RakeRules(
        basis_points=rake.basis_points,
        caps=[wallet_pb.RakeCap(min_players_dealt_in=n, cap=cap) for n, cap in rake.caps],
        no_flop_no_drop=rake.no_flop_no_drop,
        unit=rake.unit,
    )


def _amounts(pairs: tuple[tuple[str, int], ...]) -> list[wallet_pb.PlayerAmount]:
    return [wallet_pb.PlayerAmount(player=p, amount=a) for p, a in pairs]


class GrpcWallet:
    def __init__(self, channel: aio.Channel, *, timeout: float, attempts: int) -> None:
        self._stub: Any = wallet_grpc.WalletServiceStub(channel)
        self._call = Caller(service="wallet", timeout=timeout, attempts=attempts)

    async def open_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_number: int,
        stacks: tuple[tuple[str, int], ...],
        rake: RakeRules,
    ) -> bool:
        reply: wallet_pb.OpenHandResponse = await self._call(
            "OpenHand",
            self._stub.OpenHand,
            wallet_pb.OpenHandRequest(
                request_id=request_id,
                table_id=table_id,
                hand_number=hand_number,
                stacks=_amounts(stacks),
                rake=rake_to_proto(rake),
            ),
        )
        return bool(reply.duplicate)

    async def settle_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_number: int,
        contributions: tuple[tuple[str, int], ...],
        payouts: tuple[tuple[str, int], ...],
        rake: int,
        saw_flop: bool,
    ) -> None:
        await self._call(
            "SettleHand",
            self._stub.SettleHand,
            wallet_pb.SettleHandRequest(
                request_id=request_id,
                table_id=table_id,
                hand_number=hand_number,
                contributions=_amounts(contributions),
                payouts=_amounts(payouts),
                rake=rake,
                saw_flop=saw_flop,
            ),
        )

    async def void_hand(self, *, request_id: str, table_id: str, hand_number: int) -> int:
        reply: wallet_pb.VoidHandResponse = await self._call(
            "VoidHand",
            self._stub.VoidHand,
            wallet_pb.VoidHandRequest(request_id=request_id, table_id=table_id, hand_number=hand_number),
        )
        return sum(int(t.released) or int(t.amount) for t in reply.transfers)
