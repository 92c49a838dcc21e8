"""The service's fold of one table log: the engine's ``TableState`` plus what the service keeps.

``TableModel`` is the in-memory cache entry of a table: the engine state, the log position
(version, stream sequence, hash of the last envelope, highest writer epoch seen), the request ids
already answered (de-duplication), an index of the latest ``HANDS_KEPT`` hands (number, first and
last versions and sequences) with the count of all hands, and the current (or last) hand's log.
Older hands are found in the log itself (``TableStore.find_hand``), so memory and snapshots stay
the same size however many hands the table has played. ``apply`` folds one envelope's events into
it; the same code runs when loading from snapshot + log, after an append, and for each watcher,
so they cannot disagree.

Engine events (``HandVoided`` included) go to ``engine.table.evolve``; the service's
``OwnerChanged`` and the buy-in intents (``BuyInIntended``, closed by the request's own envelope
or by ``BuyInCancelled`` then ``BuyInRefunded``; ``tablelog.events``) are applied here.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from openpoker.engine import table
from openpoker.engine.hand_events import (
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    ForcedBetPosted,
    HandEnded,
    HandEvent,
    PotAwarded,
    ShowdownStarted,
    Street,
)
from openpoker.engine.table_events import (
    AllInAllowanceReset,
    DecisionTimedOut,
    HandScheduled,
    HandVoided,
    LeaveRequested,
    PlayerLeft,
    PlayerSeated,
    TableOpened,
    UncontestedHandShown,
)
from openpoker.tablelog.events import BuyInCancelled, BuyInIntended, BuyInRefunded, OwnerChanged

LogEvent = table.TableLogEvent | OwnerChanged | BuyInIntended | BuyInCancelled | BuyInRefunded

REQUESTS_KEPT = 10_000  # request ids remembered per table (retries come within seconds)
# Hands indexed in memory (and in snapshots): the latest ones. GetHand/GetHandHistory of an older
# hand reads the log to find it (``TableStore.find_hand``); a table's memory and snapshot size
# must not grow with its age. Read at run time, so tests can lower it.
HANDS_KEPT = 1_000
RECENT_HANDS = 16  # finished hands whose events stay in memory for GetHand
LEFT_KEPT = 100  # recent PlayerLeft facts re-cashed-out by a new owner


@dataclass(frozen=True, slots=True, kw_only=True)
class Left:
    """Chips to cash out for a player who left: their stack, or (``HandVoided``) what they had
    committed to the voided hand before leaving it."""

    seat: int
    player: str
    chips: int
    # The hand (number) these chips come out of, 0 for none: the wallet pays them out only once
    # it has settled or voided that hand (``CashOut.after_hand``), never before its reservation.
    after_hand: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one appended command produced, enough to answer a retry of its request id."""

    version: int
    seated: int = -1  # the seat taken (PlayerSeated), -1 if none
    left: tuple[Left, ...] = ()
    pending_leave: bool = False
    hand_id: str = ""  # the hand scheduled, if any
    cleared: int = 0  # all-in protections an operator's reset cleared (AllInAllowanceReset)


@dataclass(slots=True, kw_only=True)
class HandRecord:
    hand_id: str
    number: int  # 1 for the table's first hand
    first_version: int
    first_sequence: int
    last_version: int = 0  # 0 while live
    last_sequence: int = 0
    voided: bool = False

    @property
    def finished(self) -> bool:
        return self.last_version > 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionEntry:
    """One action of a hand as a log line (seats 0-based, amounts raise-to or called)."""

    seat: int
    kind: str  # fold, check, call, bet, raise, show, muck, protect
    amount: int
    street: Street | None  # None once at showdown
    automatic: bool
    all_in: bool


@dataclass(slots=True, kw_only=True)
class TableModel:
    table_id: str
    state: table.TableState | None = None
    version: int = 0
    sequence: int = 0
    last_hash: bytes = b""
    epoch: int = 0  # the highest writer epoch in the log
    owner: str = ""  # the writer that appended OwnerChanged with that epoch
    created_at: dt.datetime | None = None
    requests: OrderedDict[str, Outcome] = field(default_factory=OrderedDict)
    hands: dict[str, HandRecord] = field(default_factory=dict)  # the latest HANDS_KEPT hands
    hand_order: deque[str] = field(default_factory=deque)  # their ids, oldest first
    hands_total: int = 0  # every hand ever scheduled (the latest hand's number)
    hand_log: list[LogEvent] = field(default_factory=list)  # current (or last) hand, from HandScheduled
    recent: OrderedDict[str, tuple[LogEvent, ...]] = field(default_factory=OrderedDict)
    # The latest players who left, with the version of their PlayerLeft: a new owner cashes them
    # out again (idempotent ids) so a crash between an append and its cash-out strands nothing.
    left_log: deque[tuple[int, Left]] = field(default_factory=lambda: deque(maxlen=LEFT_KEPT))
    # Buy-in intents by request id: open ones (the request may still seat), and cancelled ones
    # whose chips are owed back. Either may sit in escrow with no seat behind it until the
    # request seats or the refund is recorded (``services.table.intents``).
    intents: dict[str, BuyInIntended] = field(default_factory=dict)
    owed: dict[str, BuyInIntended] = field(default_factory=dict)
    # The view's scan of ``hand_log`` (``hand_scan``): a cache, never part of a snapshot.
    scan: HandLogScan | None = field(default=None, repr=False, compare=False)

    def hand_scan(self) -> HandLogScan:
        """The scan of ``hand_log``, caught up (re-made when the log was replaced)."""
        scan = self.scan
        if scan is None or not scan.covers(self.hand_log):
            scan = self.scan = HandLogScan(self.hand_log)
        return scan.catch_up()

    @property
    def current_hand(self) -> HandRecord | None:
        if not self.hand_order:
            return None
        record = self.hands[self.hand_order[-1]]
        return None if record.finished else record

    def apply(
        self,
        events: Sequence[LogEvent],
        *,
        version: int,
        sequence: int,
        envelope_hash: bytes,
        command_id: str,
        recorded_at: dt.datetime,
    ) -> Outcome:
        """Fold one envelope's events (in place); returns the command's outcome."""
        seated = -1
        left: list[Left] = []
        pending = False
        hand_id = ""
        cleared = 0
        if self.intents:  # the request's own envelope: its chips now back a seat
            self.intents.pop(command_id, None)
        for event in events:
            match event:
                case OwnerChanged(epoch=epoch, owner=owner):
                    if epoch >= self.epoch:
                        self.epoch, self.owner = epoch, owner
                case BuyInIntended():
                    self.intents[event.request_id] = event
                case BuyInCancelled():
                    cancelled = self.intents.pop(event.request_id, None)
                    if cancelled is not None:
                        self.owed[event.request_id] = cancelled
                case BuyInRefunded():
                    self.owed.pop(event.request_id, None)
                case HandVoided():
                    for gone in self._void(event, version, sequence):
                        left.append(gone)
                        self.left_log.append((version, gone))
                case TableOpened():
                    self.state = table.fold([event])
                    self.created_at = recorded_at
                case _:
                    assert self.state is not None, "table event before TableOpened"
                    table.evolve(self.state, event)
                    if isinstance(event, HandScheduled):
                        hand_id = event.hand_id
                        self.hands_total += 1
                        self.hands[event.hand_id] = HandRecord(
                            hand_id=event.hand_id,
                            number=self.hands_total,
                            first_version=version,
                            first_sequence=sequence,
                        )
                        self.hand_order.append(event.hand_id)
                        while len(self.hand_order) > max(1, HANDS_KEPT):
                            del self.hands[self.hand_order.popleft()]
                        self.hand_log = [event]
                    elif isinstance(event, UncontestedHandShown):
                        self._shown_after(event)
                    elif self.current_hand is not None:
                        self.hand_log.append(event)
                        if isinstance(event, HandEnded):
                            self._finish(version, sequence)
                    if isinstance(event, PlayerSeated):
                        seated = event.seat
                    elif isinstance(event, PlayerLeft):
                        gone = Left(
                            seat=event.seat,
                            player=event.player,
                            chips=event.chips,
                            after_hand=self._dealt_in_last_hand(event.seat),
                        )
                        left.append(gone)
                        self.left_log.append((version, gone))
                    elif isinstance(event, LeaveRequested):
                        pending = True
                    elif isinstance(event, AllInAllowanceReset):
                        cleared += event.cleared
        self.version, self.sequence, self.last_hash = version, sequence, envelope_hash
        outcome = Outcome(
            version=version,
            seated=seated,
            left=tuple(left),
            pending_leave=pending,
            hand_id=hand_id,
            cleared=cleared,
        )
        self.requests[command_id] = outcome
        while len(self.requests) > REQUESTS_KEPT:
            self.requests.popitem(last=False)
        return outcome

    def hand_number(self, number: int) -> HandRecord | None:
        """The hand with this number if it is still indexed in memory (the latest hands)."""
        i = number - (self.hands_total - len(self.hand_order)) - 1
        return self.hands[self.hand_order[i]] if 0 <= i < len(self.hand_order) else None

    @property
    def oldest_indexed(self) -> HandRecord | None:
        """The oldest hand indexed in memory; every hand before it is only in the log."""
        return self.hands[self.hand_order[0]] if self.hand_order else None

    def _finish(self, version: int, sequence: int) -> None:
        record = self.hands[self.hand_order[-1]]
        record.last_version, record.last_sequence = version, sequence
        self.recent[record.hand_id] = tuple(self.hand_log)
        while len(self.recent) > RECENT_HANDS:
            self.recent.popitem(last=False)

    def _shown_after(self, event: UncontestedHandShown) -> None:
        """A show of the last hand, won uncontested, after its end: part of that hand's log
        (views, GetHand, GetHandHistory of the hands kept in memory)."""
        if not self.hand_order or self.hand_order[-1] != event.hand_id:
            return
        self.hand_log.append(event)
        if event.hand_id in self.recent:
            self.recent[event.hand_id] = tuple(self.hand_log)

    def _dealt_in_last_hand(self, seat: int) -> int:
        """The number of the hand in flight (or last played) if ``seat`` was dealt into it, else
        0. Hands before it are settled or voided in the wallet: the dealer starts a hand only
        after closing the one before."""
        s = self.state
        if s is None or s.plan is None or not self.hand_order or seat not in s.plan.dealt:
            return 0
        return self.hands_total

    def _void(self, event: HandVoided, version: int, sequence: int) -> list[Left]:
        """Fold ``HandVoided``; returns what players who already left the hand had committed
        to it (they took only what was left in front of them; the void gives the rest back)."""
        s = self.state
        assert s is not None, "HandVoided before TableOpened"
        number = self.hands[event.hand_id].number
        refunds = [
            Left(seat=r.seat, player=r.player, chips=r.chips, after_hand=number)
            for r in table.void_refunds(s)
        ]
        table.evolve(s, event)
        self.hand_log.append(event)
        self.hands[event.hand_id].voided = True
        self._finish(version, sequence)
        return refunds


def hand_events(log: Sequence[LogEvent]) -> list[HandEvent]:
    """The hand engine's events of a hand log (its table facts left out)."""
    return [e for e in log if isinstance(e, table.HAND_EVENT_TYPES)]


# The events ``actions`` reads; every other event is skipped with one check (this runs for
# every view of a live hand).
_ACTION_EVENTS = (
    DecisionTimedOut,
    ForcedBetPosted,
    BoardDealt,
    Folded,
    Checked,
    Called,
    BetPlaced,
    AllInProtected,
    CardsShown,
    CardsMucked,
    UncontestedHandShown,
)


def actions(log: Sequence[LogEvent]) -> list[ActionEntry]:
    """A hand's actions in order, with the street, raise-to amounts and time-out marks."""
    folder = ActionFolder()
    for event in log:
        folder.feed(event)
    return folder.entries


class ActionFolder:
    """``actions`` one event at a time, so that a growing log is read once (``HandLogScan``)."""

    __slots__ = ("_automatic", "_street", "_street_bet", "entries")

    def __init__(self) -> None:
        self.entries: list[ActionEntry] = []
        self._street: Street | None = Street.PREFLOP
        self._street_bet = 0  # highest bet of the street so far (bet vs raise)
        self._automatic = False  # the next action was taken for a timed-out seat

    def feed(self, event: LogEvent) -> None:
        if not isinstance(event, _ACTION_EVENTS):
            return
        street, automatic = self._street, self._automatic
        entry: ActionEntry
        match event:
            case DecisionTimedOut():
                self._automatic = True
                return
            case ForcedBetPosted(amount=amount):
                self._street_bet = max(self._street_bet, amount)
                return
            case BoardDealt(street=new):
                self._street, self._street_bet = new, 0
                return
            case Folded(seat=seat):
                entry = ActionEntry(
                    seat=seat, kind="fold", amount=0, street=street, automatic=automatic, all_in=False
                )
            case Checked(seat=seat):
                entry = ActionEntry(
                    seat=seat, kind="check", amount=0, street=street, automatic=automatic, all_in=False
                )
            case Called(seat=seat, amount=amount, all_in=all_in):
                entry = ActionEntry(
                    seat=seat, kind="call", amount=amount, street=street, automatic=automatic, all_in=all_in
                )
            case BetPlaced(seat=seat, to=to, all_in=all_in):
                kind = "raise" if self._street_bet > 0 else "bet"
                self._street_bet = max(self._street_bet, to)
                entry = ActionEntry(
                    seat=seat, kind=kind, amount=to, street=street, automatic=automatic, all_in=all_in
                )
            case AllInProtected(seat=seat):
                entry = ActionEntry(
                    seat=seat, kind="protect", amount=0, street=street, automatic=True, all_in=True
                )
            case CardsShown(seat=seat):
                entry = ActionEntry(
                    seat=seat, kind="show", amount=0, street=None, automatic=automatic, all_in=False
                )
            case CardsMucked(seat=seat):
                entry = ActionEntry(
                    seat=seat, kind="muck", amount=0, street=None, automatic=automatic, all_in=False
                )
            case UncontestedHandShown(seat=seat):  # after the hand, by the winner by folds
                entry = ActionEntry(
                    seat=seat, kind="show", amount=0, street=None, automatic=False, all_in=False
                )
            case _:  # pragma: no cover - every type of _ACTION_EVENTS has its case above
                raise AssertionError(type(event).__name__)
        self.entries.append(entry)
        self._automatic = False


class HandLogScan:
    """What a view of a hand reads from its log besides the engine state (its actions, whether
    it reached showdown, shown hands, awarded pots, rake, the deck commitment), folded one
    event at a time. A live hand's log only grows (``TableModel.hand_log``: appended to, a new
    list per hand), so ``TableModel.hand_scan`` keeps one scan per log and each reply reads only
    the events appended since the previous one, not the whole log twice."""

    __slots__ = (
        "_last",
        "actions",
        "any_events",
        "awarded",
        "commitment",
        "log",
        "rake",
        "revealed",
        "seen",
        "showdown",
        "shown",
    )

    def __init__(self, log: Sequence[LogEvent]) -> None:
        self.log = log
        self.seen = 0  # events of ``log`` folded so far
        self._last: LogEvent | None = None  # log[seen - 1], to notice a log changed in place
        self.any_events = False  # any hand event at all
        self.showdown = False
        self.commitment: str | None = None  # of the first hand event that has one
        self.shown: dict[int, str] = {}  # seat -> hand description
        self.revealed: set[int] = set()  # seats whose winner by folds showed after the hand
        self.awarded: list[PotAwarded] = []
        self.rake: int | None = None
        self.actions = ActionFolder()

    def covers(self, log: Sequence[LogEvent]) -> bool:
        """True when ``log`` is this scan's log, only appended to since."""
        seen = self.seen
        return log is self.log and len(log) >= seen and (seen == 0 or log[seen - 1] is self._last)

    def catch_up(self) -> HandLogScan:
        log = self.log
        if self.seen == len(log):
            return self
        hand_types = table.HAND_EVENT_TYPES
        feed = self.actions.feed
        for e in log[self.seen :]:
            feed(e)  # time-out marks are table events
            if isinstance(e, UncontestedHandShown):
                self.revealed.add(e.seat)
            if not isinstance(e, hand_types):
                continue
            self.any_events = True
            if isinstance(e, ShowdownStarted):
                self.showdown = True
            elif isinstance(e, CardsShown):
                self.shown[e.seat] = e.description
            elif isinstance(e, PotAwarded):
                self.awarded.append(e)
            elif isinstance(e, HandEnded):
                self.rake = e.rake
            if self.commitment is None and hasattr(e, "commitment"):
                self.commitment = e.commitment
        self.seen = len(log)
        self._last = log[-1]
        return self
