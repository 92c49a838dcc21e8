"""Replies read a live hand's log through the table's cached, incremental scan
(``TableModel.hand_scan``): every view built that way equals the view built from a scan of the
whole log, through random hands with bets, raises, folds, time-outs, shows and mucks."""

from __future__ import annotations

import random
from typing import Any

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.cards import STANDARD_DECK
from openpoker.services.table import mapping
from openpoker.tablelog.model import ActionEntry, HandLogScan, TableModel, actions
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import DEALER, FakeWallet, act, create, join, rid, serve, start_hand

PLAYERS = ("ann", "bob", "cat")


def _fresh(model: TableModel, viewer: str | None) -> pb.Table:
    """The view with the cache dropped: a scan of the whole log."""
    model.scan = None
    return mapping.table_view(model, viewer)


def _check(model: TableModel) -> None:
    for viewer in (*PLAYERS, None):
        cached = mapping.table_view(model, viewer)
        assert cached == _fresh(model, viewer)
    # and the cached scan matches a whole-log scan field by field
    scan, whole = model.hand_scan(), HandLogScan(list(model.hand_log)).catch_up()
    assert scan.actions.entries == whole.actions.entries == actions(model.hand_log)
    assert (scan.showdown, scan.commitment, scan.shown, scan.awarded, scan.rake) == (
        whole.showdown,
        whole.commitment,
        whole.shown,
        whole.awarded,
        whole.rake,
    )


def _move(rng: random.Random, legal: pb.LegalActions) -> tuple[pb.ActionType.ValueType, int]:
    kinds = list(legal.actions)
    kind = rng.choice(kinds)
    if kind in (pb.ACTION_TYPE_BET, pb.ACTION_TYPE_RAISE):
        return kind, rng.randint(legal.min_raise_to, min(legal.max_raise_to, legal.min_raise_to + 20))
    return kind, 0


async def test_cached_scan_views_equal_whole_log_views() -> None:
    wallet = FakeWallet(cash=dict.fromkeys(PLAYERS, 10**6))
    svc = await serve(MemoryTableEvents(), wallet)
    try:
        await create(svc.stub)
        for seat, player in enumerate(PLAYERS, start=1):
            await join(svc.stub, player, seat, buy_in=200)
        model = await svc.app.model("t1")
        rng = random.Random(11)
        entries: list[ActionEntry] = []
        for h in range(12):
            if sum(s.stack > 0 for s in mapping.table_view(model, None).seats) < 2:
                break
            deck = list(STANDARD_DECK)
            rng.shuffle(deck)
            await start_hand(svc.stub, f"h{h}", deck=deck)
            _check(model)
            while (hand := model.current_hand) is not None:
                view = mapping.table_view(model, None)
                legal = view.current_hand.to_act
                if not legal.seat:
                    break
                if rng.random() < 0.15:  # the dealer times the seat out
                    await svc.stub.TimeOutSeat(
                        pb.TimeOutSeatRequest(
                            request_id=rid(),
                            table="tables/t1",
                            hand_id=hand.hand_id,
                            seat=legal.seat,
                            expected_version=model.version,
                        ),
                        metadata=DEALER,
                    )
                else:
                    player = next(s.player_id for s in view.seats if s.seat == legal.seat)
                    kind, amount = _move(rng, legal)
                    reply = await act(svc.stub, player, kind, amount)
                    assert reply.table == mapping.table_view(model, player)
                _check(model)
            _check(model)
            entries += actions(model.hand_log)
        # the session exercised what the scan folds
        assert {"fold", "check", "call", "bet", "raise"} <= {e.kind for e in entries}
        assert any(e.automatic for e in entries)
    finally:
        await svc.stop()


def test_scan_notices_a_replaced_or_rewritten_log() -> None:
    first, second = object(), object()
    log: list[Any] = [first]
    scan = HandLogScan(log).catch_up()
    assert scan.covers(log)
    log.append(second)
    assert scan.covers(log)  # appended to: read on from where it stopped
    assert not scan.covers(list(log))  # another list (a new hand, a reload): scan anew
    scan.catch_up()
    log[1] = first
    assert not scan.covers(log)  # the last event read was replaced: scan anew
    log[1] = second
    del log[1]
    assert not scan.covers(log)  # shorter than what was read
