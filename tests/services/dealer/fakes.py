"""In-memory fakes of the dealer's ports, for unit tests only.

``FakeTable`` keeps a real table log: it decides every command with ``engine.table.decide`` and
hands each envelope to the dealer app as the JetStream feed would. ``FakeWallet`` keeps
escrows, reservations and the house like the ledger does (and refuses what the ledger refuses),
so tests can check that chips are conserved between the table and the wallet. ``FakeRng`` derives
real decks (``openpoker.shuffle``) from a seed per hand and reveals only after the table log ends the
hand.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from openpoker.engine import codec, hand
from openpoker.engine import table as engine_table
from openpoker.engine.cards import parse_card
from openpoker.engine.hand_events import Act, ActionKind, HandEnded
from openpoker.engine.rules import RakeRules, Rules
from openpoker.engine.table_events import (
    Disconnect,
    HandScheduled,
    OpenTable,
    Reconnect,
    SitDown,
    StartHand,
    TimeOut,
    VoidHand,
)
from openpoker.eventstore.envelope import Envelope, RecordedEvent
from openpoker.services.dealer.ports import CallFailed, Shuffled
from openpoker.shuffle import CURRENT_VERSION, commitment, derive_deck

Apply = Callable[[str, Envelope, int], None]


def failed(service: str, method: str, reason: str, *, code: str = "FAILED_PRECONDITION") -> CallFailed:
    return CallFailed(
        service=service, method=method, code=code, reason=reason, retryable=code in ("UNAVAILABLE",)
    )


def envelope(table_id: str, version: int, events: list[object]) -> Envelope:
    recorded = tuple(
        RecordedEvent(type=type(e).__name__, payload=json.dumps(codec.encode(e)).encode()) for e in events
    )
    return Envelope(
        stream_id=table_id,
        version=version,
        command_id=f"c{version}",
        prev_hash=b"",
        hash=b"",
        owner_epoch=1,
        rules_version="r1",
        engine_version="e1",
        events=recorded,
        recorded_at=dt.datetime.now(dt.UTC),
    )


@dataclass
class FakeTableLog:
    table_id: str
    events: list[object] = field(default_factory=list)
    version: int = 0
    state: engine_table.TableState | None = None


class FakeTable:
    """One or more tables' logs; every change reaches the app through ``apply``."""

    def __init__(self, apply: Apply) -> None:
        self.apply = apply
        self.tables: dict[str, FakeTableLog] = {}
        self.envelopes: list[tuple[str, Envelope]] = []
        self.calls: list[tuple[str, str]] = []
        self.seen_requests: dict[str, int] = {}
        self.fail_next: dict[str, CallFailed] = {}
        self.before_start: Callable[[], None] | None = None  # runs inside the next StartHand
        self.before_report: Callable[[], None] | None = None  # runs inside the next ReportConnection

    # -- the log -------------------------------------------------------------------------------

    def _append(self, table_id: str, events: list[object]) -> int:
        log = self.tables[table_id]
        log.version += 1
        env = envelope(table_id, log.version, events)
        for e in events:
            if log.state is None:
                log.state = engine_table.fold([e])  # type: ignore[list-item]
            else:
                engine_table.evolve(log.state, e)  # type: ignore[arg-type]
        self.envelopes.append((table_id, env))
        self.apply(table_id, env, len(self.envelopes))
        return log.version

    def decide(self, table_id: str, command: object) -> int:
        log = self.tables[table_id]
        events = engine_table.decide(log.state, command)  # type: ignore[arg-type]
        return self._append(table_id, list(events))

    def open(self, table_id: str, rules: Rules) -> None:
        self.tables[table_id] = FakeTableLog(table_id=table_id)
        self.decide(table_id, OpenTable(table_id=table_id, rules=rules))

    def sit(self, table_id: str, seat: int, player: str, buy_in: int) -> None:
        self.decide(table_id, SitDown(seat=seat, player=player, buy_in=buy_in))

    def state(self, table_id: str) -> engine_table.TableState:
        s = self.tables[table_id].state
        assert s is not None
        return s

    def act(self, table_id: str, seat: int, action: ActionKind, amount: int = 0) -> int:
        return self.decide(table_id, Act(seat=seat, action=action, amount=amount))

    def _maybe_fail(self, method: str) -> None:
        err = self.fail_next.pop(method, None)
        if err is not None:
            raise err

    # -- TablePort -----------------------------------------------------------------------------

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
        self.calls.append(("StartHand", request_id))
        self._maybe_fail("StartHand")
        if self.before_start is not None:
            hook, self.before_start = self.before_start, None
            hook()
        if request_id in self.seen_requests:
            return self.seen_requests[request_id]
        log = self.tables[table_id]
        if expected_version != log.version:
            raise failed("table", "StartHand", "STALE_VERSION", code="ABORTED")
        text = sealed_deck.decode()
        deck = tuple(parse_card(text[i : i + 2]) for i in range(0, len(text), 2))
        version = self.decide(table_id, StartHand(hand_id=hand_id, deck=deck, commitment=commitment))
        self.seen_requests[request_id] = version
        return version

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
        self.calls.append(("TimeOutSeat", request_id))
        self._maybe_fail("TimeOutSeat")
        log = self.tables[table_id]
        if expected_version != log.version:
            raise failed("table", "TimeOutSeat", "STALE_VERSION", code="ABORTED")
        at_ms = int(observed_at.timestamp() * 1000)
        return self.decide(table_id, TimeOut(seat=seat, at_ms=at_ms))

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
        self.calls.append(("ReportConnection", request_id))
        self._maybe_fail("ReportConnection")
        if self.before_report is not None:
            hook, self.before_report = self.before_report, None
            hook()
        if request_id in self.seen_requests:
            return self.seen_requests[request_id]
        if expected_version != self.tables[table_id].version:
            raise failed("table", "ReportConnection", "STALE_VERSION", code="ABORTED")
        state = self.state(table_id)
        seat = next((s for s, o in state.seats.items() if o.player == player_id), None)
        if seat is None:
            raise failed("table", "ReportConnection", "SEAT_NOT_OWNED")
        at_ms = int(observed_at.timestamp() * 1000)
        command = Reconnect(seat=seat, at_ms=at_ms) if connected else Disconnect(seat=seat, at_ms=at_ms)
        try:
            version = self.decide(table_id, command)
        except engine_table.SeatStateUnchanged as exc:
            raise failed("table", "ReportConnection", exc.reason) from exc
        self.seen_requests[request_id] = version
        return version

    async def hand_exists(self, *, table_id: str, hand_id: str) -> bool:
        self.calls.append(("GetHand", hand_id))
        return any(isinstance(e, HandScheduled) and e.hand_id == hand_id for e in log_events(self, table_id))

    async def void_hand(self, *, request_id: str, table_id: str, hand_id: str, reason: str) -> int:
        self.calls.append(("VoidHand", request_id))
        state = self.state(table_id)
        if state.hand is None or state.hand.hand_id != hand_id:
            raise failed("table", "VoidHand", "HAND_NOT_LIVE")  # as the table service refuses it
        return self.decide(table_id, VoidHand(hand_id=hand_id, reason=reason))

    def hand_ended(self, table_id: str, hand_id: str) -> bool:
        events = log_events(self, table_id)
        return any(isinstance(e, HandEnded) and e.hand_id == hand_id for e in events)


def log_events(table: FakeTable, table_id: str) -> list[object]:
    from openpoker.services.dealer.tracker import decode_event

    out: list[object] = []
    for tid, env in table.envelopes:
        if tid == table_id:
            out.extend(e for r in env.events if (e := decode_event(r)) is not None)
    return out


class FakeRng:
    def __init__(self, table: FakeTable) -> None:
        self.table = table
        self.shuffles: dict[str, tuple[str, bytes, int]] = {}  # hand -> (table, seed, size)
        self.calls: list[tuple[str, str]] = []
        self.fail_next: list[CallFailed] = []
        self.lost: set[str] = set()

    async def shuffle(self, *, request_id: str, table_id: str, hand_id: str, deck_size: int) -> Shuffled:
        self.calls.append(("Shuffle", request_id))
        if self.fail_next:
            raise self.fail_next.pop(0)
        seed = hashlib.sha256(b"test-seed/" + hand_id.encode()).digest()
        self.shuffles.setdefault(hand_id, (table_id, seed, deck_size))
        cards = derive_deck(seed, hand_id, deck_size, CURRENT_VERSION)
        return Shuffled(
            commitment=commitment(seed, hand_id, CURRENT_VERSION),
            version=CURRENT_VERSION,
            sealed_deck="".join(str(c) for c in cards).encode(),
        )

    async def reveal_seed(self, *, hand_id: str) -> tuple[str, str, int, str, bytes]:
        self.calls.append(("RevealSeed", hand_id))
        if hand_id in self.lost or hand_id not in self.shuffles:
            raise failed("rng", "RevealSeed", "SHUFFLE_NOT_FOUND", code="NOT_FOUND")
        table_id, seed, size = self.shuffles[hand_id]
        if not self.table.hand_ended(table_id, hand_id):
            raise failed("rng", "RevealSeed", "HAND_NOT_ENDED")
        return CURRENT_VERSION, commitment(seed, hand_id, CURRENT_VERSION), size, table_id, seed


@dataclass
class _Hand:
    stacks: tuple[tuple[str, int], ...]
    state: str = "open"  # open / settled / voided


class FakeWallet:
    """Escrow per (table, player), one reservation per hand, settled or voided once."""

    def __init__(self) -> None:
        self.escrow: dict[tuple[str, str], int] = {}
        self.house = 0
        self.hands: dict[tuple[str, int], _Hand] = {}
        self.calls: list[tuple[str, str]] = []
        self.refuse_open: set[int] = set()
        self.settlements: list[dict[str, object]] = []

    def buy_in(self, table_id: str, player: str, amount: int) -> None:
        self.escrow[(table_id, player)] = self.escrow.get((table_id, player), 0) + amount

    def reserved(self, table_id: str) -> int:
        return sum(
            a for (t, _), h in self.hands.items() if t == table_id and h.state == "open" for _, a in h.stacks
        )

    async def open_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_number: int,
        stacks: tuple[tuple[str, int], ...],
        rake: RakeRules,
    ) -> bool:
        self.calls.append(("OpenHand", request_id))
        if hand_number in self.refuse_open:
            raise failed("wallet", "OpenHand", "INSUFFICIENT_FUNDS")
        known = self.hands.get((table_id, hand_number))
        if known is not None:
            if known.stacks != stacks:
                raise failed("wallet", "OpenHand", "HAND_ALREADY_OPEN", code="ALREADY_EXISTS")
            return True
        for player, amount in stacks:
            if self.escrow.get((table_id, player), 0) < amount:
                raise failed("wallet", "OpenHand", "INSUFFICIENT_FUNDS")
        self.hands[(table_id, hand_number)] = _Hand(stacks=stacks)
        return False

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
        self.calls.append(("SettleHand", request_id))
        h = self.hands.get((table_id, hand_number))
        if h is None:
            raise failed("wallet", "SettleHand", "UNKNOWN_HAND", code="NOT_FOUND")
        if h.state == "settled":
            raise failed("wallet", "SettleHand", "HAND_ALREADY_SETTLED")
        if h.state == "voided":
            raise failed("wallet", "SettleHand", "HAND_ALREADY_VOIDED")
        reserved = dict(h.stacks)
        if sum(a for _, a in contributions) != sum(a for _, a in payouts) + rake or any(
            a > reserved.get(p, 0) for p, a in contributions
        ):
            raise failed("wallet", "SettleHand", "SETTLEMENT_MISMATCH", code="INVALID_ARGUMENT")
        for p, a in contributions:
            self.escrow[(table_id, p)] -= a
        for p, a in payouts:
            self.escrow[(table_id, p)] += a
        self.house += rake
        h.state = "settled"
        self.settlements.append(
            {"hand": hand_number, "contributions": contributions, "payouts": payouts, "rake": rake}
        )

    async def void_hand(self, *, request_id: str, table_id: str, hand_number: int) -> int:
        self.calls.append(("VoidHand", request_id))
        h = self.hands.get((table_id, hand_number))
        if h is None:
            raise failed("wallet", "VoidHand", "UNKNOWN_HAND", code="NOT_FOUND")
        if h.state == "settled":
            raise failed("wallet", "VoidHand", "HAND_ALREADY_SETTLED")
        released = sum(a for _, a in h.stacks)
        h.state = "voided"
        return released


def table_stacks(table: FakeTable, table_id: str) -> dict[str, int]:
    state = table.state(table_id)
    return {occ.player: occ.stack for occ in state.seats.values()}


def seat_to_act(table: FakeTable, table_id: str) -> int | None:
    state = table.state(table_id)
    return None if state.hand is None else hand.to_act(state.hand)
