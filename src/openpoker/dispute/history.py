"""The readable hand history and the JSON report of a dispute replay (pure).

``hand_lines(h)`` renders one hand from its verified events: the table's rules, the seats and
stacks, the commitment and revealed seed, each street with its board and actions, the pots, the
showdown, the rake, who was paid what and the wallet's settlement. ``hand_dict``/``table_dict``
are the same content for ``--json``.
"""

from __future__ import annotations

from openpoker.dispute.check import HandReplay, TableReplay, contributions, payouts
from openpoker.engine.cards import Card
from openpoker.engine.hand_events import (
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    ForcedBetPosted,
    HandEnded,
    HoleCardsDealt,
    PotAwarded,
    ShowdownStarted,
    UncalledBetReturned,
)
from openpoker.engine.rules import RakeSplit, Rules, Structure
from openpoker.engine.table_events import (
    DecisionTimedOut,
    HandVoided,
    LeaveRequested,
    PlayerLeft,
    PlayerSatOut,
    UncontestedHandShown,
)

_GAMES = {"holdem": "Hold'em", "omaha": "Omaha", "six_plus": "Six Plus Hold'em"}
_STRUCTURES = {"no_limit": "no limit", "pot_limit": "pot limit", "fixed_limit": "fixed limit"}


def rules_text(rules: Rules) -> str:
    s = rules.stakes
    text = f"{_GAMES.get(rules.game.value, rules.game.value)} {_STRUCTURES.get(rules.structure.value, '')}"
    text += f", blinds {s.small_blind}/{s.big_blind}"
    if rules.structure is Structure.FIXED_LIMIT:
        text += f", bets {s.small_bet}/{s.big_bet}"
    if s.ante:
        text += f", ante {s.ante}"
    if rules.rake.basis_points:
        caps = ", ".join(f"{cap} from {n} players" for n, cap in rules.rake.caps) or "no cap"
        shared = "main pot first" if rules.rake.split is RakeSplit.MAIN_POT_FIRST else "by pot size"
        text += f", rake {rules.rake.basis_points / 100:g}% (cap {caps}; {shared})"
    return text + f", {rules.profile.value} rules version {rules.version}"


def hand_lines(h: HandReplay) -> list[str]:
    started = h.started
    last = h.last_version or "..."
    head = f"Hand #{h.number} {h.hand_id} (table {h.table_id}, versions {h.first_version}-{last})"
    lines = [head + f": {h.status.value}" + (f" ({'; '.join(h.pending)})" if h.pending else "")]
    if started is None:
        return lines
    name = {s.seat: s.player for s in started.seats}

    def who(seat: int) -> str:
        return f"seat {seat} {name.get(seat, '?')}"

    lines.append(f"  {rules_text(started.rules)}")
    seats = ", ".join(
        f"{who(s.seat)} {s.stack}" + (" (button)" if s.seat == started.button else "") for s in started.seats
    )
    lines.append(f"  Seats: {seats}")
    lines.append(f"  Commitment {started.commitment}")
    if h.reveal is not None:
        lines.append(
            f"  Seed {h.reveal.seed.hex()} ({h.reveal.version}): opens the commitment, deals these cards"
        )
    street = "Preflop"
    highest = 0  # the street's highest bet so far: a bet opens, a raise goes over it
    acts: list[str] = []
    board: list[str] = []

    def flush() -> None:
        if acts:
            lines.append(f"  {street}: " + "; ".join(acts))
            acts.clear()

    for _, e in h.events:
        match e:
            case ForcedBetPosted(seat=seat, kind=kind, amount=amount, all_in=all_in):
                highest = max(highest, amount)
                acts.append(f"{who(seat)} posts {kind.value.replace('_', ' ')} {amount}" + _all_in(all_in))
            case HoleCardsDealt(seat=seat, cards=cards):
                lines.append(f"  Dealt to {who(seat)}: {_cards(cards)}")
            case DecisionTimedOut(seat=seat, outcome=outcome, disconnected=off, used_elsewhere=elsewhere):
                why = " (disconnected)" if off else ""
                if elsewhere:  # the allowance is counted across tables: say what counted
                    why = f" (disconnected; {elsewhere} all-in protection(s) used at other tables)"
                acts.append(f"{who(seat)} timed out{why}: {outcome.value}")
            case Folded(seat=seat):
                acts.append(f"{who(seat)} folds")
            case Checked(seat=seat):
                acts.append(f"{who(seat)} checks")
            case Called(seat=seat, amount=amount, all_in=all_in):
                acts.append(f"{who(seat)} calls {amount}" + _all_in(all_in))
            case BetPlaced(seat=seat, to=to, all_in=all_in):
                verb = f"raises to {to}" if highest else f"bets {to}"
                highest = max(highest, to)
                acts.append(f"{who(seat)} {verb}" + _all_in(all_in))
            case AllInProtected(seat=seat):
                acts.append(f"{who(seat)} all-in protected")
            case UncalledBetReturned(seat=seat, amount=amount):
                acts.append(f"{amount} uncalled returned to {who(seat)}")
            case BoardDealt(street=s, cards=cards):
                flush()
                highest = 0
                board.extend(str(c) for c in cards)
                street = f"{s.value.capitalize()} [{' '.join(board)}]"
            case ShowdownStarted():
                flush()
                street = "Showdown"
            case CardsShown(seat=seat, cards=cards, description=description):
                acts.append(
                    f"{who(seat)} shows {_cards(cards)}" + (f" ({description})" if description else "")
                )
            case CardsMucked(seat=seat):
                acts.append(f"{who(seat)} mucks")
            case UncontestedHandShown(seat=seat, cards=cards):
                lines.append(f"  {who(seat)} shows {_cards(cards)} (won uncontested)")
            case PotAwarded(index=index, amount=amount, rake=rake, winners=winners):
                flush()
                pot_name = "Main pot" if index == 0 else f"Side pot {index}"
                won = ", ".join(f"{who(w.seat)} {w.amount}" for w in winners)
                lines.append(f"  {pot_name} {amount}, rake {rake}: won by {won}")
            case LeaveRequested(seat=seat):
                acts.append(f"{who(seat)} asks to leave")
            case PlayerLeft(seat=seat, chips=chips):
                acts.append(f"{who(seat)} leaves with {chips}")
            case PlayerSatOut(seat=seat, reason=reason):
                acts.append(f"{who(seat)} sits out ({reason.value})")
            case HandVoided(reason=reason):
                flush()
                lines.append(f"  VOIDED: {reason}; stacks returned as they were at the start")
            case HandEnded():
                flush()
            case _:
                pass
    flush()
    ended = h.ended
    if ended is not None:
        paid = payouts(started, ended)
        lines.append(
            f"  Rake {ended.rake}; paid: "
            + (", ".join(f"{p} {a}" for p, a in sorted(paid.items())) or "nobody")
        )
        lines.append("  Final stacks: " + ", ".join(f"{who(s.seat)} {s.amount}" for s in ended.stacks))
        w = h.wallet
        if w is not None and w.settled:
            lines.append(
                f"  Wallet: settled hand {w.table_id}/{w.hand_no}: pot {w.pot}, rake {w.rake}, "
                f"payouts {_pairs(w.payouts)}, contributions {_pairs(w.contributions)}: matches the table"
            )
    return lines


def _all_in(flag: bool) -> str:
    return " (all-in)" if flag else ""


def _pairs(d: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k} {v}" for k, v in sorted(d.items())) + "}"


def hand_dict(h: HandReplay) -> dict[str, object]:
    started = h.started
    out: dict[str, object] = {
        "hand": h.number,
        "hand_id": h.hand_id,
        "status": h.status.value,
        "pending": list(h.pending),
        "versions": [h.first_version, h.last_version or None],
    }
    if started is None:
        return out
    name = {s.seat: s.player for s in started.seats}
    out["rules"] = rules_text(started.rules)
    out["button"] = started.button
    out["seats"] = [{"seat": s.seat, "player": s.player, "stack": s.stack} for s in started.seats]
    out["commitment"] = started.commitment
    out["seed"] = h.reveal.seed.hex() if h.reveal is not None else None
    actions: list[dict[str, object]] = []
    street = "preflop"
    board: list[str] = []
    pots: list[dict[str, object]] = []
    hole: dict[str, str] = {}
    for version, e in h.events:
        entry: dict[str, object] | None = None
        match e:
            case ForcedBetPosted(seat=seat, kind=kind, amount=amount):
                entry = {"seat": seat, "action": kind.value, "amount": amount}
            case HoleCardsDealt(seat=seat, cards=cards):
                hole[str(seat)] = _cards(cards)
            case Folded(seat=seat):
                entry = {"seat": seat, "action": "fold"}
            case Checked(seat=seat):
                entry = {"seat": seat, "action": "check"}
            case Called(seat=seat, amount=amount):
                entry = {"seat": seat, "action": "call", "amount": amount}
            case BetPlaced(seat=seat, to=to):
                entry = {"seat": seat, "action": "bet_or_raise", "to": to}
            case AllInProtected(seat=seat):
                entry = {"seat": seat, "action": "all_in_protected"}
            case DecisionTimedOut(seat=seat, outcome=outcome):
                entry = {"seat": seat, "action": "timed_out", "outcome": outcome.value}
            case UncalledBetReturned(seat=seat, amount=amount):
                entry = {"seat": seat, "action": "uncalled_returned", "amount": amount}
            case BoardDealt(street=s, cards=cards):
                street = s.value
                board.extend(str(c) for c in cards)
            case ShowdownStarted():
                street = "showdown"
            case CardsShown(seat=seat, cards=cards, description=description):
                entry = {"seat": seat, "action": "show", "cards": _cards(cards), "description": description}
            case CardsMucked(seat=seat):
                entry = {"seat": seat, "action": "muck"}
            case UncontestedHandShown(seat=seat, cards=cards):
                entry = {"seat": seat, "action": "show", "cards": _cards(cards), "description": ""}
            case PotAwarded(index=index, amount=amount, rake=rake, winners=winners):
                pots.append(
                    {
                        "index": index,
                        "amount": amount,
                        "rake": rake,
                        "winners": [
                            {"seat": w.seat, "player": name.get(w.seat), "amount": w.amount} for w in winners
                        ],
                    }
                )
            case _:
                pass
        if entry is not None:
            entry["street"] = street
            entry["version"] = version
            entry["player"] = name.get(int(str(entry["seat"])))
            actions.append(entry)
    out["hole_cards"] = hole
    out["board"] = board
    out["actions"] = actions
    out["pots"] = pots
    ended = h.ended
    if ended is not None:
        out["rake"] = ended.rake
        out["payouts"] = payouts(started, ended)
        out["contributions"] = contributions(started, ended)
        out["final_stacks"] = [
            {"seat": s.seat, "player": name.get(s.seat), "stack": s.amount} for s in ended.stacks
        ]
    w = h.wallet
    if w is not None:
        out["wallet"] = {
            "settled": w.settled,
            "voided": w.voided,
            "pot": w.pot,
            "rake": w.rake,
            "payouts": dict(w.payouts),
            "contributions": dict(w.contributions),
        }
    return out


def table_dict(r: TableReplay, *, hand: int | None = None) -> dict[str, object]:
    hands = [h for h in r.hands if hand is None or h.number == hand]
    return {
        "table": r.table_id,
        "ok": r.ok,
        "messages": r.envelopes,
        "last_version": r.last_version,
        "writer_epochs": list(r.epochs),
        "hands_in_log": len(r.hands),
        "hands_verified": sum(h.status.value == "verified" for h in r.hands),
        "failure": r.failure.as_dict() if r.failure else None,
        "hands": [hand_dict(h) for h in hands],
    }


def table_lines(r: TableReplay, *, hand: int | None = None) -> list[str]:
    counts: dict[str, int] = {}
    for h in r.hands:
        counts[h.status.value] = counts.get(h.status.value, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no hands"
    lines = [
        f"Table {r.table_id}: {r.envelopes} envelopes (versions 1-{r.last_version}), "
        f"writer epochs {r.epochs}, {len(r.hands)} hands: {summary}"
    ]
    for h in r.hands:
        if hand is None or h.number == hand:
            lines.extend(hand_lines(h))
    return lines


def _cards(cards: tuple[Card, ...]) -> str:
    return " ".join(str(c) for c in cards)
