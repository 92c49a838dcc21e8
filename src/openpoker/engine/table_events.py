"""The table's vocabulary: commands from players and the shell, and the facts of a table's log.

A table's log interleaves these events with the hand engine's (``engine.hand_events``): every
hand appears as ``HandScheduled`` (who is dealt in, button, blinds, owed blinds settled or
incurred) followed by that hand's own events from ``HandStarted`` to ``HandEnded``, with the
table's time and connection facts (``DecisionTimedOut``, ``PlayerReconnected``, ...) between
them where they happened. Seat events between hands (or during one, for joins, sit-outs and
leave requests) complete the picture, so the whole table is rebuilt from its log alone. A hand
that cannot be finished ends with ``HandVoided`` instead of ``HandEnded``.

All are frozen, slotted, keyword-only dataclasses persisted by ``engine.codec``: never rename a
class, a field or an enum value once stored. Times are milliseconds observed by the shell
(the engine has no clock); chips are integers in minor units.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from openpoker.engine.blinds import HandPlan
from openpoker.engine.cards import Card
from openpoker.engine.hand_events import HandCommand, HandEvent, SeatAmount
from openpoker.engine.rules import Rules
from openpoker.engine.seating import Debt

# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenTable:
    table_id: str
    rules: Rules


@dataclass(frozen=True, slots=True, kw_only=True)
class SitDown:
    """Join a free seat with ``buy_in`` chips; post a big blind at once or wait for it."""

    seat: int
    player: str
    buy_in: int
    wait_for_big_blind: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TopUp:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SitOut:
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SitIn:
    """Sit back in: post what is owed next hand, or wait for the big blind."""

    seat: int
    wait_for_big_blind: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Leave:
    """Stand up and take the chips. During a hand the player's hand is folded first."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StartHand:
    """From the dealer: the next hand's id and the shuffled deck (top first), as data."""

    hand_id: str
    deck: tuple[Card, ...]
    commitment: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Disconnect:
    seat: int
    at_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconnect:
    seat: int
    at_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeOut:
    """The shell's clock ran out for the player to act (``at_ms`` as observed).

    ``used_elsewhere``: the disconnection protections the seat's player used at other tables in
    the rolling window ending at ``at_ms``, as the shell's site-wide record says (seed 000: the
    allowance is the member's, not the table's); they count toward the limit with this table's
    own. 0 when absent, as before the allowance was counted across tables."""

    seat: int
    at_ms: int
    used_elsewhere: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class VoidHand:
    """From the dealer: the live hand ``hand_id`` cannot be finished; every chip committed in it
    goes back to whoever committed it."""

    hand_id: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetAllInAllowance:
    """From an operator (seed 000: "Members wishing to have their All-in Limits reset may
    contact our Support Department"): forget the disconnection protections ``player`` used at
    this table, so the full allowance applies again from ``at_ms``."""

    player: str
    at_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SetShowPreferences:
    """A seated player's showdown choices (seed 000): muck a hand that cannot win at showdown
    (``auto_muck``), and show a hand won uncontested at once (``show_uncontested``). Allowed any
    time they are seated; taken into account from the next showdown decision, the current
    hand's included."""

    seat: int
    auto_muck: bool
    show_uncontested: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ShowUncontestedHand:
    """The winner of the last hand, won because everyone else folded, shows their hole cards
    (seed 000: "does not show unless they choose to"), until the next hand starts. ``hand_id``,
    when given, must be that hand."""

    seat: int
    hand_id: str = ""


TableCommand = (
    OpenTable
    | SitDown
    | TopUp
    | SitOut
    | SitIn
    | Leave
    | StartHand
    | Disconnect
    | Reconnect
    | TimeOut
    | VoidHand
    | ResetAllInAllowance
    | SetShowPreferences
    | ShowUncontestedHand
)


# -- events ------------------------------------------------------------------------------------


class SitOutReason(StrEnum):
    REQUESTED = "requested"
    NO_CHIPS = "no_chips"  # players with no chips are sat out after the hand


class TimeOutOutcome(StrEnum):
    PROTECTED = "protected"  # all-in for what they have put in (seeds 001, 004, 000)
    FOLDED = "folded"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableOpened:
    table_id: str
    rules: Rules


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerSeated:
    seat: int
    player: str
    buy_in: int
    wait_for_big_blind: bool
    debt: Debt  # NEW_PLAYER, or what they still owed when they left this table earlier


@dataclass(frozen=True, slots=True, kw_only=True)
class ChipsAdded:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerSatOut:
    seat: int
    reason: SitOutReason


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerSatIn:
    seat: int
    wait_for_big_blind: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveRequested:
    """Asked to leave during a hand: folded when their turn comes, gone when the hand ends."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLeft:
    seat: int
    player: str
    chips: int  # taken off the table


@dataclass(frozen=True, slots=True, kw_only=True)
class HandScheduled:
    """The table's part of a hand's start: the plan the ``HandSetup`` was built from."""

    hand_id: str
    plan: HandPlan


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerDisconnected:
    seat: int
    player: str
    at_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerReconnected:
    seat: int
    player: str
    at_ms: int
    extra_ms: int  # seeds 000/001/004: 20 s more when it is still their turn; else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionTimedOut:
    """Followed by the hand engine's ``AllInProtected`` or ``Folded`` for the seat."""

    seat: int
    player: str
    at_ms: int
    disconnected: bool
    outcome: TimeOutOutcome
    uses_protection: bool  # counts against the disconnected player's allowance (2 per 24 h)
    # Protections used at other tables that counted toward the limit (``TimeOut.used_elsewhere``),
    # recorded so the decision can be made again from the log alone; absent in older logs: 0.
    used_elsewhere: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class HandVoided:
    """The live hand stops where it stands and is never settled: each seat still at the table
    has its stack from the start of the hand back (``returned``, in the hand's internal order);
    a player who left during the hand took what was in front of them, and what they had
    committed is theirs again (``engine.table.void_refunds``). Nobody is raked."""

    hand_id: str
    reason: str
    returned: tuple[SeatAmount, ...]  # (seat, stack at the start of the hand) per seat still seated


@dataclass(frozen=True, slots=True, kw_only=True)
class AllInAllowanceReset:
    """An operator reset ``player``'s allowance of all-ins due to disconnection: the
    protections they used here no longer count. ``cleared`` is how many counted at ``at_ms``."""

    player: str
    at_ms: int
    cleared: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ShowPreferencesSet:
    """``player`` at ``seat`` chose their showdown preferences (see ``SetShowPreferences``)."""

    seat: int
    player: str
    auto_muck: bool
    show_uncontested: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class UncontestedHandShown:
    """The winner of hand ``hand_id``, won because everyone else folded, showed ``cards``:
    after its ``HandEnded`` and before the next hand's ``HandScheduled``, on their command or at
    once by their ``show_uncontested`` choice."""

    hand_id: str
    seat: int
    player: str
    cards: tuple[Card, ...]


TableEvent = (
    TableOpened
    | PlayerSeated
    | ChipsAdded
    | PlayerSatOut
    | PlayerSatIn
    | LeaveRequested
    | PlayerLeft
    | HandScheduled
    | PlayerDisconnected
    | PlayerReconnected
    | DecisionTimedOut
    | HandVoided
    | AllInAllowanceReset
    | ShowPreferencesSet
    | UncontestedHandShown
)

# A table's log holds its own events and the hand engine's; a table decides both kinds of command.
TableLogEvent: TypeAlias = TableEvent | HandEvent
Command: TypeAlias = TableCommand | HandCommand
