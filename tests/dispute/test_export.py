"""PHH export of a hand with a dead small blind (HOUSE_RULES "Missed blinds"): the dead money is
the player's ``antes`` entry and the live big blind a negative ``blinds_or_straddles`` entry, as
pokerkit reads them; the file replays in pokerkit 0.7.7 to the stacks the table recorded and
``pokerctl phh replay`` accepts it."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from pokerkit import HandHistory as PkHandHistory
from pokerkit.notation import parse_action

from openpoker.dispute.check import HandReplay
from openpoker.dispute.export import Skip, export_hand
from openpoker.engine.hand_events import ForcedBetPosted, PotAwarded
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.phh import HandHistory, dump_phh
from openpoker.engine.table_events import SitDown, SitIn, SitOut
from openpoker.pokerctl.__main__ import main
from tests.dispute.test_check import Built


def _pokerkit_stacks(text: str, h: HandReplay | None) -> list[int]:
    """pokerkit's finishing stacks, strictly (a warning fails); with ``h``, charging the rake
    ``h`` recorded, per pot as pokerkit rakes."""
    awarded = [] if h is None else [e for _, e in h.hand_events() if isinstance(e, PotAwarded)]
    per_pot = {e.amount: e.rake for e in awarded}
    single = awarded[0].rake if len(awarded) == 1 else None

    def rake(amount: int, _state: Any) -> tuple[int, int]:
        r = min(single, amount) if single is not None else per_pot.get(amount, 0)
        return r, amount - r

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="There is no reason for this player to fold")
        hh = PkHandHistory.loads(text, rake=rake) if h is not None else PkHandHistory.loads(text)
        state = hh.create_state()
        for action in hh.actions:
            while state.can_burn_card():
                state.burn_card("??")
            parse_action(state, action, hh.parse_value)
    assert not state.status
    return [int(s) for s in state.stacks]


def _dead_blind_hands(seed: int) -> list[HandReplay]:
    """Four players; dan sits out for two hands (his big blind passes) and comes back."""
    built = Built(hands=0, seed=seed)
    built.append([SitDown(seat=3, player="dan", buy_in=200)])
    number = 0
    for step in ("play", "out", "play", "play", "in", "play", "play"):
        if step == "out":
            built.append([SitOut(seat=3)])
        elif step == "in":
            built.append([SitIn(seat=3, wait_for_big_blind=False)])
        else:
            number += 1
            built.play(number)
    replay = built.replay()
    assert replay.ok, replay.failure
    return [
        h
        for h in replay.hands
        if any(
            isinstance(e, ForcedBetPosted) and e.kind is PostKind.DEAD_SMALL_BLIND for _, e in h.hand_events()
        )
    ]


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_dead_small_blind_exports_and_replays_in_pokerkit_to_the_recorded_stacks(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hands = _dead_blind_hands(seed)
    assert len(hands) == 1
    h = hands[0]
    hh = export_hand(h)
    assert not isinstance(hh, Skip), hh
    assert isinstance(hh, HandHistory)
    assert hh.players is not None
    dan = hh.players.index("dan")
    assert hh.antes is not None
    assert hh.blinds_or_straddles is not None
    assert (hh.antes[dan], hh.blinds_or_straddles[dan]) == (1, -2)  # dead 1, live 2 at blinds 1/2
    assert sum(hh.antes) == 1
    assert h.ended is not None
    by_seat = {s.seat: s.amount for s in h.ended.stacks}
    recorded = [by_seat[s - 1] for s in hh.seats or ()]
    text = dump_phh(hh)
    assert list(hh.finishing_stacks or ()) == recorded
    assert _pokerkit_stacks(text, h) == recorded
    # Without the rake (PHH has no rake field): pokerctl phh replay agrees with pokerkit.
    path = tmp_path / "dead.phh"
    path.write_text(text, encoding="utf-8")
    code = main(["phh", "replay", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    unraked = _pokerkit_stacks(text, None)
    assert out[0] == f"{path} #0 NT: " + " ".join(str(s) for s in unraked)
    assert sum(unraked) == sum(recorded) + h.ended.rake
