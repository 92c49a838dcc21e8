"""A table's track saved between hands, so a restarted dealer folds only the log after it.

A checkpoint is JSON (``FORMAT``) of a ``tracker.TableTrack`` taken when no hand is live: the
engine state (``engine.table.to_snapshot``), the log position it covers (table version, stream
sequence, last envelope hash), the hand count and the last hand's record (its ``HandStarted``
and ``HandEnded``, which the driver needs to settle and reveal it again after a restart). Like
the table service's snapshots it is a cache, never evidence: ``decode`` refuses a document of
another format or engine version, or one it cannot read (``CheckpointUnusable``), and the feed
then folds that table's log; the feed also checks that the envelope at the covered sequence is
the one the checkpoint names before it trusts it (``feed.Startup``).
"""

from __future__ import annotations

import json
from typing import Any

from openpoker.engine import codec
from openpoker.engine import table as engine_table
from openpoker.engine.hand_events import HandEnded, HandStarted
from openpoker.engine.version import ENGINE_VERSION
from openpoker.services.dealer.tracker import HandRecord, TableTrack

FORMAT = 1
EVERY = 100  # table versions between two checkpoints of a table (the first is taken at once)


class CheckpointUnusable(Exception):
    """The checkpoint cannot be used (another format or engine, corrupt, mid-hand)."""


def between_hands(track: TableTrack) -> bool:
    return track.state is not None and track.state.hand is None


def encode(track: TableTrack) -> bytes:
    state = track.state
    if state is None or state.hand is not None:
        raise CheckpointUnusable("checkpoints are taken between hands")
    h = track.current
    doc = {
        "format": FORMAT,
        "engine": ENGINE_VERSION,
        "table_id": track.table_id,
        "version": track.version,
        "sequence": track.sequence,
        "last_hash": track.last_hash.hex(),
        "skipped": track.skipped,
        "hands": track.hands,
        "current": None if h is None else _hand_doc(h),
        "state": engine_table.to_snapshot(state),
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def _hand_doc(h: HandRecord) -> dict[str, Any]:
    return {
        "hand_id": h.hand_id,
        "number": h.number,
        "first_version": h.first_version,
        "started": None if h.started is None else codec.encode(h.started),
        "ended": None if h.ended is None else codec.encode(h.ended),
        "voided": h.voided,
        "saw_flop": h.saw_flop,
        "events": h.events,
    }


def decode(data: bytes, table_id: str) -> TableTrack:
    """The track ``data`` holds for ``table_id``; ``CheckpointUnusable`` if it is not one."""
    try:
        doc = json.loads(data)
        if not isinstance(doc, dict):
            raise CheckpointUnusable("not a document")
        if doc.get("format") != FORMAT:
            raise CheckpointUnusable(f"format {doc.get('format')!r}")
        if doc.get("engine") != ENGINE_VERSION:
            raise CheckpointUnusable(f"engine {doc.get('engine')!r}")
        if doc["table_id"] != table_id:
            raise CheckpointUnusable(f"table {doc['table_id']!r}")
        track = TableTrack(
            table_id=table_id,
            state=engine_table.from_snapshot(table_id, doc["state"]),
            version=_int(doc["version"]),
            sequence=_int(doc["sequence"]),
            last_hash=bytes.fromhex(doc["last_hash"]),
            skipped=_int(doc["skipped"]),
            hands=_int(doc["hands"]),
            current=None if doc["current"] is None else _hand(doc["current"]),
        )
    except CheckpointUnusable:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, codec.CodecError) as exc:
        raise CheckpointUnusable(f"unreadable: {exc!r}") from exc
    if track.version < 1 or track.sequence < 1:
        raise CheckpointUnusable("covers no envelope")
    return track


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CheckpointUnusable(f"not a count: {value!r}")
    return value


def _hand(doc: dict[str, Any]) -> HandRecord:
    started = None if doc["started"] is None else codec.decode(doc["started"])
    ended = None if doc["ended"] is None else codec.decode(doc["ended"])
    if started is not None and not isinstance(started, HandStarted):
        raise CheckpointUnusable("started is no HandStarted")
    if ended is not None and not isinstance(ended, HandEnded):
        raise CheckpointUnusable("ended is no HandEnded")
    return HandRecord(
        hand_id=str(doc["hand_id"]),
        number=_int(doc["number"]),
        first_version=_int(doc["first_version"]),
        started=started,
        ended=ended,
        voided=bool(doc["voided"]),
        saw_flop=bool(doc["saw_flop"]),
        events=_int(doc["events"]),
    )
