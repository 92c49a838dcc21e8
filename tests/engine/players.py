"""Random hands for the engine's tests: setups, random legal players, pokerkit-generated hands.

Everything is driven by an explicit ``random.Random`` so every run is reproducible.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass

import pokerkit
from pokerkit import Automation, Mode

from openpoker.engine import hand as H
from openpoker.engine import phh, showdown
from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card, parse_card
from openpoker.engine.hand_events import Act, ActionKind, HandCommand, HandEvent, ProtectAllIn
from openpoker.engine.hand_setup import HandSetup, Post, PostKind, SeatSetup
from openpoker.engine.rules import Game, RakeRules, Rules, Stakes, Structure, phh_rules

VARIANTS = ("NT", "FT", "PO", "NS")
GAME_OF = {
    "NT": (Game.HOLDEM, Structure.NO_LIMIT),
    "FT": (Game.HOLDEM, Structure.FIXED_LIMIT),
    "PO": (Game.OMAHA, Structure.POT_LIMIT),
    "NS": (Game.SIX_PLUS, Structure.NO_LIMIT),
}


def random_stacks(rng: random.Random, n: int, big_blind: int) -> list[int]:
    """Varied stacks, many short (all-ins, side pots, short blinds)."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.15:
            out.append(rng.randint(1, 2 * big_blind))
        elif r < 0.55:
            out.append(rng.randint(2 * big_blind, 30 * big_blind))
        else:
            out.append(rng.randint(30 * big_blind, 300 * big_blind))
    return out


def choose(rng: random.Random, legal: H.LegalActions) -> tuple[ActionKind, int]:
    """A random legal decision, biased towards calls, minimum raises and all-ins."""
    r = rng.random()
    if legal.to_call > 0 and r < 0.18:
        return ActionKind.FOLD, 0
    if legal.can_raise and r > 0.6:
        lo, hi = legal.min_raise_to, legal.max_raise_to
        pick = rng.random()
        amount = lo if pick < 0.35 else hi if pick < 0.6 else rng.randint(lo, hi)
        return ActionKind.BET_OR_RAISE, amount
    return (ActionKind.CALL, 0) if legal.to_call > 0 else (ActionKind.CHECK, 0)


def play_random(
    setup: HandSetup, rng: random.Random, *, protect: float = 0.0
) -> tuple[H.HandState, list[HandEvent], list[HandCommand]]:
    """Play ``setup`` to the end with random legal commands (phh showdown: show if not beaten)."""
    events = H.start(setup)
    state = H.fold(events)
    commands: list[HandCommand] = []
    while not H.is_over(state):
        seat = H.to_act(state)
        assert seat is not None
        command: HandCommand
        if state.phase == H.SHOWDOWN:
            live = [j for j in range(state.n) if not state.folded[j] and not state.mucked[j]]
            i = state.index_of[seat]
            # pokerkit 0.7.7 fails on a board dealt after all but one hand mucked at an all-in
            # showdown, so the random players muck only once the board is complete.
            # A hand that can still win a pot is always shown (pokerkit burns the chips of a pot
            # whose every contender mucked).
            show = live == [i] or len(state.board) < 5 or showdown.can_win(state, i) or rng.random() < 0.3
            command = H.Show(seat=seat) if show else H.Muck(seat=seat)
        else:
            legal = H.legal_actions(state, seat)
            assert legal is not None
            i = state.index_of[seat]
            if protect and rng.random() < protect and state.stack[i] < state.start_stacks[i]:
                command = ProtectAllIn(seat=seat)
            else:
                action, amount = choose(rng, legal)
                command = Act(seat=seat, action=action, amount=amount)
        commands.append(command)
        for e in H.decide(state, command):
            H.evolve(state, e)
            events.append(e)
    return state, events, commands


def shuffled(rng: random.Random, game: Game) -> tuple[Card, ...]:
    deck = list(SHORT_DECK if game is Game.SIX_PLUS else STANDARD_DECK)
    rng.shuffle(deck)
    return tuple(deck)


def random_setup(
    rng: random.Random,
    *,
    variant: str,
    n: int,
    profile_phh: bool = True,
    rake: RakeRules | None = None,
) -> HandSetup:
    """A hand of ``n`` players: blinds 1/2 (fixed limit 2/4), sometimes antes or a straddle."""
    game, structure = GAME_OF[variant]
    ante = rng.choice((0, 0, 0, 1))
    straddle = 4 if structure is not Structure.FIXED_LIMIT and n > 3 and rng.random() < 0.15 else 0
    if structure is Structure.FIXED_LIMIT:
        stakes = Stakes(small_blind=1, big_blind=2, small_bet=2, big_bet=4, ante=ante)
    else:
        stakes = Stakes.blinds(1, 2, ante=ante, straddle=straddle)
    if profile_phh:
        rules = phh_rules(game, structure, stakes, seats=max(n, 2))
    else:
        rules = Rules(
            game=game, structure=structure, stakes=stakes, seats=max(n, 2), rake=rake or RakeRules()
        )
    stacks = random_stacks(rng, n, 2)
    seats = tuple(SeatSetup(seat=s, player=f"p{s}", stack=stacks[s]) for s in range(n))
    button = n - 1 if n > 2 else 0
    order = list(range(n)) if n > 2 else [1, 0]  # first seat left of the button first
    posts = [Post(seat=s, kind=PostKind.ANTE, amount=ante) for s in order if ante]
    if n == 2:
        posts += [
            Post(seat=0, kind=PostKind.SMALL_BLIND, amount=1),
            Post(seat=1, kind=PostKind.BIG_BLIND, amount=2),
        ]
    else:
        posts += [
            Post(seat=0, kind=PostKind.SMALL_BLIND, amount=1),
            Post(seat=1, kind=PostKind.BIG_BLIND, amount=2),
        ]
        if straddle:
            posts.append(Post(seat=2, kind=PostKind.STRADDLE, amount=straddle))
    return HandSetup(
        hand_id=f"h{rng.getrandbits(32)}",
        rules=rules,
        seats=seats,
        button=button,
        posts=tuple(posts),
        deck=shuffled(rng, game),
    )


# -- pokerkit as the generator ------------------------------------------------------------------

_AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.CARD_BURNING,
    Automation.HOLE_DEALING,
    Automation.BOARD_DEALING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


@dataclass(frozen=True, slots=True)
class PokerkitHand:
    history: phh.HandHistory
    stacks: tuple[int, ...]


def pokerkit_hand(rng: random.Random, variant: str, n: int) -> PokerkitHand:
    """One hand played by pokerkit with random legal actions, as an ``engine.phh`` history."""
    ante = rng.choice((0, 0, 0, 1))
    blinds: tuple[int, ...] = (1, 2) if n == 2 else (1, 2) + (0,) * (n - 2)
    if variant != "FT" and n > 3 and rng.random() < 0.15:
        blinds = (1, 2, 4) + (0,) * (n - 3)
    antes = (ante,) * n
    game: pokerkit.Poker
    if variant == "NT":
        game = pokerkit.NoLimitTexasHoldem(_AUTOMATIONS, True, antes, blinds, 2, mode=Mode.CASH_GAME)
    elif variant == "FT":
        game = pokerkit.FixedLimitTexasHoldem(_AUTOMATIONS, True, antes, blinds, 2, 4, mode=Mode.CASH_GAME)
    elif variant == "PO":
        game = pokerkit.PotLimitOmahaHoldem(_AUTOMATIONS, True, antes, blinds, 2, mode=Mode.CASH_GAME)
    else:
        game = pokerkit.NoLimitShortDeckHoldem(_AUTOMATIONS, True, antes, blinds, 2, mode=Mode.CASH_GAME)
    stacks = random_stacks(rng, n, 2)
    # pokerkit shuffles with the random module: seed it from our generator for reproducibility.
    state_random = random.getstate()
    random.seed(rng.getrandbits(64))
    try:
        state = game(tuple(stacks), n)
    finally:
        random.setstate(state_random)
    while state.status:
        r = rng.random()
        if state.can_select_runout_count():
            state.select_runout_count(1)  # cash-game mode asks all-in players; run once
        elif state.can_fold() and state.checking_or_calling_amount and r < 0.18:
            state.fold()
        elif state.can_complete_bet_or_raise_to() and r > 0.6:
            lo = state.min_completion_betting_or_raising_to_amount
            hi = state.max_completion_betting_or_raising_to_amount
            assert lo is not None
            assert hi is not None
            pick = rng.random()
            amount = lo if pick < 0.35 else hi if pick < 0.6 else rng.randint(lo, hi)
            state.complete_bet_or_raise_to(amount)
        elif state.can_check_or_call():
            state.check_or_call()
        else:  # pragma: no cover - every automation is on
            raise AssertionError(f"pokerkit waits for an unexpected operation: {state}")
    actions: list[phh.Action] = []
    hole: dict[int, list[Card | None]] = {}
    for op in state.operations:
        match op:
            case pokerkit.HoleDealing(player_index=p, cards=cards):
                hole.setdefault(p, []).extend(_card(c) for c in cards)
            case pokerkit.BoardDealing(cards=cards):
                actions.append(phh.DealBoard(cards=tuple(_card(c) for c in cards)))
            case pokerkit.Folding(player_index=p):
                actions.append(phh.Fold(player=p))
            case pokerkit.CheckingOrCalling(player_index=p):
                actions.append(phh.CheckCall(player=p))
            case pokerkit.CompletionBettingOrRaisingTo(player_index=p, amount=amount):
                actions.append(phh.CompleteBetRaise(player=p, amount=amount))
            case pokerkit.HoleCardsShowingOrMucking(player_index=p, hole_cards=shown):
                actions.append(phh.ShowMuck(player=p, cards=tuple(_card(c) for c in shown) or None))
            case _:
                pass
    deals: list[phh.Action] = [phh.DealHole(player=p, cards=tuple(cs)) for p, cs in sorted(hole.items())]
    history = phh.HandHistory(
        variant=variant,
        antes=antes,
        blinds_or_straddles=blinds,
        min_bet=None if variant == "FT" else 2,
        small_bet=2 if variant == "FT" else None,
        big_bet=4 if variant == "FT" else None,
        starting_stacks=tuple(stacks),
        actions=tuple(deals + actions),
        ante_trimming_status=True,
    )
    return PokerkitHand(history=history, stacks=tuple(int(s) for s in state.stacks))


def _card(c: object) -> Card:
    return parse_card(repr(c))


def strict_pokerkit_stacks(text: str) -> tuple[int, ...]:
    """Replay a PHH text in pokerkit strictly: every action applied as written, no repair."""
    from pokerkit.notation import parse_action

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hh = pokerkit.HandHistory.loads(text)
        state = hh.create_state()
        for action in hh.actions:
            while state.can_burn_card():
                state.burn_card("??")
            parse_action(state, action, hh.parse_value)
    assert not state.status, "pokerkit did not finish the hand"
    return tuple(int(s) for s in state.stacks)
