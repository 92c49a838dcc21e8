"""A dealer app wired to the in-memory fakes, plus helpers the dealer tests share."""

from __future__ import annotations

import asyncio

from openpoker.engine import hand
from openpoker.engine.hand_events import ActionKind
from openpoker.engine.rules import Game, RakeRules, Rules, Stakes, Structure, TimeRules
from openpoker.eventstore.envelope import Envelope
from openpoker.services.dealer.app import DealerApp, DealerSettings
from openpoker.services.dealer.audit import InMemoryAudit
from tests.services.dealer.fakes import FakeRng, FakeTable, FakeWallet, seat_to_act

FAST = TimeRules(decision_ms=20, countdown_ms=20, reconnect_extra_ms=20)
SLOW = TimeRules(decision_ms=60_000, countdown_ms=60_000)


def rules(
    *,
    time: TimeRules = FAST,
    rake: RakeRules | None = None,
    game: Game = Game.HOLDEM,
    seats: int = 6,
    stakes: Stakes | None = None,
) -> Rules:
    return Rules(
        game=game,
        structure=Structure.NO_LIMIT,
        stakes=stakes or Stakes.blinds(1, 2),
        seats=seats,
        time=time,
        rake=rake or RakeRules(),
    )


class Rig:
    def __init__(self, settings: DealerSettings | None = None) -> None:
        self.settings = settings or DealerSettings(retry_delay=0.01, max_retry_delay=0.05)
        self.table = FakeTable(self._apply)
        self.rng = FakeRng(self.table)
        self.wallet = FakeWallet()
        self.audit = InMemoryAudit()
        self.app = self.new_app()

    def new_app(self) -> DealerApp:
        return DealerApp(
            rng=self.rng,
            table=self.table,
            wallet=self.wallet,
            audit=self.audit,
            settings=self.settings,
        )

    def _apply(self, table_id: str, env: Envelope, sequence: int) -> None:
        self.app.apply(table_id, env, sequence)

    def seat(self, table_id: str, players: dict[int, str], buy_in: int = 100) -> None:
        for seat, player in players.items():
            self.wallet.buy_in(table_id, player, buy_in)
            self.table.sit(table_id, seat, player, buy_in)

    async def restart(self) -> None:
        """Stop the dealer and start a fresh one that folds the whole log first (as the feed
        does), then goes live."""
        await self.app.stop()
        self.app = self.new_app()
        for sequence, (table_id, env) in enumerate(self.table.envelopes, start=1):
            self.app.apply(table_id, env, sequence)
        self.app.go_live()


async def calling_station(rig: Rig, table_id: str, stop: asyncio.Event) -> None:
    """A player at every seat who checks or calls as soon as it is their turn."""
    while not stop.is_set():
        seat = seat_to_act(rig.table, table_id)
        state = rig.table.state(table_id)
        if seat is not None and state.hand is not None:
            legal = hand.legal_actions(state.hand, seat)
            if legal is not None:
                action = ActionKind.CHECK if legal.can_check else ActionKind.CALL
                rig.table.act(table_id, seat, action)
        await asyncio.sleep(0.001)
