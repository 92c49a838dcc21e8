"""Hypothesis properties of the hand decider over random hands, both profiles, every game.

- chips are conserved: final stacks plus rake equal the starting stacks, in every hand;
- fold is deterministic: folding the same events twice gives the same state, and equals the
  state evolved one event at a time;
- every event ``decide`` emits is accepted by ``evolve``;
- ``decide`` leaves the state it is given unchanged, whether it accepts or refuses a command;
- ``apply`` (decide and evolve in one pass) gives the same events and the same state.
"""

from __future__ import annotations

import contextlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine import hand as H
from openpoker.engine.errors import RuleViolation
from openpoker.engine.hand_events import Act, ActionKind, HandEnded
from openpoker.engine.rules import RakeRules
from tests.engine.players import VARIANTS, choose, random_setup


@settings(max_examples=150)
@given(
    seed=st.integers(0, 2**32),
    variant=st.sampled_from(VARIANTS),
    n=st.integers(2, 9),
    phh_profile=st.booleans(),
    rake=st.sampled_from([0, 500]),
    protect=st.sampled_from([0.0, 0.1]),
)
def test_random_hands_conserve_chips_and_decide_never_mutates(
    *, seed: int, variant: str, n: int, phh_profile: bool, rake: int, protect: float
) -> None:
    rng = random.Random(seed)
    rules_rake = RakeRules(basis_points=rake, caps=((2, 7),))
    setup = random_setup(rng, variant=variant, n=n, profile_phh=phh_profile, rake=rules_rake)
    events = H.start(setup)
    state = H.fold(events)
    while not H.is_over(state):
        seat = H.to_act(state)
        assert seat is not None
        before = state.snapshot()
        # An illegal command is refused and changes nothing.
        wrong = next(s.seat for s in setup.seats if s.seat != seat)
        with contextlib.suppress(RuleViolation):
            H.decide(state, Act(seat=wrong, action=ActionKind.CALL))
        assert state.snapshot() == before
        command: H.HandCommand
        if state.phase == H.SHOWDOWN:
            command = H.Show(seat=seat)
        else:
            legal = H.legal_actions(state, seat)
            assert legal is not None
            i = state.index_of[seat]
            if not phh_profile and rng.random() < protect and state.stack[i] < state.start_stacks[i]:
                command = H.ProtectAllIn(seat=seat)
            else:
                action, amount = choose(rng, legal)
                command = Act(seat=seat, action=action, amount=amount)
        new = H.decide(state, command)
        assert state.snapshot() == before
        twin = state.copy()
        assert H.apply(twin, command) == new  # decide and evolve in one pass: the same facts
        for event in new:
            state = H.evolve(state, event)  # accepted: no exception
        assert twin.snapshot() == state.snapshot()
        events.extend(new)
    ended = events[-1]
    assert isinstance(ended, HandEnded)
    assert sum(s.amount for s in ended.stacks) + ended.rake == sum(s.stack for s in setup.seats)
    assert {s.seat: s.amount for s in ended.stacks} == H.final_stacks(state)
    assert H.fold(events).snapshot() == H.fold(events).snapshot() == state.snapshot()
