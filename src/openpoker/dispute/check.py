"""Every check of a dispute replay over one table's log, as a pure function.

``replay_table(table_id, log, reveals=..., wallet=...)`` walks the log in order and stops at the
first broken check, which it names (``Check``) with the table, the version and the hand:

1. ``versions``: envelope versions are 1, 2, 3, ... without a gap, all of this table's stream;
2. ``message_id``: each message was stored under ``Nats-Msg-Id`` ``<table>:<version>:<epoch>``;
3. ``hash_chain``: each envelope's ``prev_hash`` is the previous envelope's hash and its own hash
   recomputes (``eventstore.chain``), so no recorded field was changed afterwards;
   ``signature`` (with a keyring): the table writer's key signed that hash
   (``eventstore.signing``), so nobody without the key re-sealed the chain;
4. ``epochs``: writer epochs never decrease, each ``OwnerChanged`` raises the epoch and is
   written under it (fencing held: no stale owner appended after a newer one);
5. ``decode``: every event decodes (``engine.codec``);
6. ``seed``: every finished hand's revealed seed (``RNG_AUDIT``) opens the commitment logged in
   ``HandStarted`` (``shuffle.verify_record``);
7. ``cards``: the deck the seed derives holds every card the log says was dealt at the position
   the engine deals it from (hole cards one at a time clockwise, then the board), and equals the
   deck recorded in ``HandStarted``;
8. ``refold``: the table log folds (``tablelog.model``: ``engine.table`` plus voids and
   owner changes), each hand's plan (button, blinds, who is dealt in) is the one the table rules
   give, and the hand re-decided by the engine under its recorded rules from the derived deck,
   with the players' recorded decisions as commands, produces exactly the recorded events:
   every forced bet, card, follow-on, pot, rake and payout recomputed equal;
9. ``wallet``: the wallet's ledger (``WALLET_EVENTS``) has an intact hash chain and, with a
   keyring, the wallet writer's signatures (checked once the table log's own checks passed,
   before any hand is judged; a bad signature is a ``signature`` failure), and it settled each finished
   hand once, with the table's rake, each player's contribution (start - final + won) and each
   payout; a voided hand is not settled.

A hand whose seed or settlement is not recorded yet is ``pending`` (not a failure) only when it
is the table's latest hand: the dealer reveals and settles right after a hand ends.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from enum import StrEnum
from typing import Protocol

from openpoker.dispute.evidence import LoggedEnvelope, RevealRecord, WalletHand
from openpoker.engine import hand as engine_hand
from openpoker.engine import table as engine_table
from openpoker.engine.blinds import HandPlan
from openpoker.engine.cards import Card
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import (
    Act,
    ActionKind,
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    HandCommand,
    HandEnded,
    HandEvent,
    HandStarted,
    HoleCardsDealt,
    Muck,
    ProtectAllIn,
    Show,
)
from openpoker.engine.hand_setup import HandSetup
from openpoker.engine.rules import Profile
from openpoker.engine.table_events import HandScheduled, HandVoided, ShowPreferencesSet, UncontestedHandShown
from openpoker.eventstore.chain import GENESIS, compute_hash
from openpoker.eventstore.envelope import msg_id
from openpoker.eventstore.signing import TABLE_WRITER, Keyring, check_signature
from openpoker.shuffle import Check as ShuffleCheck
from openpoker.shuffle import DealtCard, ShuffleRecord, derive_deck, verify_record
from openpoker.shuffle.errors import ShuffleError
from openpoker.tablelog.events import OwnerChanged
from openpoker.tablelog.model import LogEvent, TableModel
from openpoker.tablelog.store import from_recorded


class Check(StrEnum):
    """The checks, in the order they run. Reported in --json output: never rename."""

    VERSIONS = "versions"
    MESSAGE_ID = "message_id"
    HASH_CHAIN = "hash_chain"
    SIGNATURE = "signature"
    EPOCHS = "epochs"
    DECODE = "decode"
    SEED = "seed"
    CARDS = "cards"
    REFOLD = "refold"
    WALLET = "wallet"


class HandStatus(StrEnum):
    VERIFIED = "verified"  # every check passed
    PENDING = "pending"  # ended; its seed or settlement is not recorded yet (latest hand only)
    IN_PROGRESS = "in_progress"  # the log ends inside it (what is there re-folds)
    VOIDED = "voided"
    FAILED = "failed"
    NOT_CHECKED = "not_checked"  # another hand was asked for (--hand)


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    check: Check
    table_id: str
    version: int | None
    hand_id: str | None
    hand_number: int | None
    detail: str

    def describe(self) -> str:
        where = f"table {self.table_id}"
        if self.version is not None:
            where += f", version {self.version}"
        if self.hand_id is not None:
            where += f", hand {self.hand_number} ({self.hand_id})"
        return f"{self.check.value} check failed at {where}: {self.detail}"

    def as_dict(self) -> dict[str, object]:
        return {
            "check": self.check.value,
            "table": self.table_id,
            "version": self.version,
            "hand": self.hand_number,
            "hand_id": self.hand_id,
            "detail": self.detail,
        }


@dataclass(slots=True, kw_only=True)
class HandReplay:
    """One hand as found in the log: its events with their versions and what was checked."""

    table_id: str
    hand_id: str
    number: int  # 1 for the table's first hand (voided ones count)
    first_version: int
    last_version: int = 0
    # HandScheduled .. end, and a show of the hand won uncontested after it
    events: list[tuple[int, LogEvent]] = field(default_factory=list)
    status: HandStatus = HandStatus.NOT_CHECKED
    pending: list[str] = field(default_factory=list)
    reveal: RevealRecord | None = None
    wallet: WalletHand | None = None
    plan: HandPlan | None = None  # the plan the table rules give (None: not computable)
    setup: HandSetup | None = None  # the setup that plan gives, deck not yet filled in

    @property
    def started(self) -> HandStarted | None:
        return next((e for _, e in self.events if isinstance(e, HandStarted)), None)

    @property
    def ended(self) -> HandEnded | None:
        return next((e for _, e in self.events if isinstance(e, HandEnded)), None)

    @property
    def voided(self) -> HandVoided | None:
        return next((e for _, e in self.events if isinstance(e, HandVoided)), None)

    def hand_events(self) -> list[tuple[int, HandEvent]]:
        return [(v, e) for v, e in self.events if isinstance(e, engine_table.HAND_EVENT_TYPES)]


@dataclass(slots=True, kw_only=True)
class TableReplay:
    table_id: str
    envelopes: int = 0
    last_version: int = 0
    epochs: list[int] = field(default_factory=list)  # each writer epoch, in order
    first_recorded: dt.datetime | None = None
    last_recorded: dt.datetime | None = None
    hands: list[HandReplay] = field(default_factory=list)
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


class _Broken(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.describe())
        self.failure = failure


def replay_table(
    table_id: str,
    log: Sequence[LoggedEnvelope],
    *,
    reveals: Mapping[str, RevealRecord],
    wallet: Mapping[tuple[str, int], WalletHand],
    only_hand: int | None = None,
    wallet_chain_problem: str = "",
    keyring: Keyring | None = None,
    wallet_signature_problem: str = "",
) -> TableReplay:
    """Run every check over ``log`` (in stream order); ``reveals`` by hand id.

    With ``only_hand`` the whole log is still checked for integrity and folded, but the
    per-hand checks (seed, cards, re-decision, wallet) run for that hand only.
    ``wallet_chain_problem``: the ledger's hash chain is broken (``verify_chain``), so no
    settlement in it is evidence: the ``wallet`` check fails after the table log's own checks,
    before any hand is judged. ``keyring``: the published signing keys; each envelope must be
    signed by a table key in it (None: signatures are not checked). ``wallet_signature_problem``:
    the ledger's first envelope not signed by a wallet key, a ``signature`` failure.
    """
    out = TableReplay(table_id=table_id)
    try:
        _walk(
            out,
            log,
            reveals=reveals,
            wallet=wallet,
            only_hand=only_hand,
            wallet_problem=wallet_chain_problem,
            keyring=keyring,
            wallet_signature_problem=wallet_signature_problem,
        )
    except _Broken as broken:
        out.failure = broken.failure
        for h in out.hands:
            if h.number == broken.failure.hand_number and broken.failure.check in _HAND_CHECKS:
                h.status = HandStatus.FAILED
    return out


# Checks that judge one hand (the others judge the log around it).
_HAND_CHECKS = frozenset({Check.SEED, Check.CARDS, Check.REFOLD, Check.WALLET})


def _walk(
    out: TableReplay,
    log: Sequence[LoggedEnvelope],
    *,
    reveals: Mapping[str, RevealRecord],
    wallet: Mapping[tuple[str, int], WalletHand],
    only_hand: int | None,
    wallet_problem: str,
    keyring: Keyring | None = None,
    wallet_signature_problem: str = "",
) -> None:
    table_id = out.table_id
    model = TableModel(table_id=table_id)
    prev_hash = GENESIS
    prev_epoch = 0
    last_owner_epoch = 0
    current: HandReplay | None = None

    def fail(check: Check, version: int | None, detail: str, h: HandReplay | None = None) -> _Broken:
        return _Broken(
            Failure(
                check=check,
                table_id=table_id,
                version=version,
                hand_id=h.hand_id if h else None,
                hand_number=h.number if h else None,
                detail=detail,
            )
        )

    for expected_version, logged in enumerate(log, start=1):
        env = logged.envelope
        v = env.version
        # 1. versions
        if env.stream_id != table_id:
            raise fail(
                Check.VERSIONS, v, f"an envelope of stream {env.stream_id!r} in this table's log", current
            )
        if v != expected_version:
            got = "missing" if v > expected_version else "repeated or out of order"
            raise fail(
                Check.VERSIONS,
                v,
                f"version {v} where {expected_version} was due (version {expected_version} {got})",
                current,
            )
        # 2. message id
        want_id = msg_id(table_id, v, env.owner_epoch)
        if logged.msg_id != want_id:
            raise fail(
                Check.MESSAGE_ID, v, f"stored as message id {logged.msg_id!r}, expected {want_id!r}", current
            )
        # 3. hash chain
        if env.prev_hash != prev_hash:
            raise fail(Check.HASH_CHAIN, v, "prev_hash is not the previous envelope's hash", current)
        if compute_hash(env, env.prev_hash) != env.hash:
            raise fail(Check.HASH_CHAIN, v, "the envelope's hash does not match its content", current)
        if keyring is not None:
            unsigned = check_signature(env, keyring, writer=TABLE_WRITER)
            if unsigned is not None:
                raise fail(Check.SIGNATURE, v, unsigned.describe(), current)
        # 4. epochs
        if env.owner_epoch < prev_epoch:
            raise fail(Check.EPOCHS, v, f"writer epoch {env.owner_epoch} after epoch {prev_epoch}", current)
        # 5. decode
        try:
            events: list[LogEvent] = [from_recorded(r) for r in env.events]
        except Exception as exc:  # any malformed payload: name it, never crash the replay
            raise fail(
                Check.DECODE, v, f"an event does not decode: {type(exc).__name__}: {exc}", current
            ) from exc
        for event in events:
            if isinstance(event, OwnerChanged):
                if event.epoch <= last_owner_epoch:
                    raise fail(
                        Check.EPOCHS, v, f"owner change to epoch {event.epoch} after epoch {last_owner_epoch}"
                    )
                if event.epoch != env.owner_epoch:
                    raise fail(
                        Check.EPOCHS,
                        v,
                        f"owner change to epoch {event.epoch} written under epoch {env.owner_epoch}",
                    )
                last_owner_epoch = event.epoch
                out.epochs.append(event.epoch)
        if env.owner_epoch > prev_epoch and env.owner_epoch not in out.epochs:
            out.epochs.append(env.owner_epoch)
        prev_hash, prev_epoch = env.hash, env.owner_epoch
        out.envelopes, out.last_version = v, v
        out.first_recorded = out.first_recorded or env.recorded_at
        out.last_recorded = env.recorded_at
        # 8. refold (the table as a whole), one event at a time so each hand's plan is
        # computed from the table exactly as it stood when the hand was scheduled.
        for event in events:
            if isinstance(event, HandScheduled):
                current = HandReplay(
                    table_id=table_id,
                    hand_id=event.hand_id,
                    number=len(out.hands) + 1,
                    first_version=v,
                )
                out.hands.append(current)
                if model.state is not None and model.state.hand is None:
                    try:
                        current.plan, current.setup = engine_table.next_setup(
                            model.state, hand_id=event.hand_id, deck=()
                        )
                    except EngineError as exc:
                        raise fail(Check.REFOLD, v, f"no hand can be scheduled here: {exc}", current) from exc
            if current is not None and current.last_version == 0:
                current.events.append((v, event))
            elif (
                current is not None
                and isinstance(event, UncontestedHandShown)
                and event.hand_id == current.hand_id
            ):
                current.events.append((v, event))  # its winner by folds showed after its end
            try:
                model.apply(
                    [event],
                    version=v,
                    sequence=logged.sequence,
                    envelope_hash=env.hash,
                    command_id=env.command_id,
                    recorded_at=env.recorded_at,
                )
            except Exception as exc:  # a tampered log may break any invariant of the fold
                detail = f"{type(event).__name__} does not fold onto the table: {type(exc).__name__}: {exc}"
                raise fail(Check.REFOLD, v, detail, current) from exc
            if (
                current is not None
                and isinstance(event, HandEnded | HandVoided)
                and current.last_version == 0
            ):
                current.last_version = v
    if wallet_problem:
        raise fail(Check.WALLET, None, f"the wallet's ledger hash chain is broken {wallet_problem}")
    if wallet_signature_problem:
        raise fail(Check.SIGNATURE, None, f"the wallet's ledger: {wallet_signature_problem}")
    for i, h in enumerate(out.hands):
        if only_hand is not None and h.number != only_hand:
            h.status = HandStatus.NOT_CHECKED
            continue
        latest = i == len(out.hands) - 1
        _check_hand(h, reveals=reveals, wallet=wallet, latest=latest, fail=fail)


def _check_hand(
    h: HandReplay,
    *,
    reveals: Mapping[str, RevealRecord],
    wallet: Mapping[tuple[str, int], WalletHand],
    latest: bool,
    fail: _FailFn,
) -> None:
    recorded = h.hand_events()
    scheduled = h.events[0]
    assert isinstance(scheduled[1], HandScheduled)
    if h.plan is None or h.setup is None:
        raise fail(Check.REFOLD, scheduled[0], "a hand was scheduled while another was in play", h)
    if scheduled[1].plan != h.plan:
        raise fail(
            Check.REFOLD,
            scheduled[0],
            f"the recorded plan {_plan_text(scheduled[1].plan)} is not the rules' plan {_plan_text(h.plan)}",
            h,
        )
    if not recorded or not isinstance(recorded[0][1], HandStarted):
        if h.voided is not None:
            h.status = HandStatus.VOIDED
            return
        if latest:
            h.status = HandStatus.IN_PROGRESS  # scheduled, the hand's first events not written yet
            return
        raise fail(Check.REFOLD, scheduled[0], "HandScheduled is not followed by HandStarted", h)
    start_version, started = recorded[0]
    assert isinstance(started, HandStarted)
    ended = h.ended
    deck = started.deck
    # 6-7. seed and cards
    h.reveal = reveals.get(h.hand_id)
    if h.reveal is not None:
        deck = _check_shuffle(h, started, start_version, recorded, fail)
    elif ended is not None:
        if not latest:
            raise fail(Check.SEED, start_version, "no revealed seed in the audit record for this hand", h)
        h.pending.append("seed not revealed yet")
    # 8. re-decide the hand
    _redecide(h, replace(h.setup, deck=deck, commitment=started.commitment), recorded, fail)
    if h.voided is not None:
        h.status = HandStatus.VOIDED
        w = wallet.get((h.table_id, h.number))
        if w is not None and w.settled:
            raise fail(Check.WALLET, h.last_version, "the wallet settled a hand the table voided", h)
        h.wallet = w
        return
    if ended is None:
        h.status = HandStatus.IN_PROGRESS
        return
    # 9. wallet
    h.wallet = wallet.get((h.table_id, h.number))
    if h.wallet is None or not h.wallet.settled:
        if h.wallet is not None and h.wallet.voided:
            raise fail(Check.WALLET, h.last_version, "the wallet voided a hand the table finished", h)
        if not latest:
            raise fail(Check.WALLET, h.last_version, "the wallet has no settlement of this hand", h)
        h.pending.append("not settled in the wallet yet")
    else:
        problem = _settlement_problem(started, ended, h.wallet)
        if problem:
            raise fail(Check.WALLET, h.last_version, problem, h)
    h.status = HandStatus.PENDING if h.pending else HandStatus.VERIFIED


class _FailFn(Protocol):
    def __call__(
        self, check: Check, version: int | None, detail: str, h: HandReplay | None = None, /
    ) -> _Broken: ...


def _plan_text(plan: HandPlan) -> str:
    posts = ", ".join(f"seat {p.seat} {p.kind.value} {p.amount}" for p in plan.posts)
    return f"(button {plan.positions.button}, dealt {list(plan.dealt)}, posts {posts})"


def dealt_cards(
    started: HandStarted, recorded: Sequence[tuple[int, HandEvent]]
) -> list[tuple[int, DealtCard]]:
    """Each dealt card with the deck position the engine deals it from, and its version.

    Hole cards go one at a time clockwise from the first seat left of the button (heads-up the
    button first), ``hole_cards`` rounds; the board follows, with no burn cards (``engine.hand``).
    """
    state = engine_hand.fold([started])
    n = state.n
    order = list(range(n)) if n > 2 else [1, 0]
    first_position = {state.seats[i]: p for p, i in enumerate(order)}
    next_board = started.rules.hole_cards * n
    out: list[tuple[int, DealtCard]] = []
    for version, e in recorded:
        if isinstance(e, HoleCardsDealt):
            p = first_position.get(e.seat, -1)
            out.extend(
                (version, DealtCard(position=p + k * n if p >= 0 else -1, card=c))
                for k, c in enumerate(e.cards)
            )
        elif isinstance(e, BoardDealt):
            for c in e.cards:
                out.append((version, DealtCard(position=next_board, card=c)))
                next_board += 1
    return out


def _check_shuffle(
    h: HandReplay,
    started: HandStarted,
    start_version: int,
    recorded: Sequence[tuple[int, HandEvent]],
    fail: _FailFn,
) -> tuple[Card, ...]:
    reveal = h.reveal
    assert reveal is not None
    if reveal.commitment.lower() != started.commitment.lower():
        raise fail(
            Check.SEED,
            start_version,
            f"the audit record's commitment {reveal.commitment[:16]}... is not the logged "
            f"{started.commitment[:16]}...",
            h,
        )
    dealt = dealt_cards(started, recorded)
    record = ShuffleRecord(
        version=reveal.version,
        hand_id=h.hand_id,
        deck_size=reveal.deck_size,
        commitment=started.commitment,
        seed=reveal.seed,
        dealt=tuple(d for _, d in dealt),
    )
    result = verify_record(record)
    if not result.ok:
        seed_checks = (
            ShuffleCheck.POSITION_OUT_OF_RANGE,
            ShuffleCheck.DUPLICATE_POSITION,
            ShuffleCheck.DECK_MISMATCH,
        )
        check = Check.CARDS if result.check in seed_checks else Check.SEED
        version = next((v for v, d in dealt if d.position == result.position), start_version)
        raise fail(check, version, f"{result.check}: {result.detail}", h)
    try:
        derived = derive_deck(reveal.seed, h.hand_id, reveal.deck_size, reveal.version)
    except ShuffleError as exc:  # verify_record accepted it, so this is not expected
        raise fail(Check.SEED, start_version, str(exc), h) from exc
    if tuple(derived) != tuple(started.deck):
        at = next(
            (i for i, (a, b) in enumerate(zip(derived, started.deck, strict=False)) if a != b),
            min(len(derived), len(started.deck)),
        )
        raise fail(
            Check.CARDS,
            start_version,
            f"the deck recorded in HandStarted differs from the seed's deck at position {at}",
            h,
        )
    return tuple(derived)


def _command(e: HandEvent, profile: Profile) -> HandCommand | None:
    """The player's (or the table's forced) decision a recorded event is the first fact of."""
    match e:
        case Folded(seat=seat):
            return Act(seat=seat, action=ActionKind.FOLD)
        case Checked(seat=seat):
            return Act(seat=seat, action=ActionKind.CHECK)
        case Called(seat=seat):
            return Act(seat=seat, action=ActionKind.CALL)
        case BetPlaced(seat=seat, to=to):
            return Act(seat=seat, action=ActionKind.BET_OR_RAISE, amount=to)
        case AllInProtected(seat=seat):
            return ProtectAllIn(seat=seat)
        case CardsShown(seat=seat) if profile is Profile.PHH:
            return Show(seat=seat)
        case CardsMucked(seat=seat) if profile is Profile.PHH:
            return Muck(seat=seat)
        case _:
            return None


def _redecide(
    h: HandReplay, setup: HandSetup, recorded: Sequence[tuple[int, HandEvent]], fail: _FailFn
) -> None:
    try:
        state, opening = engine_hand.begin(setup)
    except EngineError as exc:
        raise fail(Check.REFOLD, recorded[0][0], f"the hand cannot start as scheduled: {exc}", h) from exc
    i = _compare(h, recorded, 0, opening, fail)
    profile = setup.rules.profile
    choices = _auto_muck_changes(h)
    muck_on = set(setup.auto_muck if setup.auto_muck is not None else ())
    if setup.auto_muck is None and setup.rules.auto_muck:
        muck_on = {s.seat for s in setup.seats}
    while i < len(recorded):
        if i in choices:  # a player's auto-muck chosen during the hand counts from here
            for seat, on in choices[i]:
                (muck_on.add if on else muck_on.discard)(seat)
            engine_hand.set_auto_muck(state, tuple(sorted(muck_on)))
        version, e = recorded[i]
        command = _command(e, profile)
        if command is None:
            raise fail(
                Check.REFOLD,
                version,
                f"recorded {_event_text(e)} where the rules wait for a decision of seat "
                f"{engine_hand.to_act(state)}",
                h,
            )
        try:
            produced = engine_hand.apply(state, command)
        except EngineError as exc:
            raise fail(
                Check.REFOLD, version, f"recorded {_event_text(e)} is refused by the rules: {exc}", h
            ) from exc
        i = _compare(h, recorded, i, produced, fail)
    if h.ended is not None and not engine_hand.is_over(state):
        raise fail(Check.REFOLD, h.last_version, "HandEnded recorded while the rules say the hand goes on", h)


def _auto_muck_changes(h: HandReplay) -> dict[int, list[tuple[int, bool]]]:
    """The players' auto-muck choices made during the hand, by the index of the hand event
    recorded after them (``ShowPreferencesSet`` is a table event between hand events)."""
    out: dict[int, list[tuple[int, bool]]] = {}
    count = 0
    for _, e in h.events:
        if isinstance(e, engine_table.HAND_EVENT_TYPES):
            count += 1
        elif isinstance(e, ShowPreferencesSet):
            out.setdefault(count, []).append((e.seat, e.auto_muck))
    return out


def _compare(
    h: HandReplay,
    recorded: Sequence[tuple[int, HandEvent]],
    i: int,
    produced: Sequence[HandEvent],
    fail: _FailFn,
) -> int:
    for want in produced:
        if i >= len(recorded):
            if h.voided is not None or h.last_version == 0:
                return i  # voided mid-way, or the log ends inside the hand
            raise fail(Check.REFOLD, h.last_version, f"the rules give {_event_text(want)}, not recorded", h)
        version, got = recorded[i]
        if got != want:
            cards = isinstance(got, HoleCardsDealt | BoardDealt) and type(got) is type(want)
            raise fail(Check.CARDS if cards else Check.REFOLD, version, _difference(got, want), h)
        i += 1
    return i


def _difference(got: HandEvent, want: HandEvent) -> str:
    """What differs between a recorded event and the one the rules give: the fields if the
    types agree, else both events."""
    if type(got) is type(want) and not isinstance(got, HandStarted):
        fields = [f.name for f in dataclass_fields(got) if getattr(got, f.name) != getattr(want, f.name)]
        name = type(got).__name__
        parts = [
            f"{name}.{f} recorded {getattr(got, f)!r}, the rules give {getattr(want, f)!r}" for f in fields
        ]
        return "; ".join(parts)
    return f"recorded {_event_text(got)}, the rules give {_event_text(want)}"


def _event_text(e: object) -> str:
    text = repr(e)
    if isinstance(e, HandStarted):
        text = f"HandStarted(hand_id={e.hand_id!r}, button={e.button}, seats={e.seats!r})"
    return text if len(text) <= 400 else text[:397] + "..."


def contributions(started: HandStarted, ended: HandEnded) -> dict[str, int]:
    """What each player put in and did not get back uncalled: start - final + won (non-zero)."""
    player_of = {s.seat: s.player for s in started.seats}
    final = {e.seat: e.amount for e in ended.stacks}
    won: dict[int, int] = {}
    for p in ended.payouts:
        won[p.seat] = won.get(p.seat, 0) + p.amount
    out: dict[str, int] = {}
    for s in started.seats:
        put_in = s.stack - final.get(s.seat, s.stack) + won.get(s.seat, 0)
        if put_in:
            out[player_of[s.seat]] = put_in
    return out


def payouts(started: HandStarted, ended: HandEnded) -> dict[str, int]:
    player_of = {s.seat: s.player for s in started.seats}
    out: dict[str, int] = {}
    for p in ended.payouts:
        if p.amount:
            out[player_of[p.seat]] = out.get(player_of[p.seat], 0) + p.amount
    return out


def _settlement_problem(started: HandStarted, ended: HandEnded, w: WalletHand) -> str:
    put_in = contributions(started, ended)
    paid = payouts(started, ended)
    if w.rake != ended.rake:
        return f"the wallet settled rake {w.rake}, the table took {ended.rake}"
    if w.rake_paid != ended.rake:
        return f"the wallet moved {w.rake_paid} to the house as rake, the table took {ended.rake}"
    if w.pot != sum(put_in.values()):
        return f"the wallet settled a pot of {w.pot}, the table's players put in {sum(put_in.values())}"
    if w.contributions != put_in:
        return (
            f"the wallet took contributions {_amounts(w.contributions)}, the table's are {_amounts(put_in)}"
        )
    if w.payouts != paid:
        return f"the wallet paid {_amounts(w.payouts)}, the table paid {_amounts(paid)}"
    return ""


def _amounts(d: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(d.items())) + "}"
