"""The table remembers the latest ``HAND_IDS_KEPT`` hand ids, in scheduling order: it refuses a
reused one among them, its state and snapshot stay the same size however many hands it plays,
and every fold of one log (from the start, or from a snapshot of either layout) agrees."""

from __future__ import annotations

import json

import pytest

from openpoker.engine import hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import deck_for_size
from openpoker.engine.hand_events import Act, ActionKind, HandEnded
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from openpoker.engine.table_events import HandScheduled, OpenTable, SitDown, StartHand

KEPT = 5
RULES = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)


@pytest.fixture
def few_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tbl, "HAND_IDS_KEPT", KEPT)


class Table:
    """A heads-up table driven through ``decide``; its log and its state folded as it goes."""

    def __init__(self) -> None:
        self.log: list[tbl.TableLogEvent] = []
        self.state: tbl.TableState | None = None
        self.run(OpenTable(table_id="t", rules=RULES))
        self.run(SitDown(seat=0, player="a", buy_in=200))
        self.run(SitDown(seat=1, player="b", buy_in=200))

    def run(self, command: tbl.Command) -> None:
        events = tbl.decide(self.state, command)
        self.log += events
        if self.state is None:
            self.state = tbl.fold(events)
        else:
            for e in events:
                tbl.evolve(self.state, e)

    def hand(self, hand_id: str) -> None:
        """Start ``hand_id`` and fold it at once (the first to act folds: the hand is over)."""
        self.run(StartHand(hand_id=hand_id, deck=deck_for_size(52)))
        s = self.live
        while s.hand is not None:
            seat = hand.to_act(s.hand)
            assert seat is not None
            self.run(Act(seat=seat, action=ActionKind.FOLD))

    @property
    def live(self) -> tbl.TableState:
        assert self.state is not None
        return self.state


def ids(n: int, prefix: str = "h") -> list[str]:
    return [f"{prefix}{i}" for i in range(1, n + 1)]


def round_trip(state: tbl.TableState) -> tbl.TableState:
    return tbl.from_snapshot(state.table_id, json.loads(json.dumps(tbl.to_snapshot(state))))


@pytest.mark.usefixtures("few_ids")
def test_the_latest_ids_are_kept_in_scheduling_order() -> None:
    t = Table()
    # Not in sorted order: the window follows the order hands were scheduled, not the ids.
    order = ["m", "c", "x", "a", "q", "b", "z", "d"]
    for n, hand_id in enumerate(order, 1):
        t.hand(hand_id)
        kept = order[max(0, n - KEPT) : n]
        assert list(t.live.hand_order) == kept
        assert t.live.hand_ids == set(kept)
    assert t.live.hands_played == len(order)


@pytest.mark.usefixtures("few_ids")
def test_a_reused_id_inside_the_window_is_refused() -> None:
    t = Table()
    for hand_id in ids(8):
        t.hand(hand_id)
    for recent in ids(8)[-KEPT:]:
        with pytest.raises(tbl.DuplicateHandId) as info:
            tbl.decide(t.live, StartHand(hand_id=recent, deck=deck_for_size(52)))
        assert info.value.reason == "DUPLICATE_HAND_ID"
        assert info.value.fields == {"hand_id": recent}
    # Older ids are the table service's to refuse (it checks its index and the log): the
    # engine alone no longer knows them.
    events = tbl.decide(t.live, StartHand(hand_id="h1", deck=deck_for_size(52)))
    assert isinstance(events[0], HandScheduled)
    assert events[0].hand_id == "h1"


@pytest.mark.usefixtures("few_ids")
def test_every_fold_of_a_log_remembers_the_same_ids() -> None:
    t = Table()
    for hand_id in ids(12):
        t.hand(hand_id)
    log = t.log
    whole = tbl.fold(log)
    assert whole.snapshot() == t.live.snapshot()
    assert tbl.fold(log).snapshot() == whole.snapshot()  # deterministic
    boundaries = [i + 1 for i, e in enumerate(log) if isinstance(e, HandEnded)]
    for cut in boundaries:
        restored = round_trip(tbl.fold(log[:cut]))
        assert restored.snapshot() == tbl.fold(log[:cut]).snapshot()
        for e in log[cut:]:  # a restored table goes on exactly as the fold, window included
            tbl.evolve(restored, e)
        assert restored.snapshot() == whole.snapshot()


def test_the_state_and_its_snapshot_stop_growing_with_hands() -> None:
    t = Table()
    sizes: dict[int, int] = {}
    played = [f"table-with-a-long-name-{i:06d}" for i in range(1, 3 * tbl.HAND_IDS_KEPT + 1)]
    for n, hand_id in enumerate(played, 1):
        t.hand(hand_id)
        if n in (tbl.HAND_IDS_KEPT, 2 * tbl.HAND_IDS_KEPT, 3 * tbl.HAND_IDS_KEPT):
            doc = tbl.to_snapshot(t.live)
            assert len(doc["recent_hand_ids"]) == tbl.HAND_IDS_KEPT
            assert "hand_ids" not in doc
            sizes[n] = len(json.dumps(doc))
    assert len(t.live.hand_ids) == len(t.live.hand_order) == tbl.HAND_IDS_KEPT
    first, *later = sizes.values()
    # Ids of one length: the same size to a few bytes (the stacks' and counters' digits).
    assert all(abs(size - first) < 16 for size in later), sizes


@pytest.mark.usefixtures("few_ids")
def test_a_snapshot_of_the_first_layout_restores_with_the_latest_ids() -> None:
    t = Table()
    played = ["k", "e", "y", "s", "a", "m", "p", "l"]
    for hand_id in played:
        t.hand(hand_id)
    doc = json.loads(json.dumps(tbl.to_snapshot(t.live)))
    old = {k: v for k, v in doc.items() if k != "recent_hand_ids"}
    old["hand_ids"] = sorted(played)  # the first layout: every id used, sorted
    restored = tbl.from_snapshot("t", old, hand_order=played)
    assert restored.snapshot() == t.live.snapshot()
    # The caller's index may hold only the latest hands: enough when it covers the window.
    assert tbl.from_snapshot("t", old, hand_order=played[-KEPT:]).snapshot() == t.live.snapshot()
    # A young table: every id it used is in the window.
    young = Table()
    for hand_id in played[:3]:
        young.hand(hand_id)
    young_doc = {k: v for k, v in tbl.to_snapshot(young.live).items() if k != "recent_hand_ids"}
    young_doc["hand_ids"] = sorted(played[:3])
    assert tbl.from_snapshot("t", young_doc, hand_order=played[:3]).snapshot() == young.live.snapshot()
    # Without the order, with too few ids, or with ids the table never used: refused, so that
    # the caller folds the log instead of guessing.
    for order in ([], played[-KEPT + 1 :], [*played[-KEPT:-1], "never"]):
        with pytest.raises(tbl.SnapshotLayoutUnknown):
            tbl.from_snapshot("t", old, hand_order=order)
