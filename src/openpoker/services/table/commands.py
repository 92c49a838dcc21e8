"""The table's commands: each builds the engine command from the request and the folded table,
and runs it through the command path (``services.table.writer``), with the wallet first where
chips come in (``services.table.money``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from openpoker.engine import table
from openpoker.engine.cards import Card
from openpoker.engine.errors import HandNotLive
from openpoker.engine.hand_events import Act, ActionKind, Muck, Show
from openpoker.engine.rules import Rules
from openpoker.engine.table_events import (
    DecisionTimedOut,
    Disconnect,
    Leave,
    Reconnect,
    ResetAllInAllowance,
    SitDown,
    SitIn,
    SitOut,
    StartHand,
    TimeOut,
    TopUp,
    VoidHand,
)
from openpoker.services.table.errors import HandNotFound, NotOwner, SeatNotOwned, TableNotFound
from openpoker.services.table.hand_index import HandIndex
from openpoker.services.table.money import MoneyFlows
from openpoker.services.table.site_allowance import SiteAllowances
from openpoker.services.table.writer import Committed, Writer
from openpoker.tablelog.allowances import DAY_MS
from openpoker.tablelog.model import LogEvent, TableModel


def seat_of(model: TableModel, player: str) -> int | None:
    assert model.state is not None
    for seat, occ in model.state.seats.items():
        if occ.player == player:
            return seat
    return None


def _seat(model: TableModel, player: str) -> int:
    seat = seat_of(model, player)
    if seat is None:
        raise SeatNotOwned(player=player, table_id=model.table_id)
    return seat


def _check_live(model: TableModel, hand_id: str) -> None:
    live = model.current_hand
    if hand_id and (live is None or live.hand_id != hand_id):
        raise HandNotLive(hand_id=hand_id, live_hand_id=live.hand_id if live else "")


class Commands:
    def __init__(
        self, *, writer: Writer, money: MoneyFlows, hands: HandIndex, allowances: SiteAllowances
    ) -> None:
        self._writer = writer
        self._money = money
        self._hands = hands
        self._allowances = allowances

    async def create_table(self, *, request_id: str, table_id: str, rules: Rules) -> Committed:
        table_id = table_id or f"t-{uuid.uuid4().hex[:12]}"
        return await self._writer.create(table_id, request_id=request_id, rules=rules)

    # -- player commands --------------------------------------------------------------------

    async def join(
        self, *, request_id: str, table_id: str, player: str, seat: int | None, buy_in: int, wait: bool
    ) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            state = model.state
            assert state is not None
            chosen = seat
            if chosen is None:
                busy = set(state.seats) | (set(state.hand.index_of) if state.hand is not None else set())
                chosen = next((s for s in range(state.rules.seats) if s not in busy), 0)
            return table.decide(
                state, SitDown(seat=chosen, player=player, buy_in=buy_in, wait_for_big_blind=wait)
            )

        return await self._money.with_escrow(
            table_id, request_id=request_id, player=player, amount=buy_in, kind="buy-in", decide=decide
        )

    async def top_up(self, *, request_id: str, table_id: str, player: str, amount: int) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, TopUp(seat=_seat(model, player), amount=amount))

        return await self._money.with_escrow(
            table_id, request_id=request_id, player=player, amount=amount, kind="top-up", decide=decide
        )

    async def seat_command(
        self, *, request_id: str, table_id: str, player: str, make: Callable[[int], table.Command]
    ) -> Committed:
        """A player's command about their own seat (sit out, sit in, post or wait)."""

        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, make(_seat(model, player)))

        return await self._writer.execute(table_id, request_id=request_id, decide=decide)

    async def sit_out(self, *, request_id: str, table_id: str, player: str) -> Committed:
        return await self.seat_command(
            request_id=request_id, table_id=table_id, player=player, make=lambda s: SitOut(seat=s)
        )

    async def sit_in(self, *, request_id: str, table_id: str, player: str, wait: bool) -> Committed:
        return await self.seat_command(
            request_id=request_id,
            table_id=table_id,
            player=player,
            make=lambda s: SitIn(seat=s, wait_for_big_blind=wait),
        )

    async def leave(self, *, request_id: str, table_id: str, player: str) -> tuple[Committed, int, bool]:
        """Leave: (committed, chips cashed out, pending). Cash-outs follow the append."""

        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, Leave(seat=_seat(model, player)))

        done = await self._writer.execute(table_id, request_id=request_id, decide=decide)
        mine = [x for x in done.outcome.left if x.player == player]
        pending = done.outcome.pending_leave and not mine
        chips = 0
        for left in mine:
            if left.chips == 0:
                continue
            try:
                await self._money.cash_out(table_id, done.outcome.version, left)
                chips += left.chips
            except Exception:
                # Chips still reserved for an unsettled hand, or the wallet is away: retried in
                # the background with the same id (already scheduled after a fresh append, by
                # the writer's followups; scheduled here for a retried request).
                pending = True
                if done.duplicate:
                    self._money.cash_out_later(table_id, done.outcome.version, left)
        return done, chips, pending

    async def act(
        self,
        *,
        request_id: str,
        table_id: str,
        player: str,
        hand_id: str,
        kind: str,
        amount: int,
        expected_version: int | None,
    ) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            state = model.state
            assert state is not None
            seat = _seat(model, player)
            _check_live(model, hand_id)
            command: table.Command
            if kind == "show":
                command = Show(seat=seat)
            elif kind == "muck":
                command = Muck(seat=seat)
            else:
                command = Act(seat=seat, action=ActionKind(kind), amount=amount)
            return table.decide(state, command)

        return await self._writer.execute(
            table_id, request_id=request_id, decide=decide, expected_version=expected_version
        )

    # -- dealer commands --------------------------------------------------------------------

    async def start_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_id: str,
        deck: tuple[Card, ...],
        commitment: str,
        expected_version: int | None,
    ) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, StartHand(hand_id=hand_id, deck=deck, commitment=commitment))

        async def precheck(model: TableModel) -> None:
            await self._hands.refuse_used_hand_id(model, hand_id)

        return await self._writer.execute(
            table_id,
            request_id=request_id,
            decide=decide,
            expected_version=expected_version,
            precheck=precheck,
        )

    async def time_out(
        self, *, request_id: str, table_id: str, hand_id: str, seat: int, expected_version: int, at_ms: int
    ) -> Committed:
        # A disconnected player's protection is counted across tables (``site_allowance``):
        # the precheck reserves one in the site-wide record when one is left, and finds how many
        # the player used elsewhere, which the decision takes and records.
        player = ""
        elsewhere = 0

        async def precheck(model: TableModel) -> None:
            nonlocal player, elsewhere
            state = model.state
            assert state is not None
            _check_live(model, hand_id)
            at_stake = table.protection_at_stake(state, seat)
            elsewhere = 0
            if at_stake is None:
                return  # ``player`` stays set if an earlier attempt reserved: settled below
            player = at_stake
            elsewhere = await self._allowances.reserve(
                player=player,
                table=table_id,
                hand=hand_id or (state.hand.hand_id if state.hand is not None else ""),
                request=request_id,
                at_ms=at_ms,
                window_ms=state.rules.time.protection_window_ms,
                limit=state.rules.time.disconnect_protections_per_window,
                used_here=table.protections_used(state, player, at_ms),
            )

        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            _check_live(model, hand_id)
            return table.decide(model.state, TimeOut(seat=seat, at_ms=at_ms, used_elsewhere=elsewhere))

        try:
            done = await self._writer.execute(
                table_id,
                request_id=request_id,
                decide=decide,
                expected_version=expected_version,
                precheck=precheck,
            )
        except Exception:
            if player:  # refused or not appended: the reservation goes
                await self._settle(table_id, hand_id, request_id, player, at_ms, used=False)
            raise
        if player:
            fact = next((e for e in done.events if isinstance(e, DecisionTimedOut)), None)
            used = fact is not None and fact.uses_protection
            if done.duplicate:  # an earlier attempt's append landed: the table's state tells
                state = done.model.state
                used = state is not None and at_ms in state.protections.get(player, [])
            await self._settle(table_id, hand_id, request_id, player, at_ms, used=used)
        return done

    async def _settle(
        self, table_id: str, hand_id: str, request_id: str, player: str, at_ms: int, *, used: bool
    ) -> None:
        await self._allowances.settle(
            player=player, table=table_id, hand=hand_id, request=request_id, at_ms=at_ms, used=used
        )

    async def report_connection(
        self,
        *,
        request_id: str,
        table_id: str,
        player: str,
        connected: bool,
        at_ms: int,
        expected_version: int | None = None,
    ) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            seat = _seat(model, player)
            command = Reconnect(seat=seat, at_ms=at_ms) if connected else Disconnect(seat=seat, at_ms=at_ms)
            return table.decide(model.state, command)

        return await self._writer.execute(
            table_id, request_id=request_id, decide=decide, expected_version=expected_version
        )

    async def void_hand(self, *, request_id: str, table_id: str, hand_id: str, reason: str) -> Committed:
        async def precheck(model: TableModel) -> None:
            # A hand of the table that is not live is refused as such (HAND_NOT_LIVE, by the
            # decider), an id it never used as unknown.
            state = model.state
            assert state is not None
            if hand_id in model.hands or hand_id in state.hand_ids:
                return
            if await self._hands.find_older(model, hand_id) is None:
                raise HandNotFound(table_id, hand_id)

        def decide(model: TableModel) -> Sequence[LogEvent]:
            state = model.state
            assert state is not None
            _check_live(model, hand_id)
            return table.decide(state, VoidHand(hand_id=hand_id, reason=reason))

        return await self._writer.execute(table_id, request_id=request_id, decide=decide, precheck=precheck)

    # -- operator commands ------------------------------------------------------------------

    async def reset_allowance(self, *, request_id: str, table_id: str, player: str, at_ms: int) -> Committed:
        """Reset ``player``'s all-in allowance at the table (``outcome.cleared`` says how many
        protections it cleared; none to clear appends nothing), then forget the table's uses in
        the site-wide record, so they count at no table."""

        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, ResetAllInAllowance(player=player, at_ms=at_ms))

        done = await self._writer.execute(table_id, request_id=request_id, decide=decide)
        await self._allowances.clear(player=player, table=table_id, at_ms=at_ms)
        return done

    async def reset_allowance_everywhere(self, *, request_id: str, player: str, at_ms: int) -> int:
        """Reset ``player``'s all-in allowance at every table: at each table the site-wide
        record names that this instance can write (``NotOwner`` from the others is for
        ``pokerctl``, which resets every table in turn), then the record emptied, noting the
        reset. Returns how many protections counted in the record; a retry (the same request
        id) answers the same and changes nothing."""
        record = await self._allowances.read(player)
        if record.reset_request == request_id:
            return record.reset_cleared
        counted = len(record.counting(at_ms, DAY_MS))
        for table_id in sorted({u.table for u in record.uses}):
            try:
                await self.reset_allowance(
                    request_id=request_id, table_id=table_id, player=player, at_ms=at_ms
                )
            except (NotOwner, TableNotFound):
                continue  # another instance writes it (pokerctl resets it there), or it is gone
        await self._allowances.clear(
            player=player, table="", at_ms=at_ms, request=request_id, cleared=counted
        )
        return counted
