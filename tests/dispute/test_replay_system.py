"""Dispute replay and PHH export on logs written by the running system.

One module fixture starts nats-server and the four services (``LocalSystem``) on a temporary
data folder, plays a few hundred hands with bots at NL Hold'em, FL Hold'em, PL Omaha and Six
Plus tables (raked, bots that sit out, leave and come back), lets the hands in flight finish and
stops everything. Then:

* ``pokerctl replay --all`` and ``--table/--hand`` pass on the untouched folder;
* tampered copies (each rewritten into a fresh nats-server folder: an amount altered with and
  without re-sealing the hash chain, an envelope dropped, a card swapped, a seed changed, a
  message id or an epoch rewritten, a wallet payout altered) fail at the right check, table,
  version and hand;
* every hand ``pokerctl phh export --all`` writes replays in pokerkit 0.7.7 strictly (no repair,
  warnings as errors) to the recorded finishing stacks, with the table's rake charged per pot.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import tomllib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nats
import pytest
from pokerkit import HandHistory as PkHandHistory
from pokerkit.notation import parse_action

from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.dispute.check import HandReplay, replay_table
from openpoker.dispute.source import offline_server, read_evidence
from openpoker.engine import codec
from openpoker.engine.hand_events import Called, HandEnded, HandStarted, HoleCardsDealt, PotAwarded
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.chain import seal
from openpoker.eventstore.envelope import Draft, Envelope, RecordedEvent
from openpoker.eventstore.jetstream import MSG_ID_HEADER
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS, StreamSettings, ensure_stream
from openpoker.eventstore.subjects import table_subject
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.bots import Behaviour, create_table, start_bots, table_config
from openpoker.pokerctl.cmd_demo import hands_played, quiesce
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import channel
from openpoker.shell.natsconn import NatsTarget
from openpoker.shell.natsproc import NatsServer

HANDS = 200
TABLES = (
    ("nt-1", "holdem", "nl"),
    ("nt-2", "holdem", "nl"),
    ("ft-1", "holdem", "fl"),
    ("po-1", "omaha", "pl"),
    ("po-2", "omaha", "pl"),
    ("sp-1", "sixplus", "nl"),
)
RNG_AUDIT = StreamSettings(name="RNG_AUDIT", subjects=("poker.audit.rng.>",))
# The first test also plays the hands (module fixture): hundreds of hands on 2 shared cores.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


async def _play(data_dir: Path) -> None:
    system = LocalSystem(data_dir=data_dir, free_ports=True)
    await system.start()
    try:
        targets = system.targets
        for name, game, structure in TABLES:
            await create_table(targets["table"], name, table_config(game, structure, name=name))
        names = [name for name, _, _ in TABLES]
        bots = await start_bots(
            table_target=targets["table"],
            wallet_target=targets["wallet"],
            tables=names,
            players_per_table=4,
            seed=7,
            behaviour=Behaviour(sit_out=0.03, leave=0.02),
        )
        try:
            async with channel(targets["table"]) as chan:
                stub: Any = tgrpc.TableServiceStub(chan)
                while await hands_played(stub, names) < HANDS:
                    assert not bots.failures(), bots.failures()
                    await asyncio.sleep(0.1)
            await quiesce(targets["dealer"], names)
        finally:
            await bots.stop()
    finally:
        await system.stop()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("dispute") / "data"
    asyncio.run(_play(data_dir))
    return data_dir


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _replay_json(data_dir: Path, table: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _run("replay", "--table", table, "--json", "--data-dir", str(data_dir))
    assert code in (0, 1), err
    report: dict[str, Any] = json.loads(out)
    return code, report


# -- copying and tampering with the stored logs ---------------------------------------------------


@dataclass(slots=True)
class Message:
    subject: str
    data: bytes
    headers: dict[str, str]


@dataclass(slots=True)
class Logs:
    table: list[Message]
    audit: list[Message]
    wallet: list[Message]

    def envelopes(self) -> list[Envelope]:
        return [envelope_codec.decode(m.data) for m in self.table]


async def _read_subject(js: Any, stream: str, subject: str) -> list[Message]:
    out: list[Message] = []
    seq = 0
    while True:
        try:
            raw = await js.get_msg(stream, seq=seq + 1, subject=subject, next=True)
        except nats.js.errors.NotFoundError:
            return out
        seq = int(raw.seq)
        # Keep only the message id: the store's own headers (expected sequences) are not evidence.
        headers = {k: v for k, v in (raw.headers or {}).items() if k == MSG_ID_HEADER}
        out.append(Message(subject=subject, data=raw.data or b"", headers=headers))


def read_logs(data_dir: Path, table_id: str) -> Logs:
    async def go(private: NatsTarget) -> Logs:
        nc = await private.connect()
        try:
            js = nc.jetstream()
            return Logs(
                table=await _read_subject(js, TABLE_EVENTS.name, table_subject(table_id)),
                audit=await _read_subject(js, RNG_AUDIT.name, f"poker.audit.rng.{table_id}"),
                wallet=await _read_subject(js, WALLET_EVENTS.name, "poker.wallet.ledger"),
            )
        finally:
            await nc.close()

    with offline_server(data_dir) as private:
        return asyncio.run(go(private))


def write_logs(logs: Logs, folder: Path) -> Path:
    """A fresh nats-server folder holding exactly ``logs`` (as a data folder for --data-dir)."""

    async def go(url: str) -> None:
        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            for settings in (TABLE_EVENTS, WALLET_EVENTS, RNG_AUDIT):
                await ensure_stream(js, settings)
            for stream, messages in (
                (TABLE_EVENTS.name, logs.table),
                (RNG_AUDIT.name, logs.audit),
                (WALLET_EVENTS.name, logs.wallet),
            ):
                for m in messages:
                    ack = await js.publish(m.subject, m.data, stream=stream, headers=m.headers or None)
                    assert not ack.duplicate
        finally:
            await nc.close()

    server = NatsServer(data_dir=folder)
    server.start()
    try:
        asyncio.run(go(server.url))
    finally:
        server.stop()
    return folder


def resealed(envelopes: list[Envelope], start: int) -> list[Envelope]:
    """The hash chain recomputed from index ``start`` on, as a forger who controls the store
    would do it (so only deeper checks can catch the change)."""
    out = list(envelopes)
    prev = out[start - 1].hash if start else bytes(32)
    for i in range(start, len(out)):
        e = out[i]
        draft = Draft(
            stream_id=e.stream_id,
            version=e.version,
            command_id=e.command_id,
            owner_epoch=e.owner_epoch,
            rules_version=e.rules_version,
            engine_version=e.engine_version,
            events=e.events,
            recorded_at=e.recorded_at,
            causation_id=e.causation_id,
            correlation_id=e.correlation_id,
        )
        out[i] = seal(draft, prev)
        prev = out[i].hash
    return out


def put_envelopes(logs: Logs, envelopes: list[Envelope], *, reseal_from: int | None = None) -> None:
    """Store ``envelopes`` as the table log, the chain recomputed from ``reseal_from`` on."""
    if reseal_from is not None:
        envelopes[:] = resealed(envelopes, reseal_from)
    subject = logs.table[0].subject
    logs.table = [
        Message(subject=subject, data=envelope_codec.encode(e), headers={MSG_ID_HEADER: e.msg_id})
        for e in envelopes
    ]


def find_event(envelopes: list[Envelope], want: Callable[[Any], bool]) -> tuple[int, int, Any]:
    """(envelope index, event index, event) of the first event ``want`` accepts, past the first hands."""
    for i, env in enumerate(envelopes):
        if i < len(envelopes) // 3:
            continue  # tamper in the middle of the log, not in its first hand
        for j, recorded in enumerate(env.events):
            event = codec.decode(json.loads(recorded.payload))
            if want(event):
                return i, j, event
    raise AssertionError("no such event in the log")


def with_event(env: Envelope, j: int, event: object) -> Envelope:
    recorded = RecordedEvent(
        type=type(event).__name__, payload=json.dumps(codec.encode(event), separators=(",", ":")).encode()
    )
    events = (*env.events[:j], recorded, *env.events[j + 1 :])
    return replace(env, events=events)


def hands_before(envelopes: list[Envelope], index: int) -> int:
    """Hands scheduled in the envelopes before ``index``: the hand a break found when reading
    envelope ``index`` is reported in (integrity checks run before its events are folded)."""
    return sum(r.type == "HandScheduled" for env in envelopes[:index] for r in env.events)


def hand_at(envelopes: list[Envelope], index: int) -> int:
    """The hand an event of envelope ``index`` belongs to (its own HandScheduled counted)."""
    return hands_before(envelopes, index + 1)


_HAND_TYPES = {
    "HandStarted",
    "ForcedBetPosted",
    "HoleCardsDealt",
    "Folded",
    "Checked",
    "Called",
    "BetPlaced",
    "AllInProtected",
    "UncalledBetReturned",
    "BoardDealt",
    "ShowdownStarted",
    "CardsShown",
    "CardsMucked",
    "PotAwarded",
    "HandEnded",
}


def next_hand_event(envelopes: list[Envelope], index: int) -> int:
    """The index of the first envelope from ``index`` on that holds a hand engine event."""
    return next(
        k for k in range(index, len(envelopes)) if any(r.type in _HAND_TYPES for r in envelopes[k].events)
    )


# -- the untouched logs ---------------------------------------------------------------------------


def test_every_table_replays_clean(played: Path) -> None:
    code, out, err = _run("replay", "--all", "--json", "--data-dir", str(played))
    assert code == 0, (out[-2000:], err)
    report = json.loads(out)
    assert report["ok"]
    assert report["failure"] is None
    assert {t["table"] for t in report["tables"]} == {name for name, _, _ in TABLES}
    total = sum(t["hands_in_log"] for t in report["tables"])
    verified = sum(t["hands_verified"] for t in report["tables"])
    assert total >= HANDS
    assert verified == total  # quiesced: every hand settled and its seed revealed


def test_one_hand_prints_a_readable_history_matching_the_log(played: Path) -> None:
    logs = read_logs(played, "nt-1")
    envelopes = logs.envelopes()
    third_scheduled = [
        i for i, e in enumerate(envelopes) if any(r.type == "HandScheduled" for r in e.events)
    ][2]
    started = next(
        codec.decode(json.loads(r.payload))
        for e in envelopes[third_scheduled:]
        for r in e.events
        if r.type == "HandStarted"
    )
    assert isinstance(started, HandStarted)
    code, out, _ = _run("replay", "--table", "nt-1", "--hand", "3", "--data-dir", str(played))
    assert code == 0, out
    assert "Hand #3 nt-1-3" in out
    assert "verified" in out
    assert started.commitment in out
    for s in started.seats:
        assert f"seat {s.seat} {s.player} {s.stack}" in out
    assert "Wallet: settled hand nt-1/3" in out
    assert out.rstrip().endswith("every check passed")


# -- tampered copies ------------------------------------------------------------------------------


def _expect(
    tmp_path: Path, logs: Logs, *, check: str, version: int | None, hand: int | None, table: str = "nt-1"
) -> dict[str, Any]:
    folder = write_logs(logs, tmp_path / "tampered")
    code, report = _replay_json(folder, table)
    assert code == 1
    failure = report["failure"]
    assert failure["check"] == check, failure
    assert failure["table"] == table
    assert failure["version"] == version, failure
    assert failure["hand"] == hand, failure
    # and the text output names it too
    code, out, _ = _run("replay", "--table", table, "--data-dir", str(folder))
    assert code == 1
    where = f"table {table}, version {version}" if version is not None else f"table {table}: "
    assert f"FAILED: {check} check failed at {where}" in out
    return dict(failure)


@pytest.fixture(scope="module")
def nt1(played: Path) -> Logs:
    return read_logs(played, "nt-1")


def _copy(logs: Logs) -> Logs:
    return Logs(table=list(logs.table), audit=list(logs.audit), wallet=list(logs.wallet))


def test_the_untouched_copy_passes_offline_and_live(nt1: Logs, tmp_path: Path) -> None:
    folder = write_logs(_copy(nt1), tmp_path / "copy")
    code, report = _replay_json(folder, "nt-1")
    assert code == 0, report["failure"]
    assert report["ok"]
    with NatsServer(data_dir=folder) as server:  # the same logs served live
        code, out, err = _run("replay", "--table", "nt-1", "--json", "--nats", server.url)
    assert code == 0, err
    assert json.loads(out) == report


def test_unreadable_logs_and_unknown_tables_exit_2(played: Path, tmp_path: Path) -> None:
    code, _, err = _run("replay", "--table", "no-such-table", "--data-dir", str(played))
    assert code == 2
    assert "no log of table 'no-such-table'" in err
    code, _, err = _run("replay", "--table", "nt-1", "--hand", "999", "--data-dir", str(played))
    assert code == 2
    assert "has no hand 999" in err
    code, _, err = _run("replay", "--all", "--data-dir", str(tmp_path))
    assert code == 2
    assert "no jetstream/ store" in err
    with NatsServer(data_dir=tmp_path / "empty") as server:
        code, _, err = _run("replay", "--all", "--nats", server.url)
    assert code == 2
    assert "no table was ever created" in err


def test_an_altered_amount_breaks_the_hash_chain(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    envelopes = logs.envelopes()
    i, j, called = find_event(envelopes, lambda e: isinstance(e, Called) and e.amount > 1)
    envelopes[i] = with_event(envelopes[i], j, replace(called, amount=called.amount - 1))
    put_envelopes(logs, envelopes)
    _expect(tmp_path, logs, check="hash_chain", version=envelopes[i].version, hand=hands_before(envelopes, i))


def test_an_altered_amount_with_a_resealed_chain_fails_the_refold(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    envelopes = logs.envelopes()
    i, j, ended = find_event(envelopes, lambda e: isinstance(e, HandEnded) and bool(e.payouts))
    payout = ended.payouts[0]
    forged = replace(ended, payouts=(replace(payout, amount=payout.amount + 5), *ended.payouts[1:]))
    envelopes[i] = with_event(envelopes[i], j, forged)
    put_envelopes(logs, envelopes, reseal_from=i)
    failure = _expect(
        tmp_path, logs, check="refold", version=envelopes[i].version, hand=hand_at(envelopes, i)
    )
    assert "HandEnded" in failure["detail"]


def test_a_dropped_envelope_breaks_the_versions(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    envelopes = logs.envelopes()
    i, _, _ = find_event(envelopes, lambda e: isinstance(e, Called))
    del envelopes[i]
    put_envelopes(logs, envelopes)
    # envelope i now holds version i + 2 where version i + 1 was due
    _expect(tmp_path, logs, check="versions", version=i + 2, hand=hands_before(envelopes, i))


def test_a_dropped_event_with_a_resealed_chain_fails_the_refold(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    envelopes = logs.envelopes()
    i, j, _ = find_event(envelopes, lambda e: isinstance(e, Called))
    env = envelopes[i]
    if len(env.events) == 1:  # the call alone: drop the envelope and renumber the rest
        rest = [replace(e, version=e.version - 1) for e in envelopes[i + 1 :]]
        envelopes = [*envelopes[:i], *rest]
    else:
        envelopes[i] = replace(env, events=env.events[:j] + env.events[j + 1 :])
    put_envelopes(logs, envelopes, reseal_from=i)
    k = next_hand_event(envelopes, i)  # the recorded hand goes on there without the call
    _expect(tmp_path, logs, check="refold", version=envelopes[k].version, hand=hand_at(envelopes, k))


def test_a_swapped_card_fails_the_cards_check(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    envelopes = logs.envelopes()
    i, j, dealt = find_event(envelopes, lambda e: isinstance(e, HoleCardsDealt))
    started = next(
        codec.decode(json.loads(r.payload)) for r in envelopes[i].events if r.type == "HandStarted"
    )
    other = started.deck[-1]  # the bottom card, never dealt in a hand of at most 10 players
    envelopes[i] = with_event(envelopes[i], j, replace(dealt, cards=(other, *dealt.cards[1:])))
    put_envelopes(logs, envelopes, reseal_from=i)
    failure = _expect(tmp_path, logs, check="cards", version=envelopes[i].version, hand=hand_at(envelopes, i))
    assert "DECK_MISMATCH" in failure["detail"]


def test_a_changed_seed_fails_the_seed_check(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    k = len(logs.audit) // 2
    doc = json.loads(logs.audit[k].data)
    seed = bytearray(bytes.fromhex(doc["seed"]))
    seed[0] ^= 1
    doc["seed"] = seed.hex()
    logs.audit[k] = replace(logs.audit[k], data=json.dumps(doc).encode())
    envelopes = logs.envelopes()
    started_at = next(
        env.version
        for env in envelopes
        for r in env.events
        if r.type == "HandStarted" and json.loads(r.payload)["hand_id"] == doc["hand_id"]
    )
    failure = _expect(tmp_path, logs, check="seed", version=started_at, hand=doc["hand_number"])
    assert "COMMITMENT_MISMATCH" in failure["detail"]


def test_a_rewritten_message_id_fails_the_message_id_check(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    k = len(logs.table) // 2
    logs.table[k] = replace(logs.table[k], headers={MSG_ID_HEADER: f"nt-1:{k + 1}:99"})
    envelopes = logs.envelopes()
    _expect(tmp_path, logs, check="message_id", version=k + 1, hand=hands_before(envelopes, k))


def test_a_lower_writer_epoch_fails_the_epochs_check(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    envelopes = logs.envelopes()
    k = len(envelopes) // 2
    assert envelopes[k].owner_epoch >= 1
    envelopes[k] = replace(envelopes[k], owner_epoch=envelopes[k].owner_epoch - 1)
    put_envelopes(logs, envelopes, reseal_from=k)  # msg ids follow the forged epoch
    _expect(tmp_path, logs, check="epochs", version=k + 1, hand=hands_before(envelopes, k))


def _forge_wallet_payout(logs: Logs, *, reseal: bool) -> tuple[str, int]:
    """Add a chip to one payout of a mid-log hand in the wallet's ledger: (hand id, ledger index)."""
    envelopes = logs.envelopes()
    _, _, ended = find_event(envelopes, lambda e: isinstance(e, HandEnded) and bool(e.payouts))
    pot_account = f"pot/nt-1/{int(ended.hand_id.rsplit('-', 1)[1])}"
    ledger = [envelope_codec.decode(m.data) for m in logs.wallet]
    for k, env in enumerate(ledger):
        for j, r in enumerate(env.events):
            doc = json.loads(r.payload)
            for t in doc.get("transfers") or []:
                if t.get("debit") == pot_account and t.get("code") == "hand_payout":
                    t["amount"] += 1
                    events = list(env.events)
                    events[j] = RecordedEvent(type=r.type, payload=json.dumps(doc).encode())
                    ledger[k] = replace(env, events=tuple(events))
                    if reseal:
                        ledger = resealed(ledger, k)
                    logs.wallet = [
                        replace(m, data=envelope_codec.encode(e))
                        for m, e in zip(logs.wallet, ledger, strict=True)
                    ]
                    return ended.hand_id, k
    raise AssertionError(f"no payout transfer of {pot_account} in the ledger")


def test_an_altered_wallet_payout_breaks_the_ledgers_chain(nt1: Logs, tmp_path: Path) -> None:
    logs = _copy(nt1)
    _, k = _forge_wallet_payout(logs, reseal=False)
    failure = _expect(tmp_path, logs, check="wallet", version=None, hand=None)
    assert f"hash chain is broken at its version {k + 1}" in failure["detail"]


def test_an_altered_wallet_payout_with_a_resealed_ledger_fails_the_wallet_check(
    nt1: Logs, tmp_path: Path
) -> None:
    logs = _copy(nt1)
    hand_id, _ = _forge_wallet_payout(logs, reseal=True)
    ended_at = next(
        e.version
        for e in logs.envelopes()
        for r in e.events
        if r.type == "HandEnded" and json.loads(r.payload)["hand_id"] == hand_id
    )
    failure = _expect(tmp_path, logs, check="wallet", version=ended_at, hand=int(hand_id.rsplit("-", 1)[1]))
    assert "paid" in failure["detail"]


# -- PHH export, replayed by pokerkit -------------------------------------------------------------


def _strict_pokerkit(text: str, rake: Callable[[int, Any], tuple[int, int]]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # A fold when checking is free (a player leaving mid-hand is folded by the table at
        # their turn): legal in pokerkit's cash-game mode, which PHH replays, with this advice.
        warnings.filterwarnings("ignore", message="There is no reason for this player to fold")
        hh = PkHandHistory.loads(text, rake=rake)
        state = hh.create_state()
        for action in hh.actions:
            while state.can_burn_card():
                state.burn_card("??")
            parse_action(state, action, hh.parse_value)
    return state


def _hands_by_id(played: Path) -> dict[str, HandReplay]:
    with offline_server(played) as private:
        evidence = asyncio.run(read_evidence(private, None))
    out: dict[str, HandReplay] = {}
    for ev in evidence:
        r = replay_table(ev.table_id, ev.log, reveals=ev.reveals, wallet=ev.wallet)
        assert r.ok
        out.update((h.hand_id, h) for h in r.hands)
    return out


def _split_phhs(text: str) -> Iterator[str]:
    # pokerkit reads one hand per .phh text: cut each [n] table out of the .phhs text.
    for key in tomllib.loads(text):
        start = text.index(f"[{key}]\n") + len(f"[{key}]\n")
        end = text.find("\n[", start)
        yield text[start:] if end < 0 else text[start : end + 1]


def test_exported_hands_replay_in_pokerkit_strictly_to_the_same_stacks(played: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "phh"
    code, _, err = _run("phh", "export", "--all", "--out", str(out_dir), "--data-dir", str(played))
    assert code == 0, err
    hands = _hands_by_id(played)
    files = sorted(out_dir.glob("*.phhs"))
    assert {f.stem for f in files} == {"nt-1", "nt-2", "ft-1", "po-1", "po-2"}  # no Six Plus (seeds ranking)
    replayed = 0
    variants: set[str] = set()
    for path in files:
        for text in _split_phhs(path.read_text(encoding="utf-8")):
            doc = tomllib.loads(text)
            h = hands[doc["_hand_id"]]
            # The rake the log recorded, charged per pot as pokerkit rakes. One pot: all of it
            # (pokerkit's base differs when a hand is won by folds: it returns the winner's
            # whole last bet before raking, the seeds only the uncalled part). Side pots: by
            # the amount of each pot as the log awarded it.
            awarded = [e for _, e in h.hand_events() if isinstance(e, PotAwarded)]
            per_pot = {e.amount: e.rake for e in awarded}
            single = awarded[0].rake if len(awarded) == 1 else None

            def rake(
                amount: int, _state: Any, per_pot: dict[int, int] = per_pot, single: int | None = single
            ) -> tuple[int, int]:
                r = min(single, amount) if single is not None else per_pot.get(amount, 0)
                return r, amount - r

            state = _strict_pokerkit(text, rake)
            assert not state.status, (path.name, doc["hand"])
            ended, started = h.ended, h.started
            assert ended is not None
            assert started is not None
            by_seat = {s.seat: s.amount for s in ended.stacks}
            assert list(state.stacks) == doc["finishing_stacks"] == [by_seat[s - 1] for s in doc["seats"]]
            assert doc["players"] == [
                next(p.player for p in started.seats if p.seat == s - 1) for s in doc["seats"]
            ]
            assert doc["_rake"] == ended.rake
            variants.add(doc["variant"])
            replayed += 1
    assert variants == {"NT", "FT", "PO"}
    skipped = [line for line in err.splitlines() if line.startswith("skipped ")]
    assert replayed + len(skipped) == len(hands)
    assert replayed >= 100, (replayed, skipped[:20])
    # every skip names a reason PHH cannot express
    assert all(": " in line for line in skipped)
