"""Table hands as PHH hand histories (pure): ``export_hand(h) -> HandHistory | Skip``.

A hand is written with ``engine.phh_replay.history_from_events`` (players in PHH order, every
hole card, the showdown as ``sm`` lines, and a show of a hand won uncontested as an ``sm`` after
the folds, as pokerkit replays it) plus what PHH can say about the table: ``players``,
``seats`` (1-based, PHH order), ``seat_count``, ``table``, ``hand`` (the hand's number at its
table), ``finishing_stacks`` and ``winnings`` (after rake). PHH has no rake field, so the rake
and the evidence pointers go in user-defined fields (``_``-prefixed, which parsers ignore):
``_hand_id``, ``_rake``, ``_rake_basis_points``, ``_rake_caps``, ``_rake_no_flop_no_drop``,
``_rake_unit``, ``_rake_split`` (how the pots shared it), ``_commitment``, ``_seed`` and
``_versions`` (first and last version of the hand in the log). A dead small blind owed for
missed blinds is the player's ``antes`` entry (dead money, as PHH and pokerkit read antes) and
their live big blind a negative ``blinds_or_straddles`` entry.

Only hands PHH expresses faithfully are written. Tables run the ``seeds`` rules, pokerkit and
PHH assume others, so each exported hand is replayed by the engine under the ``phh`` profile
(pokerkit's rules, charging the table's rake) and must reach the recorded finishing stacks with
the same showdown; its ``sm`` lines are written in that replay's showdown order (pokerkit's).
Skipped, with the reason:

* voided hands and hands still in play;
* Six Plus Hold'em under the seeds ranking (trips beat a straight): PHH's ``NS`` ranks a
  straight above trips, so the file would describe another game;
* games PHH has no variant code for (pot-limit or fixed-limit Hold'em other than ``FT``,
  no-limit or fixed-limit Omaha, Six Plus other than no limit);
* a time-out or disconnection that all-in protected a player (no PHH action for it);
* hands the pokerkit rules replay differently (e.g. an incomplete all-in raise that re-opens
  the betting under one rule set and not the other).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from openpoker.dispute.check import HandReplay
from openpoker.engine import hand as engine_hand
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import AllInProtected, HandEnded, HandEvent
from openpoker.engine.phh import HandHistory, ShowMuck, TomlValue
from openpoker.engine.phh_replay import history_from_events, replay_events
from openpoker.engine.rules import Game, SixPlusRanking
from openpoker.engine.table_events import UncontestedHandShown


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip:
    hand_number: int
    hand_id: str
    reason: str


def export_hand(h: HandReplay) -> HandHistory | Skip:
    def skip(reason: str) -> Skip:
        return Skip(hand_number=h.number, hand_id=h.hand_id, reason=reason)

    started, ended = h.started, h.ended
    if h.voided is not None:
        return skip("voided")
    if started is None or ended is None:
        return skip("not finished")
    rules = started.rules
    if rules.game is Game.SIX_PLUS and rules.six_plus_ranking is SixPlusRanking.TRIPS_BEAT_STRAIGHT:
        return skip("Six Plus with trips beating a straight: PHH's NS ranks a straight above trips")
    events: list[HandEvent] = [e for _, e in h.hand_events()]
    if any(isinstance(e, AllInProtected) for e in events):
        return skip("a player was all-in protected (time-out or disconnection): no PHH action for it")
    try:
        hh = history_from_events(events)
    except EngineError as exc:
        return skip(str(exc))
    # Replay under pokerkit's rules with the table's rake: the same stacks or no faithful file.
    try:
        state, phh_events = replay_events(hh, h.hand_id, repair=False, rake=rules.rake)
    except EngineError as exc:
        return skip(f"the phh (pokerkit) rules refuse this hand: {exc}")
    order = engine_hand.fold(events[:1]).seats  # PHH player j is the seat at internal index j
    if not engine_hand.is_over(state):
        return skip("the phh (pokerkit) rules do not finish this hand with these actions")
    replayed = tuple(state.stack)  # internal order = PHH player order
    if replayed != hh.finishing_stacks:
        return skip(
            f"the phh (pokerkit) rules give stacks {list(replayed)}, "
            f"the table {list(hh.finishing_stacks or ())}"
        )
    phh_ended = next(e for e in reversed(phh_events) if isinstance(e, HandEnded))
    if phh_ended.rake != ended.rake:
        return skip(f"the phh (pokerkit) rules take rake {phh_ended.rake}, the table took {ended.rake}")
    # The replay's own history: its sm lines (and a runout after all-in shows) in pokerkit's order.
    hh = history_from_events(phh_events)
    # A winner by folds who showed: an ``sm`` after the folds, which pokerkit replays as a show
    # by the last player in the hand.
    shows = tuple(
        ShowMuck(player=order.index(e.seat), cards=e.cards)
        for _, e in h.events
        if isinstance(e, UncontestedHandShown)
    )
    hh = replace(hh, actions=(*hh.actions, *shows))
    won = {p.seat: 0 for p in ended.payouts}
    for p in ended.payouts:
        won[p.seat] += p.amount
    extras: list[tuple[str, TomlValue]] = [
        ("_hand_id", h.hand_id),
        ("_rake", ended.rake),
        ("_rake_basis_points", rules.rake.basis_points),
        ("_rake_caps", [[n, cap] for n, cap in rules.rake.caps]),
        ("_rake_no_flop_no_drop", rules.rake.no_flop_no_drop),
        ("_rake_unit", rules.rake.unit),
        ("_rake_split", rules.rake.split.value),
        ("_commitment", started.commitment),
        ("_versions", [h.first_version, h.last_version]),
    ]
    if h.reveal is not None:
        extras.append(("_seed", h.reveal.seed.hex()))
    return replace(
        hh,
        players=tuple(next(s.player for s in started.seats if s.seat == seat) for seat in order),
        seats=tuple(seat + 1 for seat in order),
        seat_count=rules.seats,
        table=h.table_id,
        hand=h.number,
        winnings=tuple(won.get(seat, 0) for seat in order),
        extras=tuple(extras),
    )
