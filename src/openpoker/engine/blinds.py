"""Who is dealt in next, where the button goes, and who posts what: the planning layer.

``plan_hand(rules, occupants, last)`` is a pure function from the seats between two hands (and
the previous hand's positions) to a ``HandPlan``; ``engine.table`` turns it into a
``HandSetup``. Rules, from ``HOUSE_RULES.md`` (Blinds, button, seats) and the seeds:

Players are grouped as *ready* (sitting in, chips, no debt), *owing* (sitting in or waiting for
the big blind, with a debt: new, or missed blinds) and *out* (sitting out or no chips).

- No game running: when fewer than two players are ready, nobody posts to start one. Every
  owing player is dealt in free (their debt is forgiven). This is seed 000's "There is no
  Posting in 1-on-1" generalised: posting exists to stop players entering a running game in late
  position; with no game running there is nothing to dodge, and in particular nobody posts to
  enter heads-up.
- First dealer (seeds 001, 004): with no previous hand, the first player seated (earliest
  arrival among the ready) has the button; the next ready player clockwise posts the small blind.
- Moving button (seeds 000, 001, 004): the button moves to the next ready player clockwise; the
  small blind is the next ready player after it; the big blind is the next ready *or owing*
  player after the small blind and before the button: an owing player reached by the big blind
  posts it in turn and owes nothing more (seeds 001/004: "wait for his/her turn (as decided by
  the movement of the button) to place the Big Blind").
- Dead button (``ButtonRule.DEAD``, LAR 151): the big blind moves to the next ready or owing
  player after the last big blind; the small blind is posted by last hand's big blind if they
  are still playing, else it is dead (not posted); the button is last hand's small-blind seat,
  even when nobody plays there, or the seat just before the small blind when the table shrank
  past it.
- Heads-up (seed 000, seed 003, TR 87): when exactly two players are dealt in, the dealer posts
  the small blind and the other the big blind; if one of the two was the big blind of the last
  hand, the other one is the big blind now, so nobody posts the big blind twice in a row on the
  move to (or within) heads-up.
- Owing players who chose to post are dealt in and post (seed 000) one live big blind, plus a
  dead small blind when they owe a missed big blind; several big blinds may be posted in one
  hand (seeds 001, 004). An owing player seated between the button and the small blind waits
  until the button has passed them (as online rooms do: entering there would put the button on
  them next hand and make the same players post the blinds again). When two established players
  are heads-up and the big blind cannot reach an owing player before the button, the owing
  player waits one hand (entering would mean posting into a heads-up game).
- Straddle (seed 003, LAR 161; off unless ``stakes.straddle``): with three or more players dealt
  in, the first player left of the big blind who posts nothing else posts a live straddle.
- Missed blinds (seed 000): a player sitting out whose seat the big blind passes (clockwise from
  last hand's big-blind seat to this hand's, that seat included) now owes a big blind; one whom
  only the small blind passes owes a small blind. Players who never played (new) keep owing
  one live big blind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openpoker.engine.errors import RuleViolation
from openpoker.engine.hand_setup import Post, PostKind
from openpoker.engine.rules import ButtonRule, Rules
from openpoker.engine.seating import Debt, Occupant, SeatStatus

_DEBT_ORDER = {Debt.NONE: 0, Debt.SMALL_BLIND: 1, Debt.BIG_BLIND: 2, Debt.NEW_PLAYER: 3}


class NotEnoughPlayers(RuleViolation):
    """A hand starts only when at least two players can play."""

    reason = "NOT_ENOUGH_PLAYERS"

    def __init__(self, *, playable: int) -> None:
        super().__init__(f"{playable} player(s) can play; a hand needs two", playable=playable)
        self.playable = playable


@dataclass(frozen=True, slots=True, kw_only=True)
class Positions:
    """Where the button and blinds were in a hand (recorded with the hand, read by the next)."""

    button: int
    small_blind: int  # the small-blind seat (dead-button rule: nobody may have posted there)
    big_blind: int
    big_blind_player: str
    heads_up: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class DebtChange:
    """A debt settled or incurred, for the log and for the invariant checks."""

    seat: int
    player: str
    debt: Debt


@dataclass(frozen=True, slots=True, kw_only=True)
class HandPlan:
    positions: Positions
    small_blind_player: str | None  # None: dead small blind (dead-button rule)
    dealt: tuple[int, ...]  # seats dealt in, clockwise from the first seat left of the button
    posts: tuple[Post, ...]  # antes, small blind, big blind, then other posts clockwise
    collected: tuple[DebtChange, ...]  # debts paid by posting in this hand
    forgiven: tuple[DebtChange, ...]  # debts cleared without a post (big blind in turn, no game)
    missed: tuple[DebtChange, ...]  # new debts of players sitting out (the debt they now owe)


def _clockwise_from(seat: int, n: int) -> list[int]:
    """Seats after ``seat`` clockwise, ending with ``seat`` itself."""
    return [(seat + i) % n for i in range(1, n + 1)]


def _in_arc(seat: int, start: int, end: int, n: int) -> bool:
    """``seat`` lies clockwise after ``start`` and no further than ``end`` (``(start, end]``)."""
    span = (end - start) % n
    return 0 < (seat - start) % n <= span


def _strictly_between(seat: int, start: int, end: int, n: int) -> bool:
    return 0 < (seat - start) % n < (end - start) % n


def _next(after: int, candidates: set[int], n: int, *, before: int | None = None) -> int | None:
    for s in _clockwise_from(after, n):
        if before is not None and s == before:
            return None
        if s in candidates:
            return s
    return None


def plan_hand(rules: Rules, occupants: Sequence[Occupant], last: Positions | None) -> HandPlan:
    """The next hand's button, blinds, players dealt in and posts (see the module docstring)."""
    n = rules.seats
    by_seat = {o.seat: o for o in occupants}
    able = {o.seat for o in occupants if o.stack > 0 and o.status is not SeatStatus.SITTING_OUT}
    ready = {s for s in able if by_seat[s].debt is Debt.NONE and by_seat[s].status is SeatStatus.SITTING_IN}
    owing = able - ready
    forgiven: list[DebtChange] = []
    if len(ready) < 2:
        # No game running: nobody posts to start one (or to enter heads-up).
        forgiven.extend(
            DebtChange(seat=s, player=by_seat[s].player, debt=by_seat[s].debt)
            for s in sorted(owing)
            if by_seat[s].debt is not Debt.NONE
        )
        ready |= owing
        owing = set()
    if len(ready) < 2:
        raise NotEnoughPlayers(playable=len(ready))
    posting = {s for s in owing if by_seat[s].status is SeatStatus.SITTING_IN}
    in_game = ready | owing

    if last is None:
        button = min(ready, key=lambda s: by_seat[s].arrival)
        positions, sb_player = _ring_moving(button, ready, in_game, n, by_seat)
        if positions is None:
            positions, sb_player = _heads_up(ready, None, rules, by_seat, n, first_button=button)
    elif rules.button is ButtonRule.DEAD:
        positions, sb_player = _ring_dead(last, ready, in_game, n, by_seat)
    else:
        # The button moves to the next ready player; if that would give last hand's big blind
        # the big blind again (a table restarting after a pause), it moves on (TR 87's
        # "adjusted" button generalised).
        moved = _next(last.button, ready, n)
        assert moved is not None
        positions, sb_player = _ring_moving(moved, ready, in_game, n, by_seat)
        candidate = moved
        for _ in range(len(ready) - 1):
            if positions is None or positions.big_blind_player != last.big_blind_player:
                break
            nxt = _next(candidate, ready, n)
            assert nxt is not None
            candidate = nxt
            positions, sb_player = _ring_moving(candidate, ready, in_game, n, by_seat)
        if positions is None:
            positions, sb_player = _heads_up(ready, last, rules, by_seat, n)

    bb = positions.big_blind
    if positions.heads_up:
        dealt_set = {positions.button, bb}
    else:
        # Nobody enters between the button and the small blind: they wait until the button
        # passes (else the button would move onto them next hand and the blinds repeat).
        entering = {
            p for p in posting if not _strictly_between(p, positions.button, positions.small_blind, n)
        }
        dealt_set = ready | entering | {bb}
        if len(dealt_set) == 2:
            positions, sb_player = _heads_up(dealt_set, last, rules, by_seat, n)
            bb = positions.big_blind
    dealt = tuple(s for s in _clockwise_from(positions.button, n) if s in dealt_set)

    stakes = rules.stakes
    posts: list[Post] = []
    if stakes.ante:
        posts.extend(Post(seat=s, kind=PostKind.ANTE, amount=stakes.ante) for s in dealt)
    if sb_player is not None:
        posts.append(Post(seat=positions.small_blind, kind=PostKind.SMALL_BLIND, amount=stakes.small_blind))
    posts.append(Post(seat=bb, kind=PostKind.BIG_BLIND, amount=stakes.big_blind))
    collected: list[DebtChange] = []
    for s in _clockwise_from(bb, n):
        occ = by_seat.get(s)
        if occ is None or s not in dealt_set or occ.debt is Debt.NONE:
            continue
        if any(f.seat == s for f in forgiven):
            continue  # already forgiven: no game was running
        change = DebtChange(seat=s, player=occ.player, debt=occ.debt)
        if s == bb:
            forgiven.append(change)  # the big blind reached them in turn
            continue
        posts.append(Post(seat=s, kind=PostKind.LIVE_BIG_BLIND, amount=stakes.big_blind))
        if occ.debt is Debt.BIG_BLIND:
            posts.append(Post(seat=s, kind=PostKind.DEAD_SMALL_BLIND, amount=stakes.small_blind))
        collected.append(change)

    if stakes.straddle and len(dealt) >= 3:
        # Seed 003 / LAR 161: the table's live straddle, posted by the first player left of the
        # big blind who posts nothing else (the hand engine opens the action left of it).
        posting_seats = {p.seat for p in posts if p.kind is not PostKind.ANTE}
        utg = next((s for s in _clockwise_from(bb, n) if s in dealt_set and s not in posting_seats), None)
        if utg is not None:
            posts.append(Post(seat=utg, kind=PostKind.STRADDLE, amount=stakes.straddle))

    missed: list[DebtChange] = []
    if last is not None:
        for occ in occupants:
            if occ.status is not SeatStatus.SITTING_OUT or occ.debt is Debt.NEW_PLAYER:
                continue
            owes = occ.debt
            if _in_arc(occ.seat, last.big_blind, bb, n):
                owes = Debt.BIG_BLIND
            elif _in_arc(occ.seat, last.small_blind, positions.small_blind, n) and owes is Debt.NONE:
                owes = Debt.SMALL_BLIND
            if _DEBT_ORDER[owes] > _DEBT_ORDER[occ.debt]:
                missed.append(DebtChange(seat=occ.seat, player=occ.player, debt=owes))

    return HandPlan(
        positions=positions,
        small_blind_player=sb_player,
        dealt=dealt,
        posts=tuple(posts),
        collected=tuple(collected),
        forgiven=tuple(forgiven),
        missed=tuple(missed),
    )


def _ring_moving(
    button: int, ready: set[int], in_game: set[int], n: int, by_seat: dict[int, Occupant]
) -> tuple[Positions | None, str | None]:
    sb = _next(button, ready, n, before=button)
    if sb is None:
        return None, None
    bb = _next(sb, in_game, n, before=button)
    if bb is None:
        return None, None
    positions = Positions(
        button=button, small_blind=sb, big_blind=bb, big_blind_player=by_seat[bb].player, heads_up=False
    )
    return positions, by_seat[sb].player


def _ring_dead(
    last: Positions, ready: set[int], in_game: set[int], n: int, by_seat: dict[int, Occupant]
) -> tuple[Positions, str | None]:
    bb = _next(last.big_blind, in_game, n)
    assert bb is not None
    sb_seat = last.big_blind
    sb_occ = by_seat.get(sb_seat)
    still_there = sb_occ is not None and sb_occ.player == last.big_blind_player
    sb_player = sb_occ.player if sb_occ is not None and still_there and sb_seat in ready else None
    # The button stays on last hand's small-blind seat unless the big blind wrapped past it.
    before_sb = (sb_seat - 1) % n
    button = last.small_blind if _in_arc(last.small_blind, bb, before_sb, n) else before_sb
    positions = Positions(
        button=button, small_blind=sb_seat, big_blind=bb, big_blind_player=by_seat[bb].player, heads_up=False
    )
    return positions, sb_player


def _heads_up(
    pair: set[int],
    last: Positions | None,
    rules: Rules,
    by_seat: dict[int, Occupant],
    n: int,
    *,
    first_button: int | None = None,
) -> tuple[Positions, str | None]:
    a, b = sorted(pair)
    if last is not None and by_seat[a].player == last.big_blind_player:
        bb = b
    elif last is not None and by_seat[b].player == last.big_blind_player:
        bb = a
    elif last is None:
        button0 = first_button if first_button in pair else min(pair, key=lambda s: by_seat[s].arrival)
        bb = b if button0 == a else a
    elif rules.button is ButtonRule.DEAD:
        nxt = _next(last.big_blind, pair, n)
        assert nxt is not None
        bb = nxt
    else:
        btn = _next(last.button, pair, n)
        bb = b if btn == a else a
    button = b if bb == a else a
    positions = Positions(
        button=button, small_blind=button, big_blind=bb, big_blind_player=by_seat[bb].player, heads_up=True
    )
    return positions, by_seat[button].player
