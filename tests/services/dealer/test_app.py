"""The dealer's process manager against in-memory fakes: hands driven end to end, clocks,
settlement, seed reveals, restarts, voids, pauses, retries."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from openpoker.engine import table as engine_table
from openpoker.engine.hand_events import ActionKind, HandStarted
from openpoker.engine.rules import RakeRules, Stakes
from openpoker.engine.table_events import HandVoided
from openpoker.services.dealer.app import HandFinished, UnknownHand
from openpoker.shuffle import ShuffleRecord, dealt_from_top, verify_record
from openpoker.tablelog import ids
from tests.helpers.waiting import until
from tests.services.dealer.fakes import failed, log_events, seat_to_act, table_stacks
from tests.services.dealer.rig import SLOW, Rig, calling_station, rules

T = "t1"


def started_hands(rig: Rig, table_id: str = T) -> list[HandStarted]:
    return [e for e in log_events(rig.table, table_id) if isinstance(e, HandStarted)]


async def settle_down(rig: Rig, table_id: str = T) -> None:
    """Pause dealing and wait until no hand is in flight (wallet and table between hands)."""
    await rig.app.set_paused(table_id, True)
    await until(lambda: not rig.app.active_hands(), what="no hand in flight")


def assert_conserved(rig: Rig, table_id: str = T) -> None:
    stacks = table_stacks(rig.table, table_id)
    escrow = {p: a for (t, p), a in rig.wallet.escrow.items() if t == table_id}
    assert stacks == escrow
    assert rig.wallet.house == rig.table.state(table_id).rake
    assert rig.wallet.reserved(table_id) == 0


async def test_time_outs_play_hands_which_are_settled_and_revealed() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 3, what="three settled hands")
    await settle_down(rig)
    assert rig.app.timeouts > 0
    assert_conserved(rig)
    hands = started_hands(rig)
    assert [h.hand_id for h in hands[:3]] == [ids.hand_id(T, n) for n in (1, 2, 3)]
    for h in hands:
        record = rig.audit.records[h.hand_id]
        assert record.commitment == h.commitment
        verdict = verify_record(
            ShuffleRecord(
                version=record.version,
                hand_id=h.hand_id,
                deck_size=record.deck_size,
                commitment=record.commitment,
                seed=record.seed,
                dealt=dealt_from_top(h.deck),
            )
        )
        assert verdict.ok
    await rig.app.stop()


async def test_rake_and_payouts_settle_to_the_table_stacks() -> None:
    rig = Rig()
    rig.app.go_live()
    rake = RakeRules(basis_points=500, caps=((2, 30),), no_flop_no_drop=True)
    rig.table.open(T, rules(time=SLOW, rake=rake, stakes=Stakes.blinds(50, 100)))
    rig.seat(T, {0: "ann", 2: "bob", 4: "cy"}, buy_in=10_000)
    stop = asyncio.Event()
    bots = asyncio.create_task(calling_station(rig, T, stop))
    await until(lambda: len(rig.wallet.settlements) >= 5, what="five settled hands")
    await settle_down(rig)
    stop.set()
    await bots
    assert rig.wallet.house > 0
    assert_conserved(rig)
    for s in rig.wallet.settlements:
        contributions = s["contributions"]
        payouts = s["payouts"]
        assert isinstance(contributions, tuple)
        assert isinstance(payouts, tuple)
        assert sum(a for _, a in contributions) == sum(a for _, a in payouts) + int(str(s["rake"]))
    await rig.app.stop()


async def test_a_restarted_dealer_resumes_the_hand_in_flight() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: (T, 1) in rig.wallet.hands, what="hand 1 reserved")
    await rig.restart()
    stop = asyncio.Event()
    bots = asyncio.create_task(calling_station(rig, T, stop))
    await until(lambda: len(rig.wallet.settlements) >= 2, what="two settled hands")
    await settle_down(rig)
    stop.set()
    await bots
    opens = [rid for method, rid in rig.wallet.calls if method == "OpenHand"]
    first = ids.request_id(T, 1, "open")
    assert opens.count(first) == 2  # asked again after the restart, with the same key
    assert [s["hand"] for s in rig.wallet.settlements][:2] == [1, 2]
    assert sum(1 for s in rig.wallet.settlements if s["hand"] == 1) == 1
    assert_conserved(rig)
    await rig.app.stop()


async def test_a_hand_started_but_not_reserved_when_the_dealer_died_is_reserved_on_restart() -> None:
    rig = Rig()
    original_open = rig.wallet.open_hand

    async def unavailable(**kwargs: object) -> bool:
        raise failed("wallet", "OpenHand", "", code="UNAVAILABLE")

    rig.wallet.open_hand = unavailable  # type: ignore[method-assign]
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(started_hands(rig)) == 1, what="hand 1 started")
    await asyncio.sleep(0.05)
    assert (T, 1) not in rig.wallet.hands
    rig.wallet.open_hand = original_open  # type: ignore[method-assign]
    await rig.restart()
    stop = asyncio.Event()
    bots = asyncio.create_task(calling_station(rig, T, stop))
    await until(lambda: len(rig.wallet.settlements) >= 1, what="hand 1 settled")
    await settle_down(rig)
    stop.set()
    await bots
    assert rig.wallet.settlements[0]["hand"] == 1
    assert_conserved(rig)
    await rig.app.stop()


async def test_a_hand_whose_stacks_cannot_be_reserved_is_voided_and_dealing_goes_on() -> None:
    rig = Rig()
    rig.wallet.refuse_open = {1}
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 1, what="a hand settled after the void")
    await settle_down(rig)
    voided = [
        env for tid, env in rig.table.envelopes if any(r.type == HandVoided.__name__ for r in env.events)
    ]
    assert len(voided) == 1
    assert ("VoidHand", ids.request_id(T, 1, "void")) in rig.table.calls
    hands = started_hands(rig)
    assert hands[0].hand_id == ids.hand_id(T, 1)
    assert hands[1].hand_id == ids.hand_id(T, 2)
    assert {s.player: s.stack for s in hands[1].seats} == {"ann": 100, "bob": 100}  # nothing lost
    assert rig.app.hands_voided == 1
    assert_conserved(rig)
    await rig.app.stop()


async def test_a_finished_hand_the_wallet_will_not_reserve_is_reported_not_spun_on() -> None:
    # The table finished hand 1 while the wallet was away; then the wallet refuses the
    # reservation. The hand can no longer be voided at the table: the dealer must neither void
    # it "again" nor retry in a tight loop (this once spun forever and stalled the table).
    rig = Rig()
    original_open = rig.wallet.open_hand

    async def unavailable(**kwargs: object) -> bool:
        raise failed("wallet", "OpenHand", "", code="UNAVAILABLE")

    rig.wallet.open_hand = unavailable  # type: ignore[method-assign]
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(started_hands(rig)) == 1, what="hand 1 started")
    seat = seat_to_act(rig.table, T)
    assert seat is not None
    rig.table.act(T, seat, ActionKind.FOLD)
    assert rig.table.hand_ended(T, ids.hand_id(T, 1))
    rig.wallet.refuse_open = {1}
    rig.wallet.open_hand = original_open  # type: ignore[method-assign]
    driver = rig.app.drivers[T]
    await until(lambda: "refuses its reservation" in driver.last_error, what="the refusal reported")
    calls = len(rig.wallet.calls)
    await asyncio.sleep(0.3)
    # At the slowest retry pace (0.05 s here): a handful of asks, not thousands.
    assert len(rig.wallet.calls) - calls <= 12
    assert ("VoidHand", ids.request_id(T, 1, "void")) not in rig.table.calls
    assert len(started_hands(rig)) == 1
    await rig.app.stop()


async def test_operator_void_releases_every_reservation() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob", 2: "cy"})
    await until(lambda: (T, 1) in rig.wallet.hands, what="hand 1 reserved")
    await rig.app.set_paused(T, True)
    hand_id = ids.hand_id(T, 1)
    info, released = await rig.app.void_hand(T, hand_id, "stuck")
    assert released == 300
    assert info.hand_id == hand_id
    assert rig.wallet.hands[(T, 1)].state == "voided"
    await until(lambda: not rig.app.active_hands(), what="void completed")
    assert rig.table.state(T).hand is None
    assert_conserved(rig)
    # Idempotent: voiding again answers the same and moves nothing.
    _, again = await rig.app.void_hand(T, hand_id, "stuck")
    assert again == 300
    assert_conserved(rig)
    with pytest.raises(UnknownHand):
        await rig.app.void_hand(T, "nope-1", "x")
    await rig.app.stop()


async def test_a_finished_hand_cannot_be_voided() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 1, what="hand 1 settled")
    await settle_down(rig)
    with pytest.raises(HandFinished):
        await rig.app.void_hand(T, ids.hand_id(T, 1), "late")
    await rig.app.stop()


async def test_a_hand_the_engine_forgot_is_finished_not_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_table, "HAND_IDS_KEPT", 1)  # the engine then knows the last id only
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 2, what="hands 1 and 2 settled")
    await rig.app.set_paused(T, True)
    await settle_down(rig)
    state = rig.app.drivers[T].track.state
    assert state is not None
    assert ids.hand_id(T, 1) not in state.hand_ids
    with pytest.raises(HandFinished):  # the table knows it: finished, not unknown
        await rig.app.void_hand(T, ids.hand_id(T, 1), "late")
    assert ("GetHand", ids.hand_id(T, 1)) in rig.table.calls
    with pytest.raises(UnknownHand):
        await rig.app.void_hand(T, "nope-1", "x")
    await rig.app.stop()


async def test_pause_stops_new_hands_and_resume_starts_them_again() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 1, what="hand 1 settled")
    await settle_down(rig)
    count = len(started_hands(rig))
    await asyncio.sleep(0.1)
    assert len(started_hands(rig)) == count
    assert rig.app.paused_tables() == 1
    await rig.app.set_paused(T, False)
    await until(lambda: len(started_hands(rig)) > count, what="a new hand after resume")
    await rig.app.stop()


async def test_failed_calls_are_retried_with_the_same_request_ids() -> None:
    rig = Rig()
    rig.rng.fail_next = [failed("rng", "Shuffle", "", code="UNAVAILABLE")] * 2
    rig.table.fail_next["TimeOutSeat"] = failed("table", "TimeOutSeat", "STALE_VERSION", code="ABORTED")
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 1, what="hand 1 settled")
    await settle_down(rig)
    shuffles = [rid for method, rid in rig.rng.calls if method == "Shuffle"]
    assert shuffles[:3] == [ids.request_id(T, 1, "shuffle")] * 3
    assert_conserved(rig)
    await rig.app.stop()


async def test_nothing_is_done_while_the_log_is_being_replayed() -> None:
    rig = Rig()  # not live: the feed has not caught up
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await asyncio.sleep(0.05)
    assert rig.rng.calls == []
    rig.app.go_live()
    await until(lambda: len(started_hands(rig)) >= 1, what="a hand once live")
    with contextlib.suppress(Exception):
        await settle_down(rig)
    await rig.app.stop()


async def test_a_lost_shuffle_record_does_not_block_the_table() -> None:
    rig = Rig()
    rig.rng.lost = {ids.hand_id(T, 1)}
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 2, what="two settled hands")
    await settle_down(rig)
    assert rig.app.reveals_missing == 1
    assert ids.hand_id(T, 1) not in rig.audit.records
    assert ids.hand_id(T, 2) in rig.audit.records
    assert_conserved(rig)
    await rig.app.stop()


async def test_a_player_joining_while_a_hand_starts_gets_a_fresh_start() -> None:
    """StartHand is refused as stale because a third player sat down meanwhile (and the dealer
    has already folded that): the dealer starts the hand again on the table as it now is."""
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.table.before_start = lambda: rig.seat(T, {3: "cy"})
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: len(rig.wallet.settlements) >= 1, what="hand 1 settled")
    await settle_down(rig)
    first = started_hands(rig)[0]
    assert {s.player for s in first.seats} == {"ann", "bob", "cy"}
    assert_conserved(rig)
    await rig.app.stop()


async def test_a_hand_being_started_counts_as_in_flight() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    seen: list[list[str]] = []
    rig.table.before_start = lambda: seen.append([h.stage.value for h in rig.app.active_hands()])
    rig.seat(T, {0: "ann", 1: "bob"})
    await until(lambda: (T, 1) in rig.wallet.hands, what="hand 1 reserved")
    assert seen == [["shuffling"]]
    await rig.app.stop()
