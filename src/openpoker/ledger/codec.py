"""Lossless JSON encoding of the wallet's events and state (the log and its snapshots).

Written out field by field rather than by reflection: the log outlives the code, so a renamed
Python attribute must not silently change what is persisted.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from openpoker.engine.rules import RakeRules
from openpoker.ledger.accounts import Balances
from openpoker.ledger.commands import PlayerAmount
from openpoker.ledger.decider import LedgerState
from openpoker.ledger.events import (
    Event,
    HandOpened,
    HandSettled,
    HandStatus,
    HandVoided,
    LedgerOpened,
    TransfersCommitted,
)
from openpoker.ledger.hands import HandRecord, hand_key
from openpoker.ledger.limits import DayTotals
from openpoker.ledger.transfers import Phase, TransferCode, TransferRecord

SNAPSHOT_VERSION = 1


def _stakes(items: tuple[PlayerAmount, ...]) -> list[list[Any]]:
    return [[s.player, s.amount] for s in items]


def _unstakes(items: list[list[Any]]) -> tuple[PlayerAmount, ...]:
    return tuple(PlayerAmount(player=str(p), amount=int(a)) for p, a in items)


def encode_rake(rake: RakeRules) -> dict[str, Any]:
    out: dict[str, Any] = {
        "basis_points": rake.basis_points,
        "caps": [list(c) for c in rake.caps],
        "no_flop_no_drop": rake.no_flop_no_drop,
    }
    if rake.unit != 1:  # written only when it matters: a unit of 1 is what older events mean
        out["unit"] = rake.unit
    return out


def decode_rake(data: dict[str, Any]) -> RakeRules:
    # The wallet checks only the rake's total: ``split`` is not recorded (it keeps its default).
    return RakeRules(
        basis_points=int(data["basis_points"]),
        caps=tuple((int(n), int(c)) for n, c in data["caps"]),
        no_flop_no_drop=bool(data["no_flop_no_drop"]),
        unit=int(data.get("unit", 1)),
    )


def encode_record(r: TransferRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": r.id,
        "phase": r.phase.value,
        "code": r.code.value,
        "debit": r.debit,
        "credit": r.credit,
        "amount": r.amount,
    }
    if r.pending_id:
        out["pending_id"] = r.pending_id
        out["released"] = r.released
    return out


def decode_record(d: dict[str, Any]) -> TransferRecord:
    return TransferRecord(
        id=d["id"],
        phase=Phase(d["phase"]),
        code=TransferCode(d["code"]),
        debit=d["debit"],
        credit=d["credit"],
        amount=int(d["amount"]),
        pending_id=d.get("pending_id", ""),
        released=int(d.get("released", 0)),
    )


def encode_event(event: Event) -> dict[str, Any]:
    match event:
        case LedgerOpened():
            return {"type": "LedgerOpened", "currency": event.currency}
        case TransfersCommitted():
            out: dict[str, Any] = {
                "type": "TransfersCommitted",
                "request_id": event.request_id,
                "transfers": [encode_record(r) for r in event.transfers],
            }
            if event.day:
                out["day"] = event.day
            return out
        case HandOpened():
            return {
                "type": "HandOpened",
                "table_id": event.table_id,
                "hand_no": event.hand_no,
                "stacks": _stakes(event.stacks),
                "rake": encode_rake(event.rake),
            }
        case HandSettled():
            return {
                "type": "HandSettled",
                "table_id": event.table_id,
                "hand_no": event.hand_no,
                "pot": event.pot,
                "rake": event.rake,
                "saw_flop": event.saw_flop,
                "players_dealt_in": event.players_dealt_in,
            }
        case HandVoided():
            return {"type": "HandVoided", "table_id": event.table_id, "hand_no": event.hand_no}
        case _:
            assert_never(event)


def decode_event(d: dict[str, Any]) -> Event:
    kind = d["type"]
    if kind == "LedgerOpened":
        return LedgerOpened(currency=d["currency"])
    if kind == "TransfersCommitted":
        return TransfersCommitted(
            request_id=d["request_id"],
            transfers=tuple(decode_record(r) for r in d["transfers"]),
            day=str(d.get("day", "")),
        )
    if kind == "HandOpened":
        return HandOpened(
            table_id=d["table_id"],
            hand_no=int(d["hand_no"]),
            stacks=_unstakes(d["stacks"]),
            rake=decode_rake(d["rake"]),
        )
    if kind == "HandSettled":
        return HandSettled(
            table_id=d["table_id"],
            hand_no=int(d["hand_no"]),
            pot=int(d["pot"]),
            rake=int(d["rake"]),
            saw_flop=bool(d["saw_flop"]),
            players_dealt_in=int(d["players_dealt_in"]),
        )
    if kind == "HandVoided":
        return HandVoided(table_id=d["table_id"], hand_no=int(d["hand_no"]))
    raise ValueError(f"unknown wallet event type {kind!r}")


def dump_events(events: tuple[Event, ...] | list[Event]) -> bytes:
    """One log message: the events of one command, in order."""
    body = {"events": [encode_event(e) for e in events]}
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def load_events(data: bytes) -> list[Event]:
    return [decode_event(e) for e in json.loads(data)["events"]]


def encode_state(state: LedgerState) -> dict[str, Any]:
    """A canonical dict of the whole state: snapshots, and equality of rebuilds in tests."""
    return {
        "version": SNAPSHOT_VERSION,
        "currency": state.currency,
        "commands": state.commands,
        "accounts": {
            k: [b.debits_pending, b.debits_posted, b.credits_pending, b.credits_posted]
            for k, b in sorted(state.accounts.items())
        },
        "transfers": [encode_record(r) for r in state.transfers.values()],
        "resolved": dict(sorted(state.resolved.items())),
        "hands": [
            {
                "table_id": h.table_id,
                "hand_no": h.hand_no,
                "stacks": _stakes(h.stacks),
                "rake_rules": encode_rake(h.rake_rules),
                "status": h.status.value,
                "pot": h.pot,
                "rake": h.rake,
                "saw_flop": h.saw_flop,
            }
            for _, h in sorted(state.hands.items())
        ],
        # Each cash account's deposits of its latest day (absent from snapshots older than the
        # daily limit, taken when no deposit was dated yet: empty is then exact).
        "deposit_days": _days(state.deposit_days),
        # Likewise for withdrawals (absent from snapshots taken before withdrawals were dated:
        # empty is then exact).
        "withdrawal_days": _days(state.withdrawal_days),
    }


def decode_state(d: dict[str, Any]) -> LedgerState:
    if d.get("version") != SNAPSHOT_VERSION:
        raise ValueError(f"unsupported wallet snapshot version {d.get('version')!r}")
    state = LedgerState(currency=d["currency"], commands=int(d["commands"]))
    for k, (dp, dpo, cp, cpo) in d["accounts"].items():
        state.accounts[k] = Balances(
            debits_pending=dp, debits_posted=dpo, credits_pending=cp, credits_posted=cpo
        )
    for r in d["transfers"]:
        record = decode_record(r)
        state.transfers[record.id] = record
    state.resolved = dict(d["resolved"])
    for h in d["hands"]:
        hand = HandRecord(
            table_id=h["table_id"],
            hand_no=int(h["hand_no"]),
            stacks=_unstakes(h["stacks"]),
            rake_rules=decode_rake(h["rake_rules"]),
            status=HandStatus(h["status"]),
            pot=int(h["pot"]),
            rake=int(h["rake"]),
            saw_flop=bool(h["saw_flop"]),
        )
        state.hands[hand_key(hand.table_id, hand.hand_no)] = hand
    state.deposit_days = _undays(d.get("deposit_days", {}))
    state.withdrawal_days = _undays(d.get("withdrawal_days", {}))
    return state


def _days(days: DayTotals) -> dict[str, list[Any]]:
    return {k: [day, total] for k, (day, total) in sorted(days.items())}


def _undays(data: dict[str, list[Any]]) -> DayTotals:
    return {k: (str(day), int(total)) for k, (day, total) in data.items()}
