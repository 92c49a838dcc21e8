"""Hand steps as transfers (research/wallet.md §4.1): reserve, settle, void.

- Open: per player dealt in, a pending transfer ``escrow -> pot`` of their whole stack. While
  it is pending the stack can be neither cashed out nor topped up (table stakes).
- Settle: per player, post what they put in (the rest of the reservation, uncalled bets
  included, returns by itself); per winner, pay ``pot -> escrow``; the rake ``pot -> house``.
  The pot ends at exactly zero, and the wallet recomputes the rake with the same
  ``engine.rake.compute_rake`` as the hand engine, refusing any settlement that does not add up.
- Void: release every reservation; no other money moves (a hand that cannot resume is as if
  never dealt).

Transfer ids are derived from the table id, hand number, step and player, so a table that
replays its log after a crash regenerates exactly the same batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openpoker.engine.rake import compute_rake
from openpoker.engine.rules import RakeRules
from openpoker.ledger import accounts
from openpoker.ledger.commands import OpenHand, PlayerAmount, SettleHand
from openpoker.ledger.errors import InvalidAmount, SettlementMismatch
from openpoker.ledger.events import HandStatus
from openpoker.ledger.transfers import (
    PostPending,
    Transfer,
    TransferCode,
    TransferOp,
    VoidPending,
    check_amount,
)


@dataclass(slots=True, kw_only=True)
class HandRecord:
    table_id: str
    hand_no: int
    stacks: tuple[PlayerAmount, ...]
    rake_rules: RakeRules
    status: HandStatus = HandStatus.OPEN
    pot: int = 0
    rake: int = 0
    saw_flop: bool = False


def hand_key(table_id: str, hand_no: int) -> str:
    return f"{table_id}/{hand_no}"


def transfer_id(table_id: str, hand_no: int, step: str, player: str = "") -> str:
    base = f"hand/{table_id}/{hand_no}/{step}"
    return f"{base}/{player}" if player else base


def check_hand_no(hand_no: int) -> int:
    if hand_no < 0 or hand_no > accounts.INT64_MAX:
        raise InvalidAmount(field="hand_no", amount=hand_no, problem="must be 0..int64")
    return hand_no


def _by_player(field: str, entries: Sequence[PlayerAmount], *, allow_zero: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for entry in entries:
        accounts.check_id("player", entry.player)
        check_amount(f"{field}[{entry.player}]", entry.amount, allow_zero=allow_zero)
        if entry.player in out:
            raise InvalidAmount(
                field=f"{field}[{entry.player}]", amount=entry.amount, problem="player listed twice"
            )
        out[entry.player] = entry.amount
    return out


def open_ops(command: OpenHand) -> tuple[TransferOp, ...]:
    t, h = command.table_id, check_hand_no(command.hand_no)
    stacks = _by_player("stacks", command.stacks, allow_zero=False)
    if not stacks:
        raise InvalidAmount(field="stacks", amount=0, problem="a hand needs players dealt in")
    return tuple(
        Transfer(
            id=transfer_id(t, h, "reserve", player),
            debit=accounts.escrow(t, player),
            credit=accounts.pot(t, h),
            amount=amount,
            code=TransferCode.HAND_RESERVE,
            pending=True,
        )
        for player, amount in stacks.items()
    )


def settle_ops(hand: HandRecord, command: SettleHand) -> tuple[tuple[TransferOp, ...], int]:
    """The settlement batch and the pot, or ``SettlementMismatch`` if it does not add up."""
    t, h = hand.table_id, hand.hand_no
    reserved = {s.player: s.amount for s in hand.stacks}
    contributions = _by_player("contributions", command.contributions, allow_zero=True)
    payouts = _by_player("payouts", command.payouts, allow_zero=True)
    check_amount("rake", command.rake, allow_zero=True)

    def refuse(problem: str, **numbers: int | str) -> SettlementMismatch:
        return SettlementMismatch(table_id=t, hand_no=h, problem=problem, **numbers)

    for player, amount in contributions.items():
        if player not in reserved:
            raise refuse("contribution from a player not dealt in", player=player)
        if amount > reserved[player]:
            raise refuse(
                "contribution above the reserved stack",
                player=player,
                amount=amount,
                reserved=reserved[player],
            )
    for player in payouts:
        if player not in reserved:
            raise refuse("payout to a player not dealt in", player=player)
    pot = sum(contributions.values())
    paid = sum(payouts.values())
    if pot != paid + command.rake:
        raise refuse("contributions must equal payouts plus rake", pot=pot, payouts=paid, rake=command.rake)
    due = compute_rake(hand.rake_rules, pot=pot, players_dealt_in=len(reserved), saw_flop=command.saw_flop)
    if command.rake != due:
        raise refuse("rake differs from the table's rake rules", rake=command.rake, expected=due, pot=pot)

    ops: list[TransferOp] = [
        PostPending(
            id=transfer_id(t, h, "post", player),
            pending_id=transfer_id(t, h, "reserve", player),
            amount=contributions.get(player, 0),
            code=TransferCode.HAND_CONTRIBUTION,
        )
        for player in reserved
    ]
    ops.extend(
        Transfer(
            id=transfer_id(t, h, "pay", player),
            debit=accounts.pot(t, h),
            credit=accounts.escrow(t, player),
            amount=amount,
            code=TransferCode.HAND_PAYOUT,
        )
        for player, amount in payouts.items()
        if amount > 0
    )
    if command.rake > 0:
        ops.append(
            Transfer(
                id=transfer_id(t, h, "rake"),
                debit=accounts.pot(t, h),
                credit=accounts.HOUSE_RAKE,
                amount=command.rake,
                code=TransferCode.HAND_RAKE,
            )
        )
    return tuple(ops), pot


def void_ops(hand: HandRecord) -> tuple[TransferOp, ...]:
    t, h = hand.table_id, hand.hand_no
    return tuple(
        VoidPending(
            id=transfer_id(t, h, "void", s.player),
            pending_id=transfer_id(t, h, "reserve", s.player),
            code=TransferCode.HAND_RELEASE,
        )
        for s in hand.stacks
    )
