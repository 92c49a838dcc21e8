"""``pokerctl sim``: random bots play whole table sessions in the engine alone.

Each table gets random rules (game, betting structure, seat count, moving or dead button,
antes, rake) and a session of random seat activity around the hands: joins (posting or waiting
for the big blind), leaves (between hands and during them), sit-outs and sit-ins, top-ups,
disconnections, reconnections and time-outs, with a simulated clock that sometimes jumps hours
ahead so the 24-hour protection window is exercised. Every hand's table log is audited with
``engine.table_audit`` (chips, turn order, button and blinds, owed blinds, replay and codec
round trip). The bots' ``random.Random`` also shuffles the decks: this is a simulation, not a
shuffle anyone plays with (real decks come from the rng service).

Exit status 1 when an invariant fails.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from openpoker.engine import hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import deck_for_size
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import Act, ActionKind
from openpoker.engine.rules import ButtonRule, Game, RakeRules, Rules, Stakes, Structure
from openpoker.engine.table_audit import audit
from openpoker.engine.table_events import (
    Disconnect,
    Leave,
    OpenTable,
    Reconnect,
    SitDown,
    SitIn,
    SitOut,
    StartHand,
    TimeOut,
    TopUp,
)


@dataclass
class SessionResult:
    table_id: str
    rules: Rules
    hands: int
    events: list[tbl.TableLogEvent] = field(default_factory=list)
    commands: int = 0
    rejected: int = 0  # commands the engine refused (bots try illegal things too)
    problems: list[str] = field(default_factory=list)


def random_rules(rng: random.Random) -> Rules:
    game = rng.choice(list(Game))
    structure = rng.choice(list(Structure))
    big = rng.choice([2, 10, 20, 50, 100])
    ante = rng.choice([0, 0, 0, big // 10])
    if structure is Structure.FIXED_LIMIT:
        stakes = Stakes.fixed_limit(big, 2 * big, ante=ante)
    else:
        stakes = Stakes.blinds(big // 2, big, ante=ante, straddle=rng.choice([0, 0, 0, 2 * big]))
    rake = RakeRules(basis_points=rng.choice([0, 250, 500]), caps=((2, 3 * big),))
    seats = rng.choice([2, 3, 4, 6, 6, 9, 10])
    return Rules(
        game=game,
        structure=structure,
        stakes=stakes,
        seats=seats,
        rake=rake,
        button=rng.choice([ButtonRule.MOVING, ButtonRule.DEAD]),
    )


def _buy_in(rules: Rules, rng: random.Random) -> int:
    limits = rules.default_buy_in()
    high = limits.maximum if limits.maximum is not None else 5 * limits.minimum
    return rng.randint(limits.minimum, high)


def _bot_action(hs: hand.HandState, seat: int, rng: random.Random) -> Act:
    legal = hand.legal_actions(hs, seat)
    assert legal is not None
    roll = rng.random()
    if legal.can_raise and roll < 0.2:
        low, high = legal.min_raise_to, legal.max_raise_to
        amount = high if rng.random() < 0.15 else rng.randint(low, min(high, low + (high - low) // 3))
        return Act(seat=seat, action=ActionKind.BET_OR_RAISE, amount=amount)
    if legal.can_check:
        return Act(seat=seat, action=ActionKind.CHECK)
    if roll < 0.75:
        return Act(seat=seat, action=ActionKind.CALL)
    return Act(seat=seat, action=ActionKind.FOLD)


def play_session(
    seed: int,
    hands: int,
    *,
    rules: Rules | None = None,
    audit_every_hand: bool = False,
    check_decide_is_pure: bool = False,
) -> SessionResult:
    """Play ``hands`` hands at one table (random rules unless given) and audit its log.

    The audit checks every hand boundary in one pass over the log; ``audit_every_hand`` also
    re-audits the whole log after each hand (quadratic: for short sessions in tests), and
    ``check_decide_is_pure`` compares the state before and after every ``decide``.
    """
    rng = random.Random(seed)  # noqa: S311 - simulation bots and decks, never a real shuffle
    rules = random_rules(rng) if rules is None else rules
    table_id = f"sim-{seed}"
    result = SessionResult(table_id=table_id, rules=rules, hands=0)
    log = result.events
    state: tbl.TableState | None = None
    clock = 1_000_000
    names = iter(f"p{k}" for k in range(1_000_000))

    def run(command: tbl.Command) -> bool:
        nonlocal state
        result.commands += 1
        before = state.snapshot() if check_decide_is_pure and state is not None else None
        try:
            new = tbl.decide(state, command)
        except EngineError:
            result.rejected += 1
            return False
        finally:
            if before is not None and state is not None and state.snapshot() != before:
                result.problems.append(f"decide({type(command).__name__}) changed the state")
        if state is None:
            state = tbl.fold(new)
        else:
            for e in new:
                tbl.evolve(state, e)
        log.extend(new)
        return True

    run(OpenTable(table_id=table_id, rules=rules))
    assert state is not None
    table: tbl.TableState = state
    stalls = 0
    while result.hands < hands and stalls < 50:
        clock += rng.randint(1_000, 60_000)
        if rng.random() < 0.02:
            clock += rng.randint(1, 30) * 3_600_000  # hours later: the 24 h window moves on
        if table.hand is None:
            _between_hands(table, rng, run, names)
            deck = list(deck_for_size(rules.deck_size))
            rng.shuffle(deck)
            if tbl.can_start_hand(table):
                run(StartHand(hand_id=f"{table_id}-h{table.hands_played + 1}", deck=tuple(deck)))
                result.hands = table.hands_played  # a hand may end in StartHand (all-in posts)
                stalls = 0
            else:
                stalls += 1
                free = [s for s in range(rules.seats) if s not in table.seats]
                if free:
                    run(SitDown(seat=rng.choice(free), player=next(names), buy_in=_buy_in(rules, rng)))
                for seat, occ in list(table.seats.items()):
                    if occ.stack == 0:
                        run(Leave(seat=seat))
                    elif occ.status.value != "sitting_in":
                        run(SitIn(seat=seat))
            continue
        # A hand is running.
        actor = hand.to_act(table.hand)
        occupied = sorted(table.seats)
        r = rng.random()
        if r < 0.03 and occupied:
            target = rng.choice(occupied)
            if table.seats[target].disconnected:
                run(Reconnect(seat=target, at_ms=clock))
            else:
                run(Disconnect(seat=target, at_ms=clock))
        elif r < 0.05 and occupied:
            run(Leave(seat=rng.choice(occupied)))
        elif r < 0.06 and occupied:
            run(SitDown(seat=rng.randrange(rules.seats), player=next(names), buy_in=_buy_in(rules, rng)))
        elif r < 0.07 and occupied:
            run(TopUp(seat=rng.choice(occupied), amount=rules.stakes.big_blind))  # refused: table stakes
        elif actor is not None and (r < 0.12 or table.seats[actor].disconnected):
            run(TimeOut(seat=actor, at_ms=clock))
        elif actor is not None:
            run(_bot_action(table.hand, actor, rng))
        if _between_hands_now(table) and table.hands_played > result.hands:
            result.hands = table.hands_played
            if audit_every_hand:
                found = audit(log, codec_round_trip=result.hands % 25 == 0)
                if found:
                    result.problems.extend(found)
                    break
    if not result.problems:
        result.problems.extend(audit(log))
    return result


def _between_hands_now(table: tbl.TableState) -> bool:
    return table.hand is None


def _between_hands(
    table: tbl.TableState, rng: random.Random, run: Callable[[tbl.Command], bool], names: Iterator[str]
) -> None:
    rules = table.rules
    free = [s for s in range(rules.seats) if s not in table.seats]
    if free and rng.random() < 0.25:
        run(
            SitDown(
                seat=rng.choice(free),
                player=next(names),
                buy_in=_buy_in(rules, rng),
                wait_for_big_blind=rng.random() < 0.5,
            )
        )
    for seat, occ in sorted(table.seats.items()):
        r = rng.random()
        if r < 0.03:
            run(Leave(seat=seat))
        elif r < 0.08 and occ.status.value != "sitting_out":
            run(SitOut(seat=seat))
        elif r < 0.25 and occ.status.value != "sitting_in":
            run(SitIn(seat=seat, wait_for_big_blind=rng.random() < 0.3))
        elif r < 0.3:
            run(TopUp(seat=seat, amount=rng.randint(1, 5) * rules.stakes.big_blind))
        elif r < 0.32 and occ.disconnected:
            run(Reconnect(seat=seat, at_ms=0))
        if occ.stack == 0 and rng.random() < 0.5:
            limits = rules.default_buy_in()
            run(TopUp(seat=seat, amount=limits.minimum))


def simulate(tables: int, hands: int, seed: int) -> dict[str, object]:
    started = time.perf_counter()
    results = [play_session(seed * 1_000_003 + t, hands) for t in range(tables)]
    elapsed = time.perf_counter() - started
    played = sum(r.hands for r in results)
    problems = {r.table_id: r.problems[:5] for r in results if r.problems}
    return {
        "tables": tables,
        "hands_per_table": hands,
        "seed": seed,
        "hands_played": played,
        "events": sum(len(r.events) for r in results),
        "commands": sum(r.commands for r in results),
        "rejected_commands": sum(r.rejected for r in results),
        "seconds": round(elapsed, 3),
        "hands_per_second": round(played / elapsed, 1) if elapsed else None,
        "invariants": {
            "checked": [
                "chips conserved (table + taken off = bought in - rake)",
                "nobody acts out of turn",
                "moving button on a player dealt in; nobody big blind twice in a row",
                "dead button: big blind skips nobody, last big blind posts the small blind",
                "owed blinds collected exactly once",
                "log re-folds to the same state (and through the codec)",
            ],
            "ok": not problems,
            "failures": problems,
        },
        "games": sorted({f"{r.rules.game.value}/{r.rules.structure.value}" for r in results}),
    }


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sim", help="random bots play table sessions in the engine; checks invariants")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--hands", type=int, default=200, help="hands per table")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print the JSON summary only")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    summary = simulate(args.tables, args.hands, args.seed)
    invariants = summary["invariants"]
    assert isinstance(invariants, dict)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"{summary['hands_played']} hands on {summary['tables']} tables in {summary['seconds']} s"
            f" ({summary['hands_per_second']} hands/s); invariants {'ok' if invariants['ok'] else 'FAILED'}"
        )
        for table_id, failures in invariants["failures"].items():
            for failure in failures:
                print(f"  {table_id}: {failure}")
    return 0 if invariants["ok"] else 1


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - convenience
    parser = argparse.ArgumentParser(prog="pokerctl sim")
    sub = parser.add_subparsers()
    register(sub)
    args = parser.parse_args(["sim", *(argv or [])])
    code: int = args.func(args)
    return code
