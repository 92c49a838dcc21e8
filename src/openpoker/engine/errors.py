"""The engine's exception tree, a branch of the project's one base (``openpoker.errors``).

Every error carries a stable ``reason`` (the ``google.rpc.ErrorInfo.reason`` the services send),
a ``kind`` picking the gRPC status (``invalid`` for malformed input, ``precondition`` for an
action illegal now), and the numbers behind it as fields, so a caller never parses the message.
"""

from __future__ import annotations

from typing import ClassVar

from openpoker.errors import ErrorKind, OpenPokerError


class EngineError(OpenPokerError):
    """Base of every error the engine raises."""

    reason = "ENGINE_ERROR"
    kind: ClassVar[ErrorKind] = "invalid"


class InvalidCard(EngineError):
    reason = "INVALID_CARD"

    def __init__(self, *, text: str) -> None:
        super().__init__(f"not a card: {text!r}", text=text)
        self.text = text


class InvalidRules(EngineError):
    """A rules value that cannot be played (negative stakes, rake over 750 bp, ...)."""

    reason = "INVALID_RULES"

    def __init__(self, *, field: str, problem: str) -> None:
        super().__init__(f"invalid rules: {field}: {problem}", field=field, problem=problem)
        self.field = field
        self.problem = problem


class RuleViolation(EngineError):
    """A command that is well formed but not allowed in the current state."""

    reason = "RULE_VIOLATION"
    kind = "precondition"


# -- hand engine (engine.hand) -------------------------------------------------------------------


class InvalidHandSetup(EngineError):
    """A hand setup that cannot be played (too few players, a short deck, a post by no one)."""

    reason = "INVALID_HAND_SETUP"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"invalid hand setup: {problem}", problem=problem)
        self.problem = problem


class InvalidDeck(InvalidHandSetup):
    """A deck that is not the game's: Six Plus deals the 36 cards from six up, every other game
    the 52; each card once. ``problem`` is ``size``, ``duplicate`` or ``not_in_game``; ``card``
    names the offending card ("" for a wrong size)."""

    reason = "INVALID_DECK"

    def __init__(self, *, game: str, problem: str, card: str = "", size: int = 0) -> None:
        what = {"size": f"{size} cards", "duplicate": f"{card} twice", "not_in_game": f"{card} is not in it"}
        message = f"not the {game} deck: {what.get(problem, problem)}"
        # EngineError's own constructor: InvalidHandSetup's would take ``problem`` alone.
        EngineError.__init__(self, message, game=game, problem=problem, card=card, size=size)
        self.game = game
        self.problem = problem
        self.card = card
        self.size = size


class HandOver(RuleViolation):
    reason = "HAND_OVER"

    def __init__(self, *, hand_id: str) -> None:
        super().__init__(f"hand {hand_id} is over", hand_id=hand_id)
        self.hand_id = hand_id


class SeatNotInHand(RuleViolation):
    reason = "SEAT_NOT_IN_HAND"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} is not in this hand", seat=seat)
        self.seat = seat


class NotYourTurn(RuleViolation):
    reason = "NOT_YOUR_TURN"

    def __init__(self, *, seat: int, to_act: int | None) -> None:
        who = "nobody" if to_act is None else f"seat {to_act}"
        super().__init__(f"seat {seat} acted but {who} is to act", seat=seat, to_act=to_act)
        self.seat = seat
        self.to_act = to_act


class CannotCheck(RuleViolation):
    reason = "CANNOT_CHECK"

    def __init__(self, *, seat: int, to_call: int) -> None:
        super().__init__(f"seat {seat} cannot check: {to_call} to call", seat=seat, to_call=to_call)
        self.seat = seat
        self.to_call = to_call


class NothingToCall(RuleViolation):
    reason = "NOTHING_TO_CALL"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} has nothing to call (check instead)", seat=seat)
        self.seat = seat


class FoldNotAllowed(RuleViolation):
    """Folding when a check is free, at a table whose rules refuse it."""

    reason = "FOLD_NOT_ALLOWED"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} may check for free and these rules refuse the fold", seat=seat)
        self.seat = seat


class RaiseNotAllowed(RuleViolation):
    """No bet or raise is possible now; ``why`` is one of ``capped``, ``not_reopened``,
    ``nobody_can_call``, ``covered``."""

    reason = "RAISE_NOT_ALLOWED"

    def __init__(self, *, seat: int, why: str) -> None:
        super().__init__(f"seat {seat} may not bet or raise: {why}", seat=seat, why=why)
        self.seat = seat
        self.why = why


class RaiseBelowMinimum(RuleViolation):
    reason = "RAISE_BELOW_MINIMUM"

    def __init__(self, *, amount: int, minimum: int) -> None:
        super().__init__(f"raise to {amount} is below the minimum {minimum}", amount=amount, minimum=minimum)
        self.amount = amount
        self.minimum = minimum


class RaiseAboveMaximum(RuleViolation):
    reason = "RAISE_ABOVE_MAXIMUM"

    def __init__(self, *, amount: int, maximum: int) -> None:
        super().__init__(f"raise to {amount} is above the maximum {maximum}", amount=amount, maximum=maximum)
        self.amount = amount
        self.maximum = maximum


class NotEnoughChips(RuleViolation):
    reason = "NOT_ENOUGH_CHIPS"

    def __init__(self, *, seat: int, amount: int, available: int) -> None:
        super().__init__(
            f"seat {seat} cannot bet to {amount}: only {available} in total",
            seat=seat,
            amount=amount,
            available=available,
        )
        self.seat = seat
        self.amount = amount
        self.available = available


class ProtectionNotAllowed(RuleViolation):
    """All-in protection needs chips already in the pot (otherwise the hand is folded)."""

    reason = "PROTECTION_NOT_ALLOWED"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} has put nothing in: fold instead of all-in protection", seat=seat)
        self.seat = seat


class NotShowdown(RuleViolation):
    reason = "NOT_SHOWDOWN"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} cannot show or muck: no showdown is waiting", seat=seat)
        self.seat = seat


class CannotMuck(RuleViolation):
    """The last hand left at a showdown wins and cannot be mucked."""

    reason = "CANNOT_MUCK"

    def __init__(self, *, seat: int) -> None:
        super().__init__(f"seat {seat} holds the last live hand and cannot muck", seat=seat)
        self.seat = seat


# -- table (engine.table) ------------------------------------------------------------------------


class TableNotOpen(EngineError):
    reason = "TABLE_NOT_OPEN"
    kind = "precondition"

    def __init__(self) -> None:
        super().__init__("the table is not open")


class TableAlreadyOpen(RuleViolation):
    reason = "TABLE_ALREADY_OPEN"

    def __init__(self, *, table_id: str) -> None:
        super().__init__(f"table {table_id} is already open", table_id=table_id)


class NoHandInProgress(RuleViolation):
    reason = "NO_HAND_IN_PROGRESS"

    def __init__(self) -> None:
        super().__init__("no hand is in progress")


class HandNotLive(RuleViolation):
    """A command for a hand that is not the one being played."""

    reason = "HAND_NOT_LIVE"

    def __init__(self, *, hand_id: str, live_hand_id: str) -> None:
        super().__init__(
            f"hand {hand_id} is not the live hand ({live_hand_id or 'none'})",
            hand_id=hand_id,
            live_hand_id=live_hand_id,
        )
        self.hand_id = hand_id
        self.live_hand_id = live_hand_id


class SeatStateUnchanged(RuleViolation):
    """Sitting out twice, sitting in while in, disconnecting twice: refused, never ignored."""

    reason = "SEAT_STATE_UNCHANGED"

    def __init__(self, *, seat: int, state: str) -> None:
        super().__init__(f"seat {seat} is already {state}", seat=seat, state=state)
        self.seat = seat
        self.state = state


class DuplicateHandId(RuleViolation):
    """A hand id the table already used. The engine knows the latest ``HAND_IDS_KEPT``; the
    table service raises it too for older ones, which it finds in its index and the log."""

    reason = "DUPLICATE_HAND_ID"

    def __init__(self, *, hand_id: str) -> None:
        super().__init__(f"hand {hand_id} was already played here", hand_id=hand_id)


class CannotShowHand(RuleViolation):
    """A show of a hand won uncontested (seed 000: the winner "does not show unless they choose
    to"), refused: ``why`` says it was not theirs to show, was shown already, or the next hand
    has started."""

    reason = "CANNOT_SHOW_HAND"

    def __init__(self, *, seat: int, why: str) -> None:
        super().__init__(f"seat {seat} cannot show: {why}", seat=seat, why=why)
        self.seat = seat
        self.why = why
