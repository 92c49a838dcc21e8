"""``dispute.check`` on logs built by driving the engine directly (pure, no NATS).

A table is opened, three players sit down and hands are played from decks derived from known
seeds; the events go into sealed envelopes exactly as the table service writes them. The
wallet's view of each hand is built from the wallet's own events (``wallet_hands``).
"""

from __future__ import annotations

import datetime as dt
import random

import pytest

from openpoker.dispute.check import Check, HandStatus, TableReplay, contributions, payouts, replay_table
from openpoker.dispute.evidence import LoggedEnvelope, RevealRecord, wallet_hands
from openpoker.dispute.export import Skip, export_hand
from openpoker.engine import hand, table
from openpoker.engine.hand_events import Act, ActionKind, HandEnded, HandStarted, ShowdownStarted
from openpoker.engine.phh import ShowMuck
from openpoker.engine.phh_replay import replay_events
from openpoker.engine.rules import Game, RakeRules, Rules, Stakes, Structure
from openpoker.engine.table_events import (
    OpenTable,
    SetShowPreferences,
    ShowUncontestedHand,
    SitDown,
    StartHand,
    UncontestedHandShown,
)
from openpoker.eventstore.chain import GENESIS, seal
from openpoker.eventstore.envelope import Draft
from openpoker.ledger.commands import PlayerAmount
from openpoker.ledger.events import Event as WalletEvent
from openpoker.ledger.events import HandOpened, HandSettled, HandVoided, TransfersCommitted
from openpoker.ledger.transfers import Phase, TransferCode, TransferRecord
from openpoker.shuffle import CURRENT_VERSION, commitment, derive_deck
from openpoker.tablelog.model import LogEvent
from openpoker.tablelog.store import to_recorded

T = "t-1"
RULES = Rules(
    game=Game.HOLDEM,
    structure=Structure.NO_LIMIT,
    stakes=Stakes.blinds(1, 2),
    seats=6,
    rake=RakeRules(basis_points=750, caps=((2, 6),)),
)


class Built:
    """A table log as the service writes it, with the seeds revealed and the wallet's events."""

    def __init__(self, hands: int, *, seed: int = 3) -> None:
        self.rng = random.Random(seed)
        self.state: table.TableState | None = None
        self.envelopes: list[LoggedEnvelope] = []
        self.reveals: dict[str, RevealRecord] = {}
        self.wallet_events: list[WalletEvent] = []
        self.append([OpenTable(table_id=T, rules=RULES)])
        for seat, player in enumerate(("ann", "bob", "cat")):
            self.append([SitDown(seat=seat, player=player, buy_in=200)])
        for n in range(1, hands + 1):
            self.play(n)

    def append(self, commands: list[table.Command]) -> list[LogEvent]:
        events: list[LogEvent] = []
        for command in commands:
            new = table.decide(self.state, command)
            for e in new:
                self.state = table.fold([e]) if self.state is None else table.evolve(self.state, e)
            events.extend(new)
        prev = self.envelopes[-1].envelope.hash if self.envelopes else GENESIS
        version = len(self.envelopes) + 1
        env = seal(
            Draft(
                stream_id=T,
                version=version,
                command_id=f"c{version}",
                owner_epoch=1,
                rules_version="seeds/1",
                engine_version="test",
                events=tuple(to_recorded(e) for e in events),
                recorded_at=dt.datetime(2026, 11, 22, tzinfo=dt.UTC) + dt.timedelta(seconds=version),
            ),
            prev,
        )
        self.envelopes.append(LoggedEnvelope(envelope=env, sequence=version, msg_id=env.msg_id))
        return events

    def play(self, n: int) -> None:
        hand_id = f"{T}-{n}"
        seed = self.rng.randbytes(32)
        deck = tuple(derive_deck(seed, hand_id, 52))
        opened = self.append([StartHand(hand_id=hand_id, deck=deck, commitment=commitment(seed, hand_id))])
        started = next(e for e in opened if isinstance(e, HandStarted))
        self.wallet_events.append(
            HandOpened(
                table_id=T,
                hand_no=n,
                stacks=tuple(PlayerAmount(player=s.player, amount=s.stack) for s in started.seats),
                rake=RULES.rake,
            )
        )
        ended: HandEnded | None = None
        while ended is None:
            assert self.state is not None
            assert self.state.hand is not None
            seat = hand.to_act(self.state.hand)
            assert seat is not None
            legal = hand.legal_actions(self.state.hand, seat)
            assert legal is not None
            if legal.to_call and self.rng.random() < 0.2:
                act = Act(seat=seat, action=ActionKind.FOLD)
            elif legal.to_call:
                act = Act(seat=seat, action=ActionKind.CALL)
            elif legal.can_raise and self.rng.random() < 0.3:
                to = min(legal.max_raise_to, 3 * legal.min_raise_to)
                act = Act(seat=seat, action=ActionKind.BET_OR_RAISE, amount=to)
            else:
                act = Act(seat=seat, action=ActionKind.CHECK)
            events = self.append([act])
            ended = next((e for e in events if isinstance(e, HandEnded)), None)
        self.reveals[hand_id] = RevealRecord(
            table_id=T,
            hand_id=hand_id,
            hand_number=n,
            version=CURRENT_VERSION,
            deck_size=52,
            commitment=started.commitment,
            seed=seed,
        )
        self.wallet_events.append(self.settlement(n, started, ended))

    def settlement(self, n: int, started: HandStarted, ended: HandEnded) -> HandSettled:
        """Appends the settlement's transfers; returns the HandSettled that follows them."""
        records = [
            TransferRecord(
                id=f"post/{n}/{p}",
                phase=Phase.POST,
                code=TransferCode.HAND_CONTRIBUTION,
                debit=f"escrow/{T}/{p}",
                credit=f"pot/{T}/{n}",
                amount=a,
            )
            for p, a in contributions(started, ended).items()
        ]
        records += [
            TransferRecord(
                id=f"pay/{n}/{p}",
                phase=Phase.SINGLE,
                code=TransferCode.HAND_PAYOUT,
                debit=f"pot/{T}/{n}",
                credit=f"escrow/{T}/{p}",
                amount=a,
            )
            for p, a in payouts(started, ended).items()
        ]
        if ended.rake:
            records.append(
                TransferRecord(
                    id=f"rake/{n}",
                    phase=Phase.SINGLE,
                    code=TransferCode.HAND_RAKE,
                    debit=f"pot/{T}/{n}",
                    credit="house/rake",
                    amount=ended.rake,
                )
            )
        self.wallet_events.append(TransfersCommitted(request_id=f"settle/{n}", transfers=tuple(records)))
        pot = sum(contributions(started, ended).values())
        return HandSettled(
            table_id=T,
            hand_no=n,
            pot=pot,
            rake=ended.rake,
            saw_flop=True,
            players_dealt_in=len(started.seats),
        )

    def replay(self) -> TableReplay:
        return replay_table(T, self.envelopes, reveals=self.reveals, wallet=wallet_hands(self.wallet_events))


@pytest.fixture(scope="module")
def built() -> Built:
    return Built(hands=12)


def test_a_sound_log_verifies_every_hand(built: Built) -> None:
    r = built.replay()
    assert r.ok, r.failure
    assert [h.status for h in r.hands] == [HandStatus.VERIFIED] * 12


def test_wallet_hands_reads_contributions_payouts_and_rake(built: Built) -> None:
    hands = wallet_hands(built.wallet_events)
    assert set(hands) == {(T, n) for n in range(1, 13)}
    for (_, n), w in hands.items():
        assert w.opened
        assert w.settled
        assert not w.voided
        assert w.pot == sum(w.contributions.values()) == sum(w.payouts.values()) + w.rake
        assert w.rake == w.rake_paid
        assert set(w.reserved) == {"ann", "bob", "cat"}, n


def test_a_missing_reveal_fails_except_for_the_latest_hand(built: Built) -> None:
    reveals = dict(built.reveals)
    del reveals[f"{T}-12"]
    r = replay_table(T, built.envelopes, reveals=reveals, wallet=wallet_hands(built.wallet_events))
    assert r.ok
    assert r.hands[-1].status is HandStatus.PENDING
    assert r.hands[-1].pending == ["seed not revealed yet"]
    del reveals[f"{T}-5"]
    r = replay_table(T, built.envelopes, reveals=reveals, wallet=wallet_hands(built.wallet_events))
    assert r.failure is not None
    assert (r.failure.check, r.failure.hand_number) == (Check.SEED, 5)
    assert r.failure.version == r.hands[4].first_version  # HandStarted is in the StartHand envelope


def test_a_hand_the_wallet_voided_but_the_table_finished_fails(built: Built) -> None:
    events = [e for e in built.wallet_events if not (isinstance(e, HandSettled) and e.hand_no == 7)]
    events.append(HandVoided(table_id=T, hand_no=7))
    r = replay_table(T, built.envelopes, reveals=built.reveals, wallet=wallet_hands(events))
    assert r.failure is not None
    assert (r.failure.check, r.failure.hand_number, r.failure.version) == (
        Check.WALLET,
        7,
        r.hands[6].last_version,
    )


def test_a_wallet_rake_other_than_the_tables_fails(built: Built) -> None:
    raked = next(h for h in built.replay().hands if h.ended and h.ended.rake)
    events = [
        HandSettled(
            table_id=T, hand_no=e.hand_no, pot=e.pot, rake=e.rake + 1, saw_flop=True, players_dealt_in=3
        )
        if isinstance(e, HandSettled) and e.hand_no == raked.number
        else e
        for e in built.wallet_events
    ]
    r = replay_table(T, built.envelopes, reveals=built.reveals, wallet=wallet_hands(events))
    assert r.failure is not None
    assert (r.failure.check, r.failure.hand_number) == (Check.WALLET, raked.number)
    assert "rake" in r.failure.detail


def test_a_log_ending_inside_a_hand_is_in_progress_not_failed(built: Built) -> None:
    last = built.replay().hands[-1]
    cut = last.first_version + 1  # versions up to the StartHand envelope and one action after it
    r = replay_table(
        T, built.envelopes[:cut], reveals=built.reveals, wallet=wallet_hands(built.wallet_events)
    )
    assert r.ok, r.failure
    assert r.hands[-1].status is HandStatus.IN_PROGRESS


def test_only_hand_checks_that_hand_and_the_whole_chain(built: Built) -> None:
    r = replay_table(T, built.envelopes, reveals={}, wallet={}, only_hand=3)
    # hand 3 has no reveal and no settlement and is not the latest: it fails; others are skipped
    assert r.failure is not None
    assert r.failure.hand_number == 3
    assert {h.status for h in r.hands if h.number != 3} == {HandStatus.NOT_CHECKED}


def test_exported_hands_replay_in_the_engine_to_the_recorded_stacks(built: Built) -> None:
    r = built.replay()
    exported = 0
    for h in r.hands:
        hh = export_hand(h)
        assert not isinstance(hh, Skip), hh
        assert h.ended is not None
        state, _ = replay_events(hh, h.hand_id, repair=False, rake=RULES.rake)
        assert tuple(state.stack) == hh.finishing_stacks
        by_seat = {s.seat: s.amount for s in h.ended.stacks}
        assert hh.finishing_stacks == tuple(by_seat[s - 1] for s in hh.seats or ())
        assert dict(hh.extras)["_rake"] == h.ended.rake
        exported += 1
    assert exported == 12


class WithChoices(Built):
    """The same play, with seat 1 changing its auto-muck before every action (mid-hand choices
    count from the next showdown), seat 0 showing hands won uncontested at once and every other
    winner by folds showing on command."""

    def __init__(self, hands: int) -> None:
        self.toggle = False
        super().__init__(hands)

    def append(self, commands: list[table.Command]) -> list[LogEvent]:
        if self.state is not None and self.state.hand is not None and isinstance(commands[0], Act):
            self.toggle = not self.toggle
            super().append([SetShowPreferences(seat=1, auto_muck=self.toggle, show_uncontested=False)])
        return super().append(commands)

    def play(self, n: int) -> None:
        if n == 1:
            self.append([SetShowPreferences(seat=0, auto_muck=True, show_uncontested=True)])
        super().play(n)
        assert self.state is not None
        won = self.state.won_uncontested
        if won is not None and not self.state.won_shown:
            self.append([ShowUncontestedHand(seat=won[1], hand_id=won[0])])


def test_choices_during_hands_and_shows_after_them_verify_and_export() -> None:
    built = WithChoices(hands=12)
    r = built.replay()
    assert r.failure is None, r.failure
    assert {h.status for h in r.hands} == {HandStatus.VERIFIED}
    shows = 0
    for h in r.hands:
        shown = [e for _, e in h.events if isinstance(e, UncontestedHandShown)]
        hh = export_hand(h)
        assert not isinstance(hh, Skip), hh
        sm = [
            a
            for a in hh.actions
            if isinstance(a, ShowMuck) and a.cards and a.cards in [e.cards for e in shown]
        ]
        assert len(sm) == len(shown)
        state, _ = replay_events(hh, h.hand_id, repair=False, rake=RULES.rake)
        assert tuple(state.stack) == hh.finishing_stacks
        shows += len(shown)
    assert shows > 0
    assert any(isinstance(e, ShowdownStarted) for h in r.hands for _, e in h.events), (
        "no showdown: the mid-hand auto-muck choices were never re-decided"
    )
