"""Every seat's stack against its escrow: the table's log and the wallet's ledger must agree.

The wallet holds a seated player's chips in ``escrow/<table>/<player>``; the table's log says
how many chips they have there. The two agree at every point the money paths leave them:

* between hands, the escrow's posted balance is the player's stack;
* during a hand, the wallet has reserved (a pending debit, not posted) the stack each player
  dealt in had at its start, and the engine keeps a seat's ``stack`` at its start value until
  the hand ends: the posted balance is still the stack;
* after the log ended a hand and before the wallet settled it (the dealer does so right after),
  the posted balance is the stack the hand started with, the log's the one it ended with. Such
  a player is not compared until the settlement (``settling``).

A seat whose escrow differs is a drift (``EscrowDrift``): chips moved behind the table's back
(an escrow emptied by a cash-out the table never asked for), or a table that shows chips the
wallet does not hold. Nothing here moves money: an operator must act.

``drifts`` is the comparison of one table; ``check_tables`` runs it over folded table logs
and the ledger's state (``pokerctl ledger audit``); the table service's escrow reconciliation
runs ``drifts`` with the wallet's escrows (``services.table.reconcile``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from openpoker.dispute.evidence import LoggedEnvelope
from openpoker.ledger import accounts
from openpoker.ledger.decider import LedgerState
from openpoker.ledger.events import HandStatus
from openpoker.ledger.hands import hand_key
from openpoker.tablelog.model import TableModel
from openpoker.tablelog.store import decode_events


@dataclass(frozen=True, slots=True, kw_only=True)
class EscrowDrift:
    """A seated player whose escrow is not their stack."""

    table_id: str
    player: str
    stack: int  # the chips the table's log gives them
    escrow: int  # the posted balance of escrow/<table>/<player>

    def describe(self) -> str:
        return (
            f"escrow drift at table {self.table_id}: {self.player} has {self.stack} at the table, "
            f"{self.escrow} in escrow/{self.table_id}/{self.player}"
        )

    def as_dict(self) -> dict[str, object]:
        return {"table": self.table_id, "player": self.player, "stack": self.stack, "escrow": self.escrow}


class LogUnfoldable(ValueError):
    """A table's log holds an envelope that does not fold (foreign or forged): its stacks cannot
    be compared; ``pokerctl replay`` names what is wrong with it."""


def fold_log(table_id: str, log: Sequence[LoggedEnvelope]) -> TableModel:
    """The table as its log folds it (no check: ``pokerctl replay`` checks the log); an envelope
    that does not fold is ``LogUnfoldable``."""
    model = TableModel(table_id=table_id)
    for logged in log:
        env = logged.envelope
        try:
            model.apply(
                decode_events(env),
                version=env.version,
                sequence=logged.sequence,
                envelope_hash=env.hash,
                command_id=env.command_id,
                recorded_at=env.recorded_at,
            )
        except Exception as exc:  # any event the engine cannot fold: a finding, not a crash
            raise LogUnfoldable(
                f"table {table_id}: its log does not fold at version {env.version} ({exc!r}); "
                f"run pokerctl replay --table {table_id}"
            ) from exc
    return model


def seat_stacks(model: TableModel) -> dict[str, int]:
    """Each seated player's stack as the log folds it (during a hand: at its start)."""
    state = model.state
    if state is None:
        return {}
    return {occ.player: occ.stack for occ in state.seats.values()}


def in_hand(model: TableModel) -> bool:
    """A hand is in progress in the log."""
    return model.state is not None and model.state.hand is not None


def drifts(
    table_id: str,
    *,
    stacks: Mapping[str, int],
    escrows: Mapping[str, int],
    skip: Iterable[str] = (),
) -> list[EscrowDrift]:
    """The seated players (``stacks``) whose escrow's posted balance (``escrows``; absent: 0)
    differs from their stack, but those in ``skip`` (not comparable now), by player."""
    skipped = frozenset(skip)
    return [
        EscrowDrift(table_id=table_id, player=player, stack=stack, escrow=escrows.get(player, 0))
        for player, stack in sorted(stacks.items())
        if player not in skipped and escrows.get(player, 0) != stack
    ]


@dataclass(slots=True, kw_only=True)
class EscrowCheck:
    drifts: list[EscrowDrift] = field(default_factory=list)
    tables: int = 0  # tables compared (in whole or in part)
    seats: int = 0  # seats compared
    settling: list[str] = field(default_factory=list)  # tables whose last hand awaits the wallet

    @property
    def ok(self) -> bool:
        return not self.drifts

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "tables": self.tables,
            "seats": self.seats,
            "settling": list(self.settling),
            "drifts": [d.as_dict() for d in self.drifts],
        }


def _settling(model: TableModel, ledger: LedgerState) -> bool:
    """The log ended its last hand, and the wallet has not settled or voided it yet."""
    if in_hand(model) or model.hands_total == 0:
        return False
    record = model.hand_number(model.hands_total)
    if record is not None and record.voided:
        return False  # the stacks are the hand's start stacks again, reserved or not
    hand = ledger.hands.get(hand_key(model.table_id, model.hands_total))
    return hand is None or hand.status is HandStatus.OPEN


def check_tables(models: Iterable[TableModel], ledger: LedgerState) -> EscrowCheck:
    """``drifts`` for every table, with the escrows of ``ledger``. Read the ledger before the
    logs: a hand the log ended after the ledger was read is then one the wallet has not settled
    (``settling``), never the other way round."""
    out = EscrowCheck()
    for model in models:
        stacks = seat_stacks(model)
        if not stacks:
            continue
        if _settling(model, ledger):
            out.settling.append(model.table_id)
            continue
        out.tables += 1
        out.seats += len(stacks)
        escrows = {
            # The account's name as the wallet writes it (not re-validated: a log is evidence).
            player: ledger.accounts.get(f"escrow/{model.table_id}/{player}", accounts.Balances()).balance
            for player in stacks
        }
        out.drifts.extend(drifts(model.table_id, stacks=stacks, escrows=escrows))
    return out
