"""Pure converters between ``poker.table.v1`` messages and engine / service values.

Seats are 1-based on the wire (``1..seat_count``) and 0-based in the engine. Views are built
from the engine's redacted queries (``engine.table.view`` / ``engine.hand.view``): a hole card is
shown only to its owner, or to everyone once shown at showdown; others are "" (hidden).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence

from google.protobuf.duration_pb2 import Duration
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.timestamp_pb2 import Timestamp

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine import hand as hand_engine
from openpoker.engine import table
from openpoker.engine.cards import Card, check_deck, parse_card
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import Street
from openpoker.engine.rules import (
    BuyInRules,
    Game,
    Profile,
    RakeRules,
    Rules,
    Stakes,
    Structure,
    TimeRules,
    seed_small_blind,
)
from openpoker.engine.seating import Debt, SeatView
from openpoker.errors import shown
from openpoker.services.table.errors import (
    InvalidAction,
    InvalidAmount,
    InvalidBuyIn,
    InvalidDeck,
    InvalidGame,
    InvalidHandId,
    InvalidHandName,
    InvalidPlayerId,
    InvalidSeat,
    InvalidStakes,
    InvalidStructure,
    InvalidTableName,
    InvalidTime,
    RequestIdRequired,
)
from openpoker.tablelog.events import HandVoided
from openpoker.tablelog.model import (
    ActionEntry,
    HandLogScan,
    HandRecord,
    LogEvent,
    TableModel,
    hand_events,
)

ID_RE = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")
HAND_ID_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._:-]{0,126}[A-Za-z0-9])?$")
PLAYER_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")  # as the wallet's account names

GAMES = {
    pb.GAME_TEXAS_HOLDEM: Game.HOLDEM,
    pb.GAME_OMAHA: Game.OMAHA,
    pb.GAME_SIX_PLUS_HOLDEM: Game.SIX_PLUS,
}
GAMES_BACK = {v: k for k, v in GAMES.items()}
STRUCTURES = {
    pb.STRUCTURE_FIXED_LIMIT: Structure.FIXED_LIMIT,
    pb.STRUCTURE_POT_LIMIT: Structure.POT_LIMIT,
    pb.STRUCTURE_NO_LIMIT: Structure.NO_LIMIT,
}
STRUCTURES_BACK = {v: k for k, v in STRUCTURES.items()}
PROFILES = {
    pb.RULES_PROFILE_UNSPECIFIED: Profile.SEEDS,
    pb.RULES_PROFILE_SEEDS: Profile.SEEDS,
    pb.RULES_PROFILE_PHH: Profile.PHH,
}
STREETS = {
    Street.PREFLOP: pb.STREET_PREFLOP,
    Street.FLOP: pb.STREET_FLOP,
    Street.TURN: pb.STREET_TURN,
    Street.RIVER: pb.STREET_RIVER,
}
ACTIONS = {
    pb.ACTION_TYPE_FOLD: "fold",
    pb.ACTION_TYPE_CHECK: "check",
    pb.ACTION_TYPE_CALL: "call",
    pb.ACTION_TYPE_BET: "bet_or_raise",
    pb.ACTION_TYPE_RAISE: "bet_or_raise",
    pb.ACTION_TYPE_SHOW: "show",
    pb.ACTION_TYPE_MUCK: "muck",
}
ENTRY_ACTIONS = {
    "fold": pb.ACTION_TYPE_FOLD,
    "check": pb.ACTION_TYPE_CHECK,
    "call": pb.ACTION_TYPE_CALL,
    "bet": pb.ACTION_TYPE_BET,
    "raise": pb.ACTION_TYPE_RAISE,
    "show": pb.ACTION_TYPE_SHOW,
    "muck": pb.ACTION_TYPE_MUCK,
    "protect": pb.ACTION_TYPE_CHECK,  # all-in protection: no chips, acts no more
}


# -- requests ----------------------------------------------------------------------------------


def table_id_of(name: str) -> str:
    """``tables/{table}`` (or a bare id) -> the table id."""
    table_id = name.removeprefix("tables/")
    if not ID_RE.fullmatch(table_id):
        raise InvalidTableName(f"not a table name: {shown(name)}", name=shown(name))
    return table_id


def hand_name_of(name: str) -> tuple[str, str]:
    """``tables/{table}/hands/{hand}`` -> (table id, hand id)."""
    parts = name.split("/")
    if len(parts) != 4 or parts[0] != "tables" or parts[2] != "hands" or not parts[3]:
        raise InvalidHandName(f"not a hand name: {shown(name)}", name=shown(name))
    return table_id_of(parts[1]), hand_id_of(parts[3])


def hand_id_of(hand_id: str) -> str:
    if not HAND_ID_RE.fullmatch(hand_id):
        raise InvalidHandId(f"not a hand id: {shown(hand_id)}", hand_id=shown(hand_id))
    return hand_id


def player_id_of(player: str) -> str:
    if not PLAYER_ID_RE.fullmatch(player):
        raise InvalidPlayerId(player=player)
    return player


def request_id_of(request_id: str) -> str:
    if not request_id or len(request_id) > 128:
        raise RequestIdRequired("request_id must be 1..128 characters")
    return request_id


def seat_in(seat: int, seats: int) -> int:
    """1-based wire seat -> 0-based engine seat."""
    if not 1 <= seat <= seats:
        raise InvalidSeat(f"seat {seat} is not in 1..{seats}", seat=seat, seats=seats)
    return seat - 1


def positive(field: str, value: int) -> int:
    if value <= 0:
        raise InvalidAmount(f"{field} must be positive, not {value}", field=field, amount=value)
    return value


def action_kind(action: pb.ActionType.ValueType) -> str:
    kind = ACTIONS.get(action)
    if kind is None:
        raise InvalidAction("action must be fold, check, call, bet, raise, show or muck")
    return str(kind)


_parsed: dict[str, Card] = {}  # card code -> card (cards are immutable values): every StartHand


def _card_of(code: str) -> Card:
    card = _parsed.get(code)
    if card is None:
        card = parse_card(code)  # raises for a bad code, which is never remembered
        if len(_parsed) < 1024:
            _parsed[code] = card
    return card


def deck_of(text: str, rules: Rules) -> tuple[Card, ...]:
    """An opened deck: card codes concatenated, top first; exactly the game's deck (52 cards, or
    the 36 of the Six Plus short deck), each once, as the engine checks it (``cards.check_deck``
    raises the engine's ``InvalidDeck``, INVALID_ARGUMENT ``INVALID_DECK`` like the error here)."""
    try:
        cards = tuple([_card_of(text[i : i + 2]) for i in range(0, len(text), 2)])
    except EngineError:
        raise InvalidDeck("sealed_deck is not a list of card codes") from None
    check_deck(rules, cards)
    return cards


def millis(duration: Duration, default: int) -> int:
    ms = duration.seconds * 1000 + duration.nanos // 1_000_000
    if ms < 0:
        raise InvalidTime("durations must not be negative")
    return ms or default


def at_ms(stamp: Timestamp, now: dt.datetime) -> int:
    if stamp.seconds or stamp.nanos:
        return stamp.seconds * 1000 + stamp.nanos // 1_000_000
    return int(now.timestamp() * 1000)


def rules_of(config: pb.TableConfig) -> Rules:
    """A ``TableConfig`` -> engine ``Rules`` (INVALID_ARGUMENT with the field when it cannot be)."""
    game = GAMES.get(config.game)
    if game is None:
        raise InvalidGame("game must be set")
    structure = STRUCTURES.get(config.structure)
    if structure is None:
        raise InvalidStructure("structure must be set")
    st = config.stakes
    if min(st.small_blind, st.big_blind, st.small_bet, st.big_bet, st.ante, config.currency_unit) < 0:
        raise InvalidStakes("stakes and currency_unit must not be negative")
    currency_unit = config.currency_unit or 100
    if structure is Structure.FIXED_LIMIT:
        small_bet = st.small_bet or st.big_blind
        stakes = Stakes(
            # Seeds 000/001 when unset: half the lower stake, in whole currency units above one.
            small_blind=st.small_blind or (seed_small_blind(small_bet, currency_unit) if small_bet else 0),
            big_blind=st.big_blind or small_bet,
            small_bet=small_bet,
            big_bet=st.big_bet or 2 * small_bet,
            ante=st.ante,
        )
    else:
        straddle = 2 * st.big_blind if config.straddle_allowed else 0
        small = st.small_blind or (seed_small_blind(st.big_blind, currency_unit) if st.big_blind else 0)
        stakes = Stakes.blinds(small, st.big_blind, ante=st.ante, straddle=straddle)
    seats = config.seat_count or 9
    buy_in = None
    if config.min_buy_in or config.max_buy_in:
        if config.min_buy_in < 0 or config.max_buy_in < 0:
            raise InvalidBuyIn("buy-in limits must not be negative")
        if config.max_buy_in and config.max_buy_in < config.min_buy_in:
            raise InvalidBuyIn("max_buy_in is below min_buy_in")
        buy_in = BuyInRules(minimum=config.min_buy_in or stakes.big_blind, maximum=config.max_buy_in or None)
    rake = RakeRules(
        basis_points=config.rake.basis_points,
        caps=tuple((i + 2, cap) for i, cap in enumerate(config.rake.caps)),
        # Seed 002's no flop, no drop unless the client turns it off (proto3 optional: unset = on).
        no_flop_no_drop=config.rake.no_flop_no_drop if config.rake.HasField("no_flop_no_drop") else True,
    )
    defaults = TimeRules()
    time = TimeRules(
        decision_ms=millis(config.time.action_time, defaults.decision_ms),
        countdown_ms=millis(config.time.countdown, defaults.countdown_ms),
        reconnect_extra_ms=millis(config.time.reconnect_grace, defaults.reconnect_extra_ms),
    )
    return Rules(
        game=game,
        structure=structure,
        stakes=stakes,
        profile=PROFILES.get(config.profile, Profile.SEEDS),
        seats=seats,
        rake=rake,
        time=time,
        buy_in=buy_in,
        currency_unit=currency_unit,
    )


def _duration(ms: int) -> Duration:
    d = Duration()
    d.FromMilliseconds(ms)
    return d


@functools.lru_cache(maxsize=1024)
def _config(rules: Rules) -> bytes:
    return config_of(rules).SerializeToString()


# rules object -> (the object, its message): a table's state keeps one Rules object, so most
# views find it by identity, without hashing the nested rules (the object is kept alive with the
# entry, so its id is never reused while the entry stands).
_by_identity: dict[int, tuple[Rules, pb.TableConfig]] = {}


def config_cached(rules: Rules) -> pb.TableConfig:
    """``config_of`` once per rules value (a table's rules never change). The message is shared:
    copy it (as a field assignment in a constructor does), never change it."""
    hit = _by_identity.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    message = pb.TableConfig.FromString(_config(rules))
    if len(_by_identity) >= 4096:
        _by_identity.clear()
    _by_identity[id(rules)] = (rules, message)
    return message


def config_of(rules: Rules) -> pb.TableConfig:
    st = rules.stakes
    limits = rules.default_buy_in()
    return pb.TableConfig(
        game=GAMES_BACK[rules.game],
        structure=STRUCTURES_BACK[rules.structure],
        stakes=pb.Stakes(
            small_blind=st.small_blind,
            big_blind=st.big_blind,
            small_bet=st.small_bet,
            big_bet=st.big_bet,
            ante=st.ante,
        ),
        seat_count=rules.seats,
        profile=pb.RULES_PROFILE_PHH if rules.profile is Profile.PHH else pb.RULES_PROFILE_SEEDS,
        min_buy_in=limits.minimum,
        max_buy_in=limits.maximum or 0,
        rake=pb.RakeRules(
            basis_points=rules.rake.basis_points,
            caps=[cap for _, cap in rules.rake.caps],
            no_flop_no_drop=rules.rake.no_flop_no_drop,
        ),
        time=pb.TimeRules(
            action_time=_duration(rules.time.decision_ms),
            countdown=_duration(rules.time.countdown_ms),
            reconnect_grace=_duration(rules.time.reconnect_extra_ms),
        ),
        straddle_allowed=st.straddle > 0,
        currency_unit=rules.currency_unit,
        rules_version=rules.version,
    )


# -- views -------------------------------------------------------------------------------------


def _cards(cards: Sequence[Card]) -> list[str]:
    return [str(c) for c in cards]


def _seat_status(info: table.SeatInfo) -> pb.SeatStatus.ValueType:
    if info.state is SeatView.EMPTY:
        return pb.SEAT_STATUS_EMPTY
    if info.state is SeatView.SITTING_OUT:
        return pb.SEAT_STATUS_SITTING_OUT
    if info.state is SeatView.WAITING_FOR_BIG_BLIND:
        return pb.SEAT_STATUS_WAITING
    return pb.SEAT_STATUS_READY


def _hole(player: hand_engine.PlayerView, count: int) -> list[str]:
    if player.folded:
        return []
    return _cards(player.hole) if player.hole is not None else [""] * count


def _seats(
    into: RepeatedCompositeFieldContainer[pb.Seat],
    model: TableModel,
    infos: Sequence[table.SeatInfo],
    hand_view: hand_engine.HandView | None,
    button: int,
    *,
    viewer: str | None = None,
) -> None:
    """The table's seats, each built in place in ``into`` (``add``: no copy per seat): the
    viewer's own showdown choices on their seat, and between hands the cards a winner by folds
    showed, to everyone."""
    state = model.state
    assert state is not None
    players = {p.seat: p for p in hand_view.players} if hand_view is not None else {}
    hs = state.hand
    for info in infos:
        seat = into.add(
            seat=info.seat + 1,
            status=_seat_status(info),
            player_id=info.player or "",
            stack=info.stack,
            is_button=info.seat == button,
            disconnected=info.disconnected,
            owes_big_blind=info.debt is not Debt.NONE,
            owes_small_blind=info.debt is Debt.BIG_BLIND,
        )
        if viewer is not None and info.player == viewer:
            seat.show_preferences.auto_muck = info.auto_muck
            seat.show_preferences.show_uncontested = info.show_uncontested
        if info.shown and hs is None:
            seat.hole_cards.extend(_cards(info.shown))
        p = players.get(info.seat)
        if p is not None and hs is not None:
            i = hs.index_of[info.seat]
            seat.status = (
                pb.SEAT_STATUS_FOLDED
                if p.folded
                else pb.SEAT_STATUS_ALL_IN
                if p.all_in
                else pb.SEAT_STATUS_ACTIVE
            )
            seat.stack = p.stack
            seat.bet = p.bet
            seat.committed = hs.start_stacks[i] - hs.stack[i]
            seat.hole_cards.extend(_hole(p, state.rules.hole_cards))


def table_view(model: TableModel, viewer: str | None, *, into: pb.Table | None = None) -> pb.Table:
    """The table as ``viewer`` may see it (None = spectator). Written into ``into`` (an empty
    message, e.g. a reply's ``table`` field) when given: no copy of the view into the reply."""
    state = model.state
    assert state is not None
    view = table.view(state, viewer or None)
    button = view.positions.button if view.positions is not None else -1
    if view.hand is not None:
        status = pb.TABLE_STATUS_IN_HAND
    elif table.can_start_hand(state):
        status = pb.TABLE_STATUS_BETWEEN_HANDS
    else:
        status = pb.TABLE_STATUS_WAITING
    out = pb.Table() if into is None else into
    out.name = f"tables/{model.table_id}"
    out.table_id = model.table_id
    out.config.CopyFrom(config_cached(state.rules))
    out.status = status
    out.version = model.version
    _seats(out.seats, model, view.seats, view.hand, button, viewer=viewer or None)
    out.button_seat = button + 1 if button >= 0 else 0
    out.hands_played = state.hands_played
    out.last_hand_id = model.hand_order[-1] if model.hand_order else ""
    if model.created_at is not None:
        set_stamp(out.created_at, model.created_at)
    live = model.current_hand
    if live is not None and view.hand is not None:
        hand_of(  # written in place: no second message and copy per reply
            model.table_id,
            live,
            model.hand_log,
            viewer,
            rules_holes=state.rules.hole_cards,
            live=state.hand,
            live_view=view.hand,
            into=out.current_hand,
            scan=model.hand_scan(),
        )
    return out


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def set_stamp(stamp: Timestamp, when: dt.datetime) -> None:
    """``stamp.FromDatetime(when)`` for an aware datetime, without its pure-Python detour
    (a measurable share of every reply: each view carries the table's creation time). A naive
    datetime is taken as UTC, as ``FromDatetime`` does."""
    delta = (when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)) - EPOCH
    stamp.seconds = delta.days * 86400 + delta.seconds
    stamp.nanos = delta.microseconds * 1000


def action_record(entry: ActionEntry) -> pb.ActionRecord:
    return pb.ActionRecord(
        seat=entry.seat + 1,
        action=ENTRY_ACTIONS[entry.kind],
        amount=entry.amount,
        street=STREETS[entry.street] if entry.street is not None else pb.STREET_SHOWDOWN,
        automatic=entry.automatic,
        all_in=entry.all_in,
    )


def _legal(hs: hand_engine.HandState, seat: int) -> pb.LegalActions | None:
    legal = hand_engine.legal_actions(hs, seat)
    if legal is None:
        return None
    kinds: list[pb.ActionType.ValueType] = []
    if legal.can_fold:
        kinds.append(pb.ACTION_TYPE_FOLD)
    if legal.can_check:
        kinds.append(pb.ACTION_TYPE_CHECK)
    if legal.to_call > 0:
        kinds.append(pb.ACTION_TYPE_CALL)
    if legal.can_raise:
        kinds.append(pb.ACTION_TYPE_RAISE if hs.highest > 0 else pb.ACTION_TYPE_BET)
    return pb.LegalActions(
        seat=seat + 1,
        actions=kinds,
        call_amount=legal.to_call,
        min_raise_to=legal.min_raise_to if legal.can_raise else 0,
        max_raise_to=legal.max_raise_to if legal.can_raise else 0,
    )


def hand_of(
    table_id: str,
    record: HandRecord,
    log: Sequence[LogEvent],
    viewer: str | None,
    *,
    rules_holes: int,
    commitment: str = "",
    reveal_all: bool = False,
    live: hand_engine.HandState | None = None,
    live_view: hand_engine.HandView | None = None,
    into: pb.Hand | None = None,
    scan: HandLogScan | None = None,
) -> pb.Hand:
    """A hand from its log, redacted for ``viewer`` (a player id; None = spectator) unless
    ``reveal_all`` (auditors and the dealer, finished hands only). Written into ``into`` (an
    empty message, e.g. a reply's field) when given, else into a new message."""
    out = pb.Hand() if into is None else into
    out.name = f"tables/{table_id}/hands/{record.hand_id}"
    out.hand_id = record.hand_id
    out.hand_number = record.number
    out.first_version = record.first_version if record.finished else 0
    out.last_version = record.last_version
    out.SetInParent()  # present even when every field above is a default (as before)
    # What the message needs from the log besides the state: the table's cached scan of its
    # live hand (only the events since the previous reply are read), else one pass here.
    if scan is None or scan.log is not log:
        scan = HandLogScan(log)
    scan.catch_up()
    showdown = scan.showdown
    if not scan.any_events:
        return out
    # The live hand's state is the cached table's (no re-fold on the hot path).
    hs = live if live is not None else hand_engine.fold(hand_events(log))
    seat = next((s for i, s in enumerate(hs.seats) if hs.players[i] == viewer), None) if viewer else None
    # The caller's view of the live hand is reused when given (same state, same viewer).
    view = live_view if live_view is not None else hand_engine.view(hs, seat)
    over = view.over or record.voided
    if over:
        out.street = pb.STREET_ENDED
    elif hs.phase == hand_engine.SHOWDOWN or (showdown and hand_engine.to_act(hs) is None):
        out.street = pb.STREET_SHOWDOWN
    else:
        out.street = STREETS[view.street]
    out.outcome = (
        pb.HAND_OUTCOME_VOIDED
        if record.voided
        else pb.HAND_OUTCOME_IN_PROGRESS
        if not over
        else pb.HAND_OUTCOME_SHOWDOWN
        if showdown
        else pb.HAND_OUTCOME_WON_UNCONTESTED
    )
    out.button_seat = view.button + 1
    out.board.extend([str(c) for c in view.board])
    if not over:
        out.pots.extend(
            [pb.Pot(amount=p.amount, eligible_seats=[s + 1 for s in p.eligible]) for p in view.pots]
        )
        if view.to_act is not None:
            legal = _legal(hs, view.to_act)
            if legal is not None:
                out.to_act.CopyFrom(legal)
    add_action = out.actions.add  # built in place: no copy per record
    for a in scan.actions.entries:
        add_action(
            seat=a.seat + 1,
            action=ENTRY_ACTIONS[a.kind],
            amount=a.amount,
            street=STREETS[a.street] if a.street is not None else pb.STREET_SHOWDOWN,
            automatic=a.automatic,
            all_in=a.all_in,
        )
    out.deck_commitment = commitment or scan.commitment or ""
    for e in scan.awarded:
        out.pots.append(pb.Pot(amount=e.amount, eligible_seats=[s + 1 for s in e.eligible]))
        for w in e.winners:
            out.payouts.append(
                pb.Payout(
                    seat=w.seat + 1,
                    player_id=hs.players[hs.index_of[w.seat]],
                    amount=w.amount,
                    pot_index=e.index,
                    hand_description=scan.shown.get(w.seat, ""),
                )
            )
    if scan.rake is not None:
        out.rake = scan.rake
    add_seat = out.seats.add
    for i, s in enumerate(hs.seats):
        p = view.players[i]
        cards = _cards(hs.hole[i]) if reveal_all or s in scan.revealed else _hole(p, rules_holes)
        if reveal_all and p.folded:
            cards = _cards(hs.hole[i])
        add_seat(
            seat=s + 1,
            status=pb.SEAT_STATUS_FOLDED
            if p.folded
            else pb.SEAT_STATUS_ALL_IN
            if p.all_in
            else pb.SEAT_STATUS_ACTIVE,
            player_id=p.player,
            stack=p.stack,
            bet=p.bet,
            committed=hs.start_stacks[i] - hs.stack[i],
            hole_cards=cards,
            is_button=s == view.button,
        )
    if record.voided:
        for item in log:
            if isinstance(item, HandVoided):
                for x in item.returned:
                    for seat_msg in out.seats:
                        if seat_msg.seat == x.seat + 1:
                            seat_msg.stack = x.amount
                            seat_msg.committed = 0
    return out
