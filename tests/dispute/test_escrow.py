"""``dispute.escrow``: every seat's stack against its escrow (pure, no NATS).

Table logs are built by driving the engine (``test_check.Built``); the ledger's state is set
account by account, as the wallet would hold it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from openpoker.dispute.escrow import (
    EscrowDrift,
    check_tables,
    drifts,
    fold_log,
    fold_log_checked,
    in_hand,
    seat_stacks,
)
from openpoker.dispute.evidence import LoggedEnvelope
from openpoker.engine.hand_events import HandStarted
from openpoker.engine.table_events import ChipsAdded, StartHand
from openpoker.eventstore.chain import seal
from openpoker.ledger.accounts import Balances
from openpoker.ledger.commands import PlayerAmount
from openpoker.ledger.decider import LedgerState
from openpoker.ledger.events import HandStatus
from openpoker.ledger.hands import HandRecord, hand_key
from openpoker.shuffle import commitment, derive_deck
from openpoker.tablelog.model import TableModel
from openpoker.tablelog.store import to_recorded
from tests.dispute.test_check import RULES, Built, T
from tests.helpers.forgery import next_draft

players = st.sampled_from(["ann", "bob", "cat", "dan", "eve"])
chips = st.integers(min_value=0, max_value=10_000)


@given(
    stacks=st.dictionaries(players, chips),
    escrows=st.dictionaries(players, chips),
    skip=st.frozensets(players),
)
def test_a_drift_is_exactly_a_seated_player_whose_escrow_is_not_their_stack(
    stacks: dict[str, int], escrows: dict[str, int], skip: frozenset[str]
) -> None:
    found = drifts("t", stacks=stacks, escrows=escrows, skip=skip)
    expected = {
        p: (s, escrows.get(p, 0)) for p, s in stacks.items() if p not in skip and escrows.get(p, 0) != s
    }
    assert {d.player: (d.stack, d.escrow) for d in found} == expected
    assert all(d.table_id == "t" for d in found)
    assert [d.player for d in found] == sorted(expected)


@given(stacks=st.dictionaries(players, chips))
def test_escrows_equal_to_the_stacks_never_drift(stacks: dict[str, int]) -> None:
    assert drifts("t", stacks=stacks, escrows=dict(stacks)) == []


def ledger_for(model: TableModel, *, closed: HandStatus = HandStatus.SETTLED) -> LedgerState:
    """The wallet as it holds the table's seats (each escrow = the stack), every hand closed."""
    state = LedgerState()
    for player, stack in seat_stacks(model).items():
        state.accounts[f"escrow/{model.table_id}/{player}"] = Balances(credits_posted=stack)
    for n in range(1, model.hands_total + 1):
        state.hands[hand_key(model.table_id, n)] = HandRecord(
            table_id=model.table_id,
            hand_no=n,
            stacks=(PlayerAmount(player="ann", amount=1),),
            rake_rules=RULES.rake,
            status=closed,
        )
    return state


def test_a_clean_table_between_hands_has_no_drift() -> None:
    model = fold_log(T, Built(3).envelopes)
    assert not in_hand(model)
    assert model.hands_total == 3
    result = check_tables([model], ledger_for(model))
    assert result.ok
    assert (result.tables, result.seats, result.settling) == (1, 3, [])


def test_an_emptied_escrow_is_a_drift_with_both_amounts() -> None:
    model = fold_log(T, Built(2).envelopes)
    ledger = ledger_for(model)
    bob = seat_stacks(model)["bob"]
    ledger.accounts[f"escrow/{T}/bob"] = Balances(credits_posted=bob, debits_posted=bob)
    result = check_tables([model], ledger)
    assert result.drifts == [EscrowDrift(table_id=T, player="bob", stack=bob, escrow=0)]
    assert not result.ok
    assert result.as_dict()["drifts"] == [{"table": T, "player": "bob", "stack": bob, "escrow": 0}]
    assert f"bob has {bob} at the table, 0 in escrow/{T}/bob" in result.drifts[0].describe()


def test_a_seat_without_an_escrow_account_drifts_to_zero() -> None:
    model = fold_log(T, Built(0).envelopes)
    ledger = ledger_for(model)
    del ledger.accounts[f"escrow/{T}/cat"]
    assert [(d.player, d.stack, d.escrow) for d in check_tables([model], ledger).drifts] == [("cat", 200, 0)]


def test_a_hand_the_wallet_has_not_settled_yet_is_not_compared() -> None:
    built = Built(2)
    model = fold_log(T, built.envelopes)
    ledger = ledger_for(model)
    ledger.accounts[f"escrow/{T}/ann"] = Balances(credits_posted=1)  # the hand's start stack
    ledger.hands[hand_key(T, 2)].status = HandStatus.OPEN
    result = check_tables([model], ledger)
    assert result.ok
    assert (result.settling, result.tables) == ([T], 0)
    del ledger.hands[hand_key(T, 2)]  # not even opened by the wallet yet
    assert check_tables([model], ledger).settling == [T]


def test_during_a_hand_the_stack_at_its_start_is_the_escrow() -> None:
    built = Built(1)
    before = seat_stacks(fold_log(T, built.envelopes))
    hand_id = f"{T}-2"
    seed = bytes(32)
    deck = tuple(derive_deck(seed, hand_id, 52))
    events = built.append([StartHand(hand_id=hand_id, deck=deck, commitment=commitment(seed, hand_id))])
    assert any(isinstance(e, HandStarted) for e in events)  # blinds posted: chips in front
    model = fold_log(T, built.envelopes)
    assert in_hand(model)
    assert seat_stacks(model) == before
    ledger = ledger_for(model)  # every escrow = the start stack; hand 2 only reserved
    ledger.hands[hand_key(T, 2)].status = HandStatus.OPEN
    result = check_tables([model], ledger)
    assert result.ok
    assert (result.tables, result.settling) == (1, [])
    ledger.accounts[f"escrow/{T}/ann"] = Balances(credits_posted=before["ann"] - 5)
    assert [(d.player, d.escrow) for d in check_tables([model], ledger).drifts] == [
        ("ann", before["ann"] - 5)
    ]


def test_a_table_nobody_sits_at_is_not_counted() -> None:
    model = TableModel(table_id="empty")
    assert check_tables([model], LedgerState()).as_dict() == {
        "ok": True,
        "tables": 0,
        "seats": 0,
        "settling": [],
        "drifts": [],
    }


def test_a_log_that_does_not_fold_is_named_not_a_crash() -> None:
    built = Built(1)
    last = built.envelopes[-1].envelope
    forged = seal(
        next_draft(last, (to_recorded(ChipsAdded(seat=99, amount=1_000_000)),)), last.hash
    )  # no seat 99
    log = [*built.envelopes, LoggedEnvelope(envelope=forged, sequence=forged.version, msg_id=forged.msg_id)]
    model, finding = fold_log_checked(T, log)
    assert finding is not None
    assert (finding.stream, finding.version) == (T, forged.version)
    assert seat_stacks(model) == seat_stacks(fold_log(T, built.envelopes))  # the genuine prefix
