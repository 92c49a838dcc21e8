"""Differential tests against pokerkit 0.7.7, both ways, under the phh profile.

(a) pokerkit plays random legal hands (NT, FT, PO, NS; 2 to 9 players; varied stacks with many
    all-ins; antes and straddles sometimes); the engine replays each one from its PHH form and
    must reach pokerkit's finishing stacks.
(b) the engine's random players play hands; each is written as PHH (``dump_phh``) and replayed
    by pokerkit strictly (every action applied as written, warnings as errors, no repair); the
    stacks must match the engine's ``HandEnded``.

Seeded, so a failure names a reproducible hand.
"""

from __future__ import annotations

import random

import pytest

from openpoker.engine import phh
from openpoker.engine.phh_replay import history_from_events, replay_history
from tests.engine.players import VARIANTS, play_random, pokerkit_hand, random_setup, strict_pokerkit_stacks

HANDS_PER_VARIANT = 200


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # pokerkit's own notices while it plays
@pytest.mark.parametrize("variant", VARIANTS)
def test_engine_replays_pokerkit_hands(variant: str) -> None:
    rng = random.Random(f"pokerkit->engine {variant}")
    for k in range(HANDS_PER_VARIANT):
        n = 2 + k % 8
        hand = pokerkit_hand(rng, variant, n)
        got = replay_history(hand.history, repair=False)
        assert got == hand.stacks, f"hand {k}:\n{phh.dump_phh(hand.history)}"


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_pokerkit_replays_engine_hands_strictly(variant: str) -> None:
    rng = random.Random(f"engine->pokerkit {variant}")
    all_ins = 0
    for k in range(HANDS_PER_VARIANT):
        setup = random_setup(rng, variant=variant, n=2 + k % 8)
        _, events, _ = play_random(setup, rng)
        history = history_from_events(events)
        text = phh.dump_phh(history)
        assert strict_pokerkit_stacks(text) == history.finishing_stacks, f"hand {k}:\n{text}"
        all_ins += any(getattr(e, "all_in", False) for e in events)
    assert all_ins > HANDS_PER_VARIANT // 4  # the generator really exercises all-ins
