"""gRPC handlers: identity check, protobuf -> command -> app -> protobuf. Nothing else here.

Identity (``shell.callers``): over TLS the caller is its certificate (a service) or its token (a
person); a player-role caller is always themself, and a ``player_id`` / ``viewer_player_id``
naming anyone else is PERMISSION_DENIED (NOT_YOUR_SEAT); a player may act only for their own seat
(SEAT_NOT_OWNED). The dealer-facing RPCs (StartHand, TimeOutSeat, ReportConnection, VoidHand)
need the dealer's certificate (PERMISSION_DENIED, CALLER_NOT_DEALER otherwise); the dealer or an
auditor token may read full hand histories (of finished hands only). CreateTable and
ResetAllInAllowance need an operator token or ``pokerctl``'s staff certificate (UNAUTHENTICATED
CALLER_REQUIRED when anonymous, PERMISSION_DENIED CALLER_NOT_ALLOWED otherwise). On a plaintext
test rig the ``x-caller`` and ``x-player-id`` headers stand in for the certificate and the token.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from grpc import aio

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.engine import hand as hand_engine
from openpoker.engine import phh
from openpoker.engine.hand_events import CardsShown, HandStarted
from openpoker.engine.phh_replay import UnsupportedPhh, history_from_events
from openpoker.engine.table_events import UncontestedHandShown
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.envelope import Envelope
from openpoker.presence import PresenceTracker
from openpoker.services.table import allowance, mapping, show
from openpoker.services.table.app import TableApp
from openpoker.services.table.decks import deck_of
from openpoker.services.table.errors import (
    BatchTooLarge,
    CallerNotDealer,
    InvalidChoice,
    InvalidFormat,
    InvalidSeat,
    PlayerRequired,
)
from openpoker.services.table.queries import hand_events_of
from openpoker.services.table.writer import Committed
from openpoker.shell import identity, paging, quotas
from openpoker.shell.callers import authorize, caller_of, player_of
from openpoker.shell.interceptor import refused
from openpoker.shell.logs import bind
from openpoker.shell.quotas import OpenLimit, RateLimit
from openpoker.shell.server import domain_for
from openpoker.shuffle.deck_seal import DeckKeys
from openpoker.tablelog.model import ActionEntry, LogEvent, TableModel, actions

Context = aio.ServicerContext[Any, Any]
DEALER = "dealer"
AUDITORS = frozenset({"dealer", "auditor"})
OPERATORS = frozenset({"operator", "pokerctl"})
ALLOWED_CALLERS = {"CreateTable": OPERATORS, "ResetAllInAllowance": OPERATORS}
# Actions per ActBatchStream message: bounds the work (and the answer) of one message.
MAX_BATCH = 256
DOMAIN = domain_for("table")


def _player(context: Context, field: str, *, required: bool = True) -> str:
    if field:  # a malformed id is INVALID_ARGUMENT whoever sends it, before who may name it
        mapping.player_id_of(field)
    player = player_of(context, field, required=required)
    if required and not player:
        raise PlayerRequired
    if player:
        mapping.player_id_of(player)
        bind(player=player)
    return player


def _dealer(context: Context, method: str) -> None:
    caller = caller_of(context)
    if caller != DEALER:
        raise CallerNotDealer(caller=caller, method=method)


def _command(message: pb.ActStreamRequest) -> pb.ActRequest | pb.StartHandRequest:
    """A stream message's command: its start_hand if set, else its act request (an empty
    message is an empty act request, refused as Act refuses one)."""
    return message.start_hand if message.HasField("start_hand") else message.request


def _expected(request: Any) -> int | None:
    return int(request.expected_version) if request.HasField("expected_version") else None


def history_text(log: list[LogEvent], viewer: str | None, *, reveal_all: bool) -> str:
    """The hand as PHH; others' hole cards hidden (``??``) unless shown or ``reveal_all``."""
    events = hand_events_of(log)
    if not events:
        return ""
    try:
        hh = history_from_events(events)
    except UnsupportedPhh:
        return ""  # dead blinds, or a game PHH cannot express: the Hand message has it all
    first = events[0]
    assert isinstance(first, HandStarted)
    # PHH player j is the hand engine's player j (clockwise from the button's left).
    seats = hand_engine.fold([first]).seats
    after = [e for e in log if isinstance(e, UncontestedHandShown)]  # sm after the folds (pokerkit)
    if after:
        shows = tuple(phh.ShowMuck(player=seats.index(e.seat), cards=e.cards) for e in after)
        hh = dataclasses.replace(hh, actions=(*hh.actions, *shows))
    if not reveal_all:
        shown = {e.seat for e in (*events, *after) if isinstance(e, CardsShown | UncontestedHandShown)}
        visible = {p for p, name in enumerate(hh.players or ()) if name == viewer}
        visible |= {j for j, seat in enumerate(seats) if seat in shown}
        redacted = tuple(
            dataclasses.replace(a, cards=tuple(None for _ in a.cards))
            if isinstance(a, phh.DealHole) and a.player not in visible
            else a
            for a in hh.actions
        )
        hh = dataclasses.replace(hh, actions=redacted)
    return phh.dump_phh(hh)


def _log_of(done: Committed, hand_id: str) -> tuple[LogEvent, ...]:
    model = done.model
    if model.hand_order and model.hand_order[-1] == hand_id:
        return tuple(model.hand_log)
    return model.recent.get(hand_id, ())


def _hand(model: TableModel, *, into: pb.Hand | None = None) -> pb.Hand:
    """The live (else the last) hand as a spectator sees it, written into ``into`` (a
    reply's empty field) when given."""
    out = pb.Hand() if into is None else into
    live = model.current_hand
    record = live or (model.hands[model.hand_order[-1]] if model.hand_order else None)
    if record is None or model.state is None:
        out.SetInParent()
        return out
    return mapping.hand_of(
        model.table_id,
        record,
        model.hand_log,
        None,
        rules_holes=model.state.rules.hole_cards,
        live=model.state.hand if live is not None else None,  # the cached state: no re-fold
        into=out,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TableQuotas:
    """Per-identity and per-table limits (``shell.quotas``; settings in ``config``)."""

    creates: RateLimit
    watches_per_identity: OpenLimit
    watches_per_table: OpenLimit

    @classmethod
    def of(cls, *, creates_per_minute: int, watches_per_identity: int, watches_per_table: int) -> TableQuotas:
        return cls(
            creates=RateLimit(
                name="table_creations_per_minute",
                rate=creates_per_minute / 60,
                burst=creates_per_minute,
                clock=time.monotonic,
            ),
            watches_per_identity=OpenLimit(name="watch_streams_per_identity", limit=watches_per_identity),
            watches_per_table=OpenLimit(name="watch_streams_per_table", limit=watches_per_table),
        )


def _quota_key(context: Context) -> str | None:
    return quotas.key_of(identity.bound(), context.peer)


class TableServicer(pb_grpc.TableServiceServicer):
    def __init__(
        self,
        app: TableApp,
        *,
        presence: PresenceTracker | None = None,
        deck_keys: DeckKeys | None = None,
        quotas: TableQuotas | None = None,
    ) -> None:
        self._app = app
        self._quotas = quotas
        self._deck_keys = deck_keys
        self._presence = presence or PresenceTracker(publish=None, instance="", clock_ms=lambda: 0)

    # -- players ----------------------------------------------------------------------------

    async def CreateTable(self, request: pb.CreateTableRequest, context: Context) -> pb.CreateTableResponse:
        authorize(ALLOWED_CALLERS, "CreateTable", caller_of(context))
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table_id) if request.table_id else ""
        rules = mapping.rules_of(request.config)
        key = _quota_key(context)
        if self._quotas is not None and key is not None:
            self._quotas.creates.take(key)
        done = await self._app.create_table(request_id=rid, table_id=table_id, rules=rules)
        return pb.CreateTableResponse(table=mapping.table_view(done.model, None))

    async def JoinTable(self, request: pb.JoinTableRequest, context: Context) -> pb.JoinTableResponse:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        if request.seat < 0:
            raise InvalidSeat(f"seat {request.seat} is not a seat", seat=request.seat)
        mapping.positive("buy_in", request.buy_in)
        done = await self._app.join(
            request_id=rid,
            table_id=table_id,
            player=player,
            seat=request.seat - 1 if request.seat else None,
            buy_in=request.buy_in,
            wait=request.post_choice != pb.POST_CHOICE_POST_NOW,
        )
        return pb.JoinTableResponse(
            table=mapping.table_view(done.model, player), seat=done.outcome.seated + 1
        )

    async def PostOrWait(self, request: pb.PostOrWaitRequest, context: Context) -> pb.PostOrWaitResponse:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        if request.choice == pb.POST_CHOICE_UNSPECIFIED:
            raise InvalidChoice("choice must be POST_NOW or WAIT_FOR_BIG_BLIND")
        wait = request.choice == pb.POST_CHOICE_WAIT_FOR_BIG_BLIND
        done = await self._app.sit_in(request_id=rid, table_id=table_id, player=player, wait=wait)
        return pb.PostOrWaitResponse(table=mapping.table_view(done.model, player))

    async def SitOut(self, request: pb.SitOutRequest, context: Context) -> pb.SitOutResponse:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        done = await self._app.sit_out(request_id=rid, table_id=table_id, player=player)
        return pb.SitOutResponse(table=mapping.table_view(done.model, player))

    async def SitIn(self, request: pb.SitInRequest, context: Context) -> pb.SitInResponse:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        done = await self._app.sit_in(request_id=rid, table_id=table_id, player=player, wait=False)
        return pb.SitInResponse(table=mapping.table_view(done.model, player))

    async def TopUp(self, request: pb.TopUpRequest, context: Context) -> pb.TopUpResponse:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        mapping.positive("amount", request.amount)
        done = await self._app.top_up(request_id=rid, table_id=table_id, player=player, amount=request.amount)
        view = mapping.table_view(done.model, player)
        stack = next((s.stack for s in view.seats if s.player_id == player), 0)
        return pb.TopUpResponse(table=view, stack=stack)

    async def LeaveTable(self, request: pb.LeaveTableRequest, context: Context) -> pb.LeaveTableResponse:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        done, chips, pending = await self._app.leave(request_id=rid, table_id=table_id, player=player)
        return pb.LeaveTableResponse(
            table=mapping.table_view(done.model, player), cashed_out=chips, pending=pending
        )

    async def SetShowPreferences(
        self, request: pb.SetShowPreferencesRequest, context: Context
    ) -> pb.SetShowPreferencesResponse:
        return await show.set_preferences(self._app, request, _player(context, request.player_id))

    async def ShowHand(self, request: pb.ShowHandRequest, context: Context) -> pb.ShowHandResponse:
        return await show.show_hand(self._app, request, _player(context, request.player_id))

    async def Act(self, request: pb.ActRequest, context: Context) -> pb.ActResponse:
        out = pb.ActResponse()
        await self._act(request, context, out)
        return out

    async def _act(
        self, request: pb.ActRequest, context: Context, out: pb.ActResponse, *, view: bool = True
    ) -> None:
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        kind = mapping.action_kind(request.action)
        if kind == "bet_or_raise":
            mapping.positive("amount", request.amount)
        done = await self._app.act(
            request_id=rid,
            table_id=table_id,
            player=player,
            hand_id=request.hand_id,
            kind=kind,
            amount=request.amount,
            expected_version=_expected(request),
        )
        out.version = done.outcome.version
        if view:
            mapping.table_view(done.model, player, into=out.table)  # in place: no copy per reply

    async def ActStream(
        self, request_iterator: AsyncIterator[pb.ActStreamRequest], context: Context
    ) -> AsyncIterator[pb.ActStreamResponse]:
        # One message at a time, in order: a player's actions must apply in the order sent, and
        # the next request is read only after this one's answer is queued.
        # The interceptor bound the stream's context (rpc, metadata); per message only the ids
        # that change are bound, every one of them so that none is left from the previous
        # message (a whole ``bind_request`` per message cost ~40 µs, about 4% of an action).
        async for message in request_iterator:
            answer = pb.ActStreamResponse()
            await self._answer(message, context, answer)
            yield answer

    async def ActBatchStream(
        self, request_iterator: AsyncIterator[pb.ActBatchStreamRequest], context: Context
    ) -> AsyncIterator[pb.ActBatchStreamResponse]:
        # A batch's actions are grouped by table: each table's run in the order given, the
        # tables concurrently (their appends then share NATS writes and their answers one gRPC
        # message). The next batch is read only after this one is answered, as on ActStream.
        async for batch in request_iterator:
            messages = batch.actions
            if len(messages) > MAX_BATCH:
                raise BatchTooLarge(size=len(messages), limit=MAX_BATCH)
            out = pb.ActBatchStreamResponse()
            answers = out.answers
            runs: dict[str, list[tuple[pb.ActStreamRequest, pb.ActStreamResponse]]] = {}
            for message in messages:
                runs.setdefault(_command(message).table, []).append((message, answers.add()))
            if len(runs) == 1:
                await self._answer_run(next(iter(runs.values())), context)
            else:
                await asyncio.gather(*(self._answer_run(run, context) for run in runs.values()))
            yield out

    async def _answer_run(
        self, run: list[tuple[pb.ActStreamRequest, pb.ActStreamResponse]], context: Context
    ) -> None:
        for message, answer in run:
            await self._answer(message, context, answer)

    async def _answer(
        self, message: pb.ActStreamRequest, context: Context, answer: pb.ActStreamResponse
    ) -> None:
        """One streamed command answered in ``answer``: the response, or the refusal in-band."""
        request = _command(message)
        table = request.table
        bind(
            request_id=request.request_id,
            table_id=table[7:] if table.startswith("tables/") else "",
            hand_id=request.hand_id,
            player=request.player_id if isinstance(request, pb.ActRequest) else "",
        )
        started = time.perf_counter()
        answer.request_id = request.request_id
        try:
            if isinstance(request, pb.ActRequest):
                await self._act(request, context, answer.response, view=not message.omit_table)
            else:
                await self._start_hand(request, context, answer.start_hand)
        except Exception as exc:  # answered in-band: the stream stays open
            status = refused(exc, domain=DOMAIN, started=started).status
            answer.error.code = status.code
            answer.error.message = status.message
            answer.error.details.extend(status.details)

    # -- queries ----------------------------------------------------------------------------

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        table_id = mapping.table_id_of(request.name)
        viewer = _player(context, request.viewer_player_id, required=False)
        model = await self._app.model(table_id)
        out = pb.GetTableResponse()
        mapping.table_view(model, viewer or None, into=out.table)
        return out

    async def ListTables(self, request: pb.ListTablesRequest, context: Context) -> pb.ListTablesResponse:
        size = paging.page_size(request.page_size)
        offset = paging.page_offset(request.page_token, g=int(request.game))
        out = pb.ListTablesResponse()
        ids = await self._app.tables()
        index = offset
        while index < len(ids) and len(out.tables) < size:
            model = await self._app.model(ids[index])
            index += 1
            view = mapping.table_view(model, None)
            if request.game and view.config.game != request.game:
                continue
            out.tables.append(view)
        out.next_page_token = paging.next_page_token(index, len(ids), g=int(request.game))
        return out

    async def GetHand(self, request: pb.GetHandRequest, context: Context) -> pb.GetHandResponse:
        table_id, hand_id = mapping.hand_name_of(request.name)
        viewer = _player(context, request.viewer_player_id, required=False)
        model, at = await self._app.hand(table_id, hand_id)
        assert model.state is not None
        hand = mapping.hand_of(
            table_id, at.record, at.log, viewer or None, rules_holes=model.state.rules.hole_cards
        )
        return pb.GetHandResponse(hand=hand)

    async def GetHandHistory(
        self, request: pb.GetHandHistoryRequest, context: Context
    ) -> pb.GetHandHistoryResponse:
        table_id, hand_id = mapping.hand_name_of(request.name)
        if request.format not in (pb.HISTORY_FORMAT_UNSPECIFIED, pb.HISTORY_FORMAT_PHH):
            raise InvalidFormat("format must be PHH")
        auditor = caller_of(context) in AUDITORS
        viewer = _player(context, "", required=False) or None
        model, at, envelopes = await self._app.history(table_id, hand_id)
        assert model.state is not None
        hand = mapping.hand_of(
            table_id,
            at.record,
            at.log,
            viewer,
            rules_holes=model.state.rules.hole_cards,
            reveal_all=auditor,
        )
        out = pb.GetHandHistoryResponse(
            hand=hand, text=history_text(list(at.log), viewer, reveal_all=auditor)
        )
        if auditor:  # the raw envelopes and the seed reveal every card: auditors only
            out.envelopes.extend(envelope_codec.to_proto(e) for e in envelopes if isinstance(e, Envelope))
            out.hand.revealed_seed = await self._app.store.events.revealed_seed(table_id, hand_id)
        return out

    async def WatchTable(
        self, request: pb.WatchTableRequest, context: Context
    ) -> AsyncIterator[pb.WatchTableResponse]:
        table_id = mapping.table_id_of(request.name)
        viewer = _player(context, request.viewer_player_id, required=False) or None
        key = _quota_key(context)
        async with contextlib.AsyncExitStack() as held:  # the stream's quota slots, for its life
            if self._quotas is not None and key is not None:
                held.enter_context(self._quotas.watches_per_identity.hold(key))
                held.enter_context(self._quotas.watches_per_table.hold(table_id))
            views = self._watch(table_id, request.from_version, viewer)
            async with contextlib.aclosing(views):
                async for out in views:
                    yield out

    async def _watch(
        self, table_id: str, from_version: int, viewer: str | None
    ) -> AsyncGenerator[pb.WatchTableResponse]:
        # A player's open watch stream is their connection (openpoker.presence).
        if viewer is not None:
            self._presence.opened(table_id, viewer)
        try:

            def render(model: TableModel, entries: list[ActionEntry]) -> pb.WatchTableResponse:
                out = pb.WatchTableResponse(
                    version=model.version, new_actions=[mapping.action_record(e) for e in entries]
                )
                mapping.table_view(model, viewer, into=out.table)
                return out

            views = self._app.watch(table_id, from_version, render, key=viewer)
            async with contextlib.aclosing(views):
                async for out in views:
                    yield out
        finally:
            if viewer is not None:
                self._presence.closed(table_id, viewer)

    # -- the dealer -------------------------------------------------------------------------

    async def StartHand(self, request: pb.StartHandRequest, context: Context) -> pb.StartHandResponse:
        out = pb.StartHandResponse()
        await self._start_hand(request, context, out)
        return out

    async def _start_hand(
        self, request: pb.StartHandRequest, context: Context, out: pb.StartHandResponse
    ) -> None:
        _dealer(context, "StartHand")
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        hand_id = mapping.hand_id_of(request.hand_id)
        model = await self._app.model(table_id)
        assert model.state is not None
        deck = deck_of(self._deck_keys, request, table_id, hand_id, model.state.rules)
        done = await self._app.start_hand(
            request_id=rid,
            table_id=table_id,
            hand_id=hand_id,
            deck=deck,
            commitment=request.deck_commitment,
            expected_version=_expected(request),
        )
        _hand(done.model, into=out.hand)  # in place: no copy
        out.version = done.outcome.version
        record = done.model.hands.get(hand_id)
        if record is not None:
            started = next((e for e in _log_of(done, hand_id) if isinstance(e, HandStarted)), None)
            if started is not None:
                out.dealt_in.extend(
                    pb.Seat(seat=s.seat + 1, player_id=s.player, stack=s.stack, status=pb.SEAT_STATUS_ACTIVE)
                    for s in started.seats
                )

    async def TimeOutSeat(self, request: pb.TimeOutSeatRequest, context: Context) -> pb.TimeOutSeatResponse:
        _dealer(context, "TimeOutSeat")
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        if request.seat < 1:
            raise InvalidSeat(f"seat {request.seat} is not a seat", seat=request.seat)
        done = await self._app.time_out(
            request_id=rid,
            table_id=table_id,
            hand_id=request.hand_id,
            seat=request.seat - 1,
            expected_version=request.expected_version,
            at_ms=mapping.at_ms(request.observed_at, self._app.now()),
        )
        out = pb.TimeOutSeatResponse(hand=_hand(done.model), version=done.outcome.version)
        applied = [e for e in actions(list(done.events)) if e.seat == request.seat - 1]
        if applied:
            out.applied.CopyFrom(mapping.action_record(applied[0]))
        return out

    async def ReportConnection(
        self, request: pb.ReportConnectionRequest, context: Context
    ) -> pb.ReportConnectionResponse:
        _dealer(context, "ReportConnection")
        rid = mapping.request_id_of(request.request_id)
        table_id = mapping.table_id_of(request.table)
        player = _player(context, request.player_id)
        done = await self._app.report_connection(
            request_id=rid,
            table_id=table_id,
            player=player,
            connected=request.connected,
            at_ms=mapping.at_ms(request.observed_at, self._app.now()),
            expected_version=_expected(request),
        )
        return pb.ReportConnectionResponse(table=mapping.table_view(done.model, None))

    async def VoidHand(self, request: pb.VoidHandRequest, context: Context) -> pb.VoidHandResponse:
        _dealer(context, "VoidHand")
        rid = mapping.request_id_of(request.request_id)
        table_id, hand_id = mapping.hand_name_of(request.name)
        done = await self._app.void_hand(
            request_id=rid,
            table_id=table_id,
            hand_id=hand_id,
            reason=request.reason or "voided by the dealer",
        )
        model = done.model
        record = model.hands[hand_id]
        assert model.state is not None
        log = model.recent.get(hand_id, tuple(model.hand_log))
        hand = mapping.hand_of(table_id, record, log, None, rules_holes=model.state.rules.hole_cards)
        return pb.VoidHandResponse(hand=hand, version=done.outcome.version)

    # -- operators --------------------------------------------------------------------------

    async def ResetAllInAllowance(
        self, request: pb.ResetAllInAllowanceRequest, context: Context
    ) -> pb.ResetAllInAllowanceResponse:
        authorize(ALLOWED_CALLERS, "ResetAllInAllowance", caller_of(context))
        return await allowance.reset(self._app, request)
