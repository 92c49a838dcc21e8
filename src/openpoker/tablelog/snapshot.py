"""Snapshots of a folded table at hand boundaries: a cache to start faster, never evidence.

A snapshot is JSON (``FORMAT``) of a ``TableModel`` taken between hands (no hand live): the
engine's ``TableState`` fields, the log position, the latest request ids and the index of the
latest hands (``model.HANDS_KEPT``, with the count of all hands: older hands are found in the
log) and the engine's state (which remembers the latest ``engine.table.HAND_IDS_KEPT`` hand
ids since format 4), so its size does not grow with the number of hands played.
It is tagged (``eventstore.Snapshot``) with the last stream sequence and the engine version; a
reader uses it only if the engine version matches, and then folds the log after its sequence.
The dispute replay never reads snapshots: it re-folds the log.

The engine state goes through the engine's own snapshot API (``engine.table.to_snapshot`` /
``from_snapshot``, the same document as before under ``"state"``);
``tests/services/table/test_restart_fencing.py`` checks that a restored model equals the fold
of the log (``TableState.snapshot()``) at every hand boundary.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import OrderedDict
from itertools import islice

from openpoker.engine import codec, table
from openpoker.tablelog import model as table_model
from openpoker.tablelog.events import BuyInIntended
from openpoker.tablelog.model import HandRecord, Left, Outcome, TableModel

# 2: a left player's chips carry the hand they come out of (after_hand).
# 3: only the latest HANDS_KEPT hands are indexed, plus "hands_total" (the count of all hands).
# 4: the engine state remembers the latest ``engine.table.HAND_IDS_KEPT`` hand ids in scheduling
#    order ("recent_hand_ids"), no longer every id the table used ("hand_ids", sorted).
FORMAT = 4
# Formats ``decode`` still reads. A format-3 document's engine state holds every hand id without
# their order; its index of the latest hands ("hands", in order) gives the order of the latest
# ones (``engine.table.from_snapshot(hand_order=...)``).
READABLE = (3, FORMAT)
SNAPSHOT_REQUESTS = 1_000  # request ids kept in a snapshot (retries come within seconds)
# A request's outcome is [id, version, seated, left, pending leave, hand id, cleared]; "cleared"
# (protections an operator's reset cleared) may be missing in a document: 0.


class SnapshotUnusable(Exception):
    """The snapshot cannot be used (other format, or taken mid-hand): fold the log instead."""


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
                [[x.seat, x.player, x.chips, x.after_hand] for x in o.left],
                o.pending_leave,
                o.hand_id,
                o.cleared,
            ]
            # The latest ones, oldest first, without copying all REQUESTS_KEPT of them first.
            for rid, o in reversed(list(islice(reversed(model.requests.items()), SNAPSHOT_REQUESTS)))
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
        "hands_total": model.hands_total,
        "hand_log": [codec.encode(e) for e in model.hand_log],
        "left_log": [[v, x.seat, x.player, x.chips, x.after_hand] for v, x in model.left_log],
        "intents": [codec.encode(i) for i in model.intents.values()],
        "owed": [codec.encode(i) for i in model.owed.values()],
        "state": table.to_snapshot(s),
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def decode(data: bytes) -> TableModel:
    doc = json.loads(data)
    if doc.get("format") not in READABLE:
        raise SnapshotUnusable(f"format {doc.get('format')!r}")
    try:
        s = table.from_snapshot(doc["table_id"], doc["state"], hand_order=[h[0] for h in doc["hands"]])
    except table.SnapshotLayoutUnknown as exc:  # an index too short to order the latest ids
        raise SnapshotUnusable(str(exc)) from exc
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
                left=tuple(Left(seat=a, player=b, chips=c, after_hand=n) for a, b, c, n in left),
                pending_leave=pending,
                hand_id=hand_id,
                cleared=rest[0] if rest else 0,
            ),
        )
        for rid, v, seated, left, pending, hand_id, *rest in doc["requests"]
    )
    model.hands_total = doc["hands_total"]
    # The fold keeps the latest HANDS_KEPT hands; so does a restored model (should it change).
    for hand_id, number, fv, fs, lv, ls, voided in doc["hands"][-max(1, table_model.HANDS_KEPT) :]:
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
    model.left_log.extend(
        (v, Left(seat=a, player=b, chips=c, after_hand=n)) for v, a, b, c, n in doc["left_log"]
    )
    for key, into in (("intents", model.intents), ("owed", model.owed)):
        for doc_intent in doc.get(key, ()):  # none in snapshots older than the intents
            intent = codec.decode(doc_intent)
            assert isinstance(intent, BuyInIntended)
            into[intent.request_id] = intent
    return model
