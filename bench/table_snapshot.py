"""Table snapshots of a long-lived table: encode and decode time and size, by part.

One table of three players plays ``hands`` hands through the engine (``decide`` + the service's
fold, ``TableModel.apply``; no I/O): alternately folded round to the big blind and checked down
to a showdown, 4-9 envelopes per hand. The same events are folded into two models:

* ``kept``: the service as it is, the latest ``HANDS_KEPT`` hands indexed;
* ``all``: the peer, every hand indexed (what snapshots held before format 3).

Times are the best of several rounds in process CPU time (``time.process_time``), so that other
work on a shared machine does not count. The parts are the JSON sizes of the snapshot's fields
and of the engine state's hand ids (``recent_hand_ids``: the latest ``HAND_IDS_KEPT`` since
snapshot format 4; every id the table had used before, 229 KB at 20,000 hands). Both models
run the same engine, so its window is in both.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from typing import Any

from openpoker.engine import hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import STANDARD_DECK
from openpoker.engine.errors import NothingToCall
from openpoker.engine.hand_events import Act, ActionKind
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from openpoker.engine.table_events import OpenTable, SitDown, StartHand
from openpoker.tablelog import model as table_model
from openpoker.tablelog import snapshot
from openpoker.tablelog.model import TableModel

NL = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)
AT = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
EVERY_HAND = 10**9


def played(hands: int) -> tuple[TableModel, TableModel]:
    """(kept, all): the same log folded with the latest ``HANDS_KEPT`` hands and with all."""
    kept_n = table_model.HANDS_KEPT
    kept, every = TableModel(table_id="t1"), TableModel(table_id="t1")
    version = 0

    def run(command: tbl.Command) -> None:
        nonlocal version
        events = tbl.decide(kept.state, command)
        version += 1
        for model, window in ((kept, kept_n), (every, EVERY_HAND)):
            table_model.HANDS_KEPT = window
            model.apply(
                events,
                version=version,
                sequence=2 * version,
                envelope_hash=version.to_bytes(32, "big"),
                command_id=f"t1-r{version}",
                recorded_at=AT,
            )
        table_model.HANDS_KEPT = kept_n

    run(OpenTable(table_id="t1", rules=NL))
    for seat in (0, 2, 4):
        run(SitDown(seat=seat, player=f"p{seat}", buy_in=200))
    for n in range(1, hands + 1):
        run(StartHand(hand_id=f"t1-h{n}", deck=STANDARD_DECK))
        while (hs := kept.state.hand if kept.state else None) is not None:
            actor = hand.to_act(hs)
            assert actor is not None
            try:
                run(Act(seat=actor, action=ActionKind.FOLD if n % 2 else ActionKind.CALL, amount=0))
            except NothingToCall:
                run(Act(seat=actor, action=ActionKind.CHECK, amount=0))
    return kept, every


def _best_ms(f: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        f()
        best = min(best, time.process_time() - t0)
    return round(best * 1000, 2)


def _figures(model: TableModel, rounds: int) -> dict[str, Any]:
    data = snapshot.encode(model)
    doc = json.loads(data)
    return {
        "encode_ms": _best_ms(lambda: snapshot.encode(model), rounds),
        "decode_ms": _best_ms(lambda: snapshot.decode(data), rounds),
        "bytes": len(data),
        "hand_records": len(doc["hands"]),
        "parts_bytes": {
            k: len(json.dumps(doc[k], separators=(",", ":")))
            for k in ("hands", "requests", "hand_log", "state")
        },
        "engine_hand_ids_bytes": len(json.dumps(doc["state"]["recent_hand_ids"], separators=(",", ":"))),
        "engine_state_ms": _best_ms(lambda: tbl.to_snapshot(model.state) if model.state else None, rounds),
    }


def run(quick: bool) -> dict[str, Any]:
    sizes = (200, 1_000) if quick else (5_000, 20_000)
    rounds = 3 if quick else 7
    out: dict[str, Any] = {"hands_kept": table_model.HANDS_KEPT, "hand_ids_kept": tbl.HAND_IDS_KEPT}
    for hands in sizes:
        kept, every = played(hands)
        out[f"hands_{hands}"] = {
            "envelopes": kept.version,
            "kept": _figures(kept, rounds),
            "all": _figures(every, rounds),
        }
    return out


if __name__ == "__main__":
    print(json.dumps(run(quick=False), indent=1))
