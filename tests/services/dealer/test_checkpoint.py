"""Checkpoints of a table's track: taken between hands, equal to the fold they replace, and
refused (the table's log is folded instead) when from another engine version, format or table,
or corrupt."""

from __future__ import annotations

import itertools
import json

import pytest

from openpoker.services.dealer import checkpoint
from openpoker.services.dealer.checkpoint import CheckpointUnusable
from openpoker.services.dealer.checkpoints import Checkpoints
from openpoker.services.dealer.tracker import TableTrack
from tests.helpers.waiting import until
from tests.services.dealer.rig import Rig, rules

T = "cp-1"


async def played_log(hands: int = 3) -> list[tuple[int, object]]:
    """The envelopes of a table where ``hands`` hands were played (with their sequences)."""
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())
    rig.seat(T, {0: "ann", 1: "bob", 2: "cy"})
    await until(lambda: len(rig.wallet.settlements) >= hands, what="settled hands")
    await rig.app.set_paused(T, True)
    await until(lambda: not rig.app.active_hands(), what="between hands")
    await rig.app.stop()
    return [(seq, env) for seq, (_, env) in enumerate(rig.table.envelopes, start=1)]


def assert_same(a: TableTrack, b: TableTrack) -> None:
    assert a.state is not None
    assert b.state is not None
    assert a.state.snapshot() == b.state.snapshot()
    assert (a.version, a.sequence, a.last_hash, a.hands, a.skipped) == (
        b.version,
        b.sequence,
        b.last_hash,
        b.hands,
        b.skipped,
    )
    assert a.current == b.current


async def test_a_checkpoint_at_every_hand_boundary_restores_the_fold() -> None:
    log = await played_log()
    folded = TableTrack(table_id=T)
    taken = 0
    for i, (seq, env) in enumerate(log):
        folded.apply(env, seq)  # type: ignore[arg-type]
        if not checkpoint.between_hands(folded):
            with pytest.raises(CheckpointUnusable):
                checkpoint.encode(folded)
            continue
        restored = checkpoint.decode(checkpoint.encode(folded), T)
        taken += 1
        assert_same(restored, folded)
        # Folding the rest of the log on top gives the same track as the whole fold.
        whole = TableTrack(table_id=T)
        for s, e in log:
            whole.apply(e, s)  # type: ignore[arg-type]
        for s, e in log[i + 1 :]:
            restored.apply(e, s)  # type: ignore[arg-type]
        assert_same(restored, whole)
    assert taken > 3


async def good_checkpoint() -> bytes:
    track = TableTrack(table_id=T)
    for seq, env in await played_log(hands=1):
        track.apply(env, seq)  # type: ignore[arg-type]
    return checkpoint.encode(track)


def edited(data: bytes, **changes: object) -> bytes:
    doc = json.loads(data)
    doc.update(changes)
    return json.dumps(doc).encode()


async def test_checkpoints_of_another_engine_format_or_table_or_corrupt_are_refused() -> None:
    good = await good_checkpoint()
    assert checkpoint.decode(good, T).version > 0
    refused = [
        edited(good, engine="openpoker-engine/0.0"),
        edited(good, format=checkpoint.FORMAT + 1),
        edited(good, table_id="another"),
        edited(good, version="7"),
        edited(good, sequence=-1),
        edited(good, state={"seats": "nonsense"}),
        edited(good, current={"hand_id": "h"}),
        edited(good, last_hash="zz"),
        good[: len(good) // 2],
        b"\x00\xffnot json",
        b"[]",
        b"",
    ]
    for data in refused:
        with pytest.raises(CheckpointUnusable):
            checkpoint.decode(data, T)
    with pytest.raises(CheckpointUnusable):
        checkpoint.decode(good, "another")


class _Kv:
    """Just enough of a KV bucket for ``Checkpoints``."""

    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}

    async def put(self, key: str, value: bytes) -> int:
        self.values[key] = value
        return len(self.values)


async def test_checkpoints_are_taken_between_hands_every_so_many_versions() -> None:
    kv = _Kv()
    book = Checkpoints(kv, every=10)  # type: ignore[arg-type]
    track = TableTrack(table_id=T)
    versions = []
    for seq, env in await played_log():
        track.apply(env, seq)  # type: ignore[arg-type]
        before = dict(kv.values)
        book.note(track)
        await book.flush()
        if kv.values != before:
            assert checkpoint.between_hands(track)
            versions.append(track.version)
    assert versions[0] == 1  # the table's first envelope: a table is never without one for long
    assert all(b - a >= 10 for a, b in itertools.pairwise(versions))
    assert checkpoint.decode(kv.values["checkpoint." + T], T).version == versions[-1]


async def test_a_table_gone_quiet_between_hands_is_checkpointed_at_its_last_version() -> None:
    kv = _Kv()
    book = Checkpoints(kv, every=1_000)  # type: ignore[arg-type]
    track = TableTrack(table_id=T)
    for seq, env in await played_log():
        track.apply(env, seq)  # type: ignore[arg-type]
        book.note(track)
    await book.flush()
    assert checkpoint.decode(kv.values["checkpoint." + T], T).version == 1  # only the first
    book.sweep([track])  # moved since its checkpoint: seen now, not yet quiet
    await book.flush()
    assert checkpoint.decode(kv.values["checkpoint." + T], T).version == 1
    book.sweep([track])  # unchanged since the last sweep: quiet
    await book.flush()
    assert checkpoint.decode(kv.values["checkpoint." + T], T).version == track.version


async def test_a_clean_stop_checkpoints_every_table_between_hands_at_its_version() -> None:
    kv = _Kv()
    book = Checkpoints(kv, every=1_000)  # type: ignore[arg-type]
    track = TableTrack(table_id=T)
    for seq, env in await played_log():
        track.apply(env, seq)  # type: ignore[arg-type]
        book.note(track)
    book.final([track])
    await book.flush()
    assert checkpoint.decode(kv.values["checkpoint." + T], T).version == track.version
