"""Invariants of a table's log, checked at every hand boundary by re-folding it.

``audit(events)`` re-folds a table log event by event and returns the violations it finds (an
empty list when the log is sound). It recomputes what it checks from the events themselves,
not from the counters of ``TableState``, so a bug in ``evolve`` cannot hide itself:

- chips: chips in front of seated players plus chips taken off by players who left equal chips
  bought in (buy-ins and top-ups) minus rake, after every hand and every seat event between
  hands (a voided hand gives players who left it what they had committed, taken off too);
- turn order: every player action (check, call, bet, fold, all-in protection) is by the seat
  the hand was waiting for;
- moving button: the button is on a player dealt in, and nobody is the big blind of two hands
  in a row;
- dead button (LAR 151): between two hands of three or more players, the big blind moves to the
  next player in the game (nobody dealt in both hands is skipped), and last hand's big blind, if
  dealt in again from the same seat, posts the small blind; and over every orbit (from one big
  blind of a player to their next), each player dealt in throughout pays each blind exactly once;
- owed blinds: a debt is collected only if it was owed, with exactly its posts (a live big blind,
  plus a dead small blind for a missed big blind), and nobody dealt in owes anything afterwards;
- replay: folding the log (and its ``engine.codec`` round trip) gives the same state as
  evolving it one event at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openpoker.engine import codec, hand
from openpoker.engine import table as tbl
from openpoker.engine.hand_events import (
    AllInProtected,
    BetPlaced,
    Called,
    Checked,
    Folded,
    ForcedBetPosted,
    HandEnded,
    HandStarted,
)
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import ButtonRule
from openpoker.engine.seating import Debt
from openpoker.engine.table_events import (
    ChipsAdded,
    HandScheduled,
    HandVoided,
    PlayerLeft,
    PlayerSeated,
    TableOpened,
)

_ACTIONS = (Checked, Called, BetPlaced, Folded, AllInProtected)


def audit(events: Sequence[tbl.TableLogEvent], *, codec_round_trip: bool = True) -> list[str]:
    """Violations of the table invariants in ``events`` (see the module docstring)."""
    problems: list[str] = []
    if not events or not isinstance(events[0], TableOpened):
        return ["the log does not start with TableOpened"]
    rules = events[0].rules
    state = tbl.fold(events[:1])
    bought_in = taken_off = rake = 0
    debts: dict[str, Debt] = {}
    seat_players: dict[int, str] = {}
    history: list[_HandRecord] = []
    last_plan: HandScheduled | None = None
    hand_no = 0
    start_stacks: dict[int, int] = {}  # seat -> stack at the start of the current hand
    left_hand: dict[int, int] = {}  # seat -> chips taken by a player who left the current hand

    def where() -> str:
        return f"hand {hand_no}"

    for index, event in enumerate(events[1:], start=1):
        if isinstance(event, _ACTIONS):
            expected = hand.to_act(state.hand) if state.hand is not None else None
            if expected != event.seat:
                name = type(event).__name__
                problems.append(f"{where()}: event {index} {name} by seat {event.seat}, turn of {expected}")
        match event:
            case PlayerSeated(seat=seat, player=player, buy_in=amount, debt=debt):
                bought_in += amount
                debts[player] = debt
                seat_players[seat] = player
            case ChipsAdded(amount=amount):
                bought_in += amount
            case PlayerLeft(seat=seat, chips=chips):
                taken_off += chips
                seat_players.pop(seat, None)
                if state.hand is not None and seat in start_stacks:
                    left_hand[seat] = chips
            case HandStarted(seats=dealt):
                start_stacks = {s.seat: s.stack for s in dealt}
                left_hand = {}
            case HandVoided():
                taken_off += sum(start_stacks[seat] - chips for seat, chips in left_hand.items())
            case HandEnded(rake=r):
                rake += r
            case HandScheduled():
                hand_no += 1
                found = _check_plan(
                    event,
                    last_plan,
                    button_rule=rules.button,
                    seats=rules.seats,
                    seat_players=seat_players,
                    debts=debts,
                )
                problems.extend(f"{where()}: {p}" for p in found)
                last_plan = event
                plan = event.plan
                history.append(
                    _HandRecord(
                        dealt=frozenset(seat_players[s] for s in plan.dealt),
                        big_blind=plan.positions.big_blind_player,
                        small_blind=plan.small_blind_player,
                        heads_up=plan.positions.heads_up,
                    )
                )
                if rules.button is ButtonRule.DEAD:
                    problems.extend(f"{where()}: {p}" for p in _orbit_problems(history))
            case _:
                pass
        tbl.evolve(state, event)
        if state.hand is None and not isinstance(event, ForcedBetPosted):
            on_table = sum(s.stack for s in tbl.seats(state))
            if on_table + taken_off != bought_in - rake:
                problems.append(
                    f"{where()}: event {index}: {on_table} on the table + {taken_off} taken off"
                    f" != {bought_in} bought in - {rake} rake"
                )
        if len(problems) > 20:
            break

    whole = tbl.fold(events).snapshot()
    if whole != state.snapshot():
        problems.append("folding the whole log gives another state than evolving it event by event")
    if codec_round_trip:
        decoded = [codec.decode(codec.encode(e)) for e in events]
        if decoded != list(events):
            problems.append("the codec round trip changes some events")
        elif tbl.fold(decoded).snapshot() != whole:
            problems.append("the codec round trip folds to another state")
    return problems


def _check_plan(
    scheduled: HandScheduled,
    last: HandScheduled | None,
    *,
    button_rule: ButtonRule,
    seats: int,
    seat_players: dict[int, str],
    debts: dict[str, Debt],
) -> list[str]:
    plan = scheduled.plan
    pos = plan.positions
    problems: list[str] = []
    dealt = set(plan.dealt)
    posts_by_seat: dict[int, list[PostKind]] = {}
    for p in plan.posts:
        posts_by_seat.setdefault(p.seat, []).append(p.kind)
        if p.seat not in dealt:
            problems.append(f"seat {p.seat} posts {p.kind} but is not dealt in")
    if pos.big_blind not in dealt:
        problems.append(f"the big blind seat {pos.big_blind} is not dealt in")
    if button_rule is ButtonRule.MOVING and pos.button not in dealt:
        problems.append(f"moving button on seat {pos.button}, which is not dealt in")
    if last is not None and last.plan.positions.big_blind_player == pos.big_blind_player:
        problems.append(f"{pos.big_blind_player} is the big blind twice in a row")
    if (
        button_rule is ButtonRule.DEAD
        and last is not None
        and not pos.heads_up
        and not last.plan.positions.heads_up
    ):
        prev = last.plan.positions
        problems.extend(
            f"dead button: the big blind skipped seat {seat}"
            for seat in dealt
            if _strictly_between(seat, prev.big_blind, pos.big_blind, seats)
        )
        stayed = prev.big_blind in dealt and seat_players.get(prev.big_blind) == prev.big_blind_player
        if stayed and (plan.small_blind_player != prev.big_blind_player or pos.small_blind != prev.big_blind):
            problems.append(f"dead button: {prev.big_blind_player} was big blind and is not small blind now")
    # Owed blinds: collected exactly as owed, once.
    for change in plan.collected:
        owed = debts.get(change.player, Debt.NONE)
        if owed is Debt.NONE or owed is not change.debt:
            problems.append(f"{change.player} pays {change.debt} but owes {owed}")
        want = [PostKind.LIVE_BIG_BLIND] + (
            [PostKind.DEAD_SMALL_BLIND] if change.debt is Debt.BIG_BLIND else []
        )
        got = sorted(k for k in posts_by_seat.get(change.seat, []) if k is not PostKind.ANTE)
        if got != sorted(want):
            problems.append(f"{change.player} owes {change.debt} and posts {got}")
    collected_seats = {c.seat for c in plan.collected}
    for seat, kinds in posts_by_seat.items():
        extra = [k for k in kinds if k in (PostKind.LIVE_BIG_BLIND, PostKind.DEAD_SMALL_BLIND)]
        if extra and seat not in collected_seats:
            problems.append(f"seat {seat} posts {extra} without owing them")
    for change in (*plan.collected, *plan.forgiven):
        debts[change.player] = Debt.NONE
    for change in plan.missed:
        debts[change.player] = change.debt
    return problems


@dataclass(frozen=True, slots=True)
class _HandRecord:
    dealt: frozenset[str]
    big_blind: str
    small_blind: str | None
    heads_up: bool


def _orbit_problems(history: list[_HandRecord]) -> list[str]:
    """Dead button: when a player posts the big blind again after a full orbit in which they
    stayed dealt in (and the table never went heads-up), every player dealt in throughout that
    orbit posted the big blind exactly once and the small blind exactly once (the per-hand check
    in ``_check_plan`` makes that the hand after their big blind)."""
    now = history[-1]
    player = now.big_blind
    start = next((k for k in range(len(history) - 2, -1, -1) if history[k].big_blind == player), None)
    if start is None:
        return []
    orbit = history[start:]
    if any(h.heads_up for h in orbit) or not all(player in h.dealt for h in orbit):
        return []
    stayed = frozenset.intersection(*(h.dealt for h in orbit))
    problems = []
    for q in sorted(stayed):
        bigs = sum(h.big_blind == q for h in orbit[:-1])
        smalls = sum(h.small_blind == q for h in orbit[1:])
        if bigs != 1 or smalls != 1:
            problems.append(f"dead button: over an orbit {q} posted {bigs} big and {smalls} small blinds")
    return problems


def _strictly_between(seat: int, start: int, end: int, n: int) -> bool:
    return 0 < (seat - start) % n < (end - start) % n
