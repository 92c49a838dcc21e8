"""``pokerctl replay``'s text of a time-out decided with protections used at other tables: the
dispute desk reads why a disconnected player with chips in was folded."""

from __future__ import annotations

from openpoker.dispute.check import HandReplay
from openpoker.dispute.history import hand_lines
from openpoker.engine.table_events import HandScheduled
from tests.engine.test_table import HOUR
from tests.engine.test_table_allowance import _disconnected_time_out, _three_players


def _last_hand_text(elsewhere: int) -> str:
    t = _three_players()
    _disconnected_time_out(t, 1 * HOUR, elsewhere=elsewhere)
    start = max(i for i, e in enumerate(t.log) if isinstance(e, HandScheduled))
    h = HandReplay(
        table_id="t1",
        hand_id=t.plan().hand_id,
        number=t.hands,
        first_version=1,
        events=list(enumerate(t.log[start:])),
    )
    return "\n".join(hand_lines(h))


def test_the_history_says_what_counted_elsewhere() -> None:
    text = _last_hand_text(2)
    assert "p1 timed out (disconnected; 2 all-in protection(s) used at other tables): folded" in text
    assert "seat 1 p1 timed out (disconnected): protected" in _last_hand_text(0)
