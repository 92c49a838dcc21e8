"""Snapshots of a folded table at hand boundaries: a cache to start faster, never evidence.

A snapshot is JSON (``FORMAT``) of a ``TableModel`` taken between hands (no hand live): the
engine's ``TableState`` fields, the log position, the request ids remembered and the hand index.
It is tagged (``eventstore.Snapshot``) with the last stream sequence and the engine version; a
reader uses it only if the engine version matches, and then folds the log after its sequence.
The dispute replay never reads snapshots: it re-folds the log.

``TableState`` is the engine's private state; rebuilding it here is the one place outside the
engine that writes it, and ``tests/services/table/test_snapshot.py`` checks that a restored
state equals the fold of the log (``TableState.snapshot()``) for every hand boundary.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import OrderedDict
from typing import Any

from engine import codec, table
from engine.seating import Debt, SeatStatus
from services.table.model import HandRecord, Left, Outcome, TableModel

FORMAT = 1
SNAPSHOT_REQUESTS = 1_000  # request ids kept in a snapshot (retries come within seconds)


class SnapshotUnusable(Exception):
    """The snapshot cannot be used (other format, or taken mid-hand): fold the log instead."""


def _enc(value: object) -> Any:
    return None if value is None else codec.encode(value)


def encode(model: TableModel) -> bytes:
    s = model.state
    if s is None or s.hand is not None:
        raise SnapshotUnusable("snapshots are taken between hands")
    doc = {
        "format": FORMAT,
        "table_id": model.table_id,
        "version": model.version,
        "sequence": model.sequence,
        "last_hash": model.last_hash.hex(),
        "epoch": model.epoch,
        "owner": model.owner,
        "created_at": model.created_at.isoformat() if model.created_at else "",
        "requests": [
            [
                rid,
                o.version,
                o.seated,
                [[x.seat, x.player, x.chips] for x in o.left],
                o.pending_leave,
                o.hand_id,
            ]
            for rid, o in list(model.requests.items())[-SNAPSHOT_REQUESTS:]
        ],
        "hands": [
            [
                h.hand_id,
                h.number,
                h.first_version,
                h.first_sequence,
                h.last_version,
                h.last_sequence,
                h.voided,
            ]
            for h in (model.hands[i] for i in model.hand_order)
        ],
        "hand_log": [codec.encode(e) for e in model.hand_log],
        "left_log": [[v, x.seat, x.player, x.chips] for v, x in model.left_log],
        "state": {
            "rules": codec.encode(s.rules),
            "seats": [
                [seat, o.player, o.stack, o.status.value, o.debt.value, o.arrival, o.leaving, o.disconnected]
                for seat, o in sorted(s.seats.items())
            ],
            "arrivals": s.arrivals,
            "last": _enc(s.last),
            "plan": _enc(s.plan),
            "hand_events": [codec.encode(e) for e in s.hand_events],
            "hand_ids": sorted(s.hand_ids),
            "hands_played": s.hands_played,
            "protections": {k: list(v) for k, v in s.protections.items()},
            "left_debts": {k: v.value for k, v in s.left_debts.items()},
            "bought_in": s.bought_in,
            "taken_off": s.taken_off,
            "rake": s.rake,
        },
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def decode(data: bytes) -> TableModel:
    doc = json.loads(data)
    if doc.get("format") != FORMAT:
        raise SnapshotUnusable(f"format {doc.get('format')!r}")
    st = doc["state"]
    s = table.TableState(table_id=doc["table_id"], rules=codec.decode(st["rules"]))
    for seat, player, stack, status, debt, arrival, leaving, disconnected in st["seats"]:
        occ = table._Seat(
            player=player, stack=stack, status=SeatStatus(status), debt=Debt(debt), arrival=arrival
        )
        occ.leaving, occ.disconnected = leaving, disconnected
        s.seats[seat] = occ
    s.arrivals = st["arrivals"]
    s.last = None if st["last"] is None else codec.decode(st["last"])
    s.plan = None if st["plan"] is None else codec.decode(st["plan"])
    s.hand_events = [codec.decode(e) for e in st["hand_events"]]
    s.hand_ids = set(st["hand_ids"])
    s.hands_played = st["hands_played"]
    s.protections = {k: list(v) for k, v in st["protections"].items()}
    s.left_debts = {k: Debt(v) for k, v in st["left_debts"].items()}
    s.bought_in, s.taken_off, s.rake = st["bought_in"], st["taken_off"], st["rake"]
    model = TableModel(
        table_id=doc["table_id"],
        state=s,
        version=doc["version"],
        sequence=doc["sequence"],
        last_hash=bytes.fromhex(doc["last_hash"]),
        epoch=doc["epoch"],
        owner=doc["owner"],
        created_at=dt.datetime.fromisoformat(doc["created_at"]) if doc["created_at"] else None,
    )
    model.requests = OrderedDict(
        (
            rid,
            Outcome(
                version=v,
                seated=seated,
                left=tuple(Left(seat=a, player=b, chips=c) for a, b, c in left),
                pending_leave=pending,
                hand_id=hand_id,
            ),
        )
        for rid, v, seated, left, pending, hand_id in doc["requests"]
    )
    for hand_id, number, fv, fs, lv, ls, voided in doc["hands"]:
        model.hands[hand_id] = HandRecord(
            hand_id=hand_id,
            number=number,
            first_version=fv,
            first_sequence=fs,
            last_version=lv,
            last_sequence=ls,
            voided=voided,
        )
        model.hand_order.append(hand_id)
    model.hand_log = [codec.decode(e) for e in doc["hand_log"]]
    model.left_log.extend((v, Left(seat=a, player=b, chips=c)) for v, a, b, c in doc["left_log"])
    return model
