"""With a keyring (a secure system) the dealer checks every table envelope it folds as the table
service loads it (chain and signature): at the first that fails it stops driving that table
(``log.corrupt``, once) and folds nothing more of it; other tables go on."""

from __future__ import annotations

import datetime as dt
import json

from cryptography.hazmat.primitives.asymmetric import ed25519
from structlog.testing import capture_logs

from openpoker.engine import codec
from openpoker.engine import table as engine_table
from openpoker.engine.table_events import OpenTable
from openpoker.eventstore import GENESIS, Draft, Envelope, RecordedEvent, seal
from openpoker.eventstore.loading import signature_verifier
from openpoker.eventstore.signing import TABLE_WRITER, Keyring, PublicKey, Signer, raw_public
from openpoker.services.dealer import checkpoint
from openpoker.services.dealer.app import DealerApp
from openpoker.services.dealer.audit import InMemoryAudit
from tests.services.dealer.fakes import FakeRng, FakeTable, FakeWallet
from tests.services.dealer.rig import rules

T0 = dt.datetime(2026, 11, 27, 22, 0, tzinfo=dt.UTC)


def _chain(
    table_id: str, count: int, signer: Signer | None, *, start: int = 1, prev: bytes = GENESIS
) -> list[Envelope]:
    out = []
    for version in range(start, start + count):
        draft = Draft(
            stream_id=table_id,
            version=version,
            command_id=f"c{version}",
            owner_epoch=1,
            rules_version="seeds/1",
            engine_version="e1",
            events=(RecordedEvent(type="Bookkeeping", payload=b"{}"),),  # skipped by the track
            recorded_at=T0,
        )
        out.append(seal(draft, prev, signer=signer))
        prev = out[-1].hash
    return out


async def test_a_table_envelope_not_signed_by_the_table_key_stops_that_table_only() -> None:
    table_key = Signer.from_key(TABLE_WRITER, ed25519.Ed25519PrivateKey.generate())
    public = PublicKey(
        key_id=table_key.key_id,
        writer=TABLE_WRITER,
        public=raw_public(table_key.key.public_key()),
        created=T0,
    )
    table = FakeTable(lambda *_: None)  # the fake's own appends are not part of this test
    app = DealerApp(
        rng=FakeRng(table),
        table=table,
        wallet=FakeWallet(),
        audit=InMemoryAudit(),
        verifier=signature_verifier(Keyring(keys={public.key_id: public}), writer=TABLE_WRITER),
    )
    try:
        good_a = _chain("a", 2, table_key)
        good_b = _chain("b", 3, table_key)
        forged = _chain("a", 1, None, start=3, prev=good_a[-1].hash)[0]  # unsigned, chain whole
        genuine_after = _chain("a", 1, table_key, start=3, prev=good_a[-1].hash)[0]
        sequence = 0
        with capture_logs() as logs:
            for table_id, env in [*(("a", e) for e in good_a), ("a", forged), *(("b", e) for e in good_b)]:
                sequence += 1
                app.apply(table_id, env, sequence, subject=f"poker.table.0.{table_id}")
            app.apply("a", genuine_after, sequence + 1)  # nothing past the finding is folded
        corrupt = [e for e in logs if e["event"] == "log.corrupt"]
        assert [(e["stream"], e["sequence"], e["problem"]) for e in corrupt] == [("a", 3, "rejected")]
        assert corrupt[0]["detail"] == "unsigned envelope at version 3"
        assert "a" not in app.drivers
        assert app.quarantined["a"].version == 3
        assert app.drivers["b"].track.version == 3
    finally:
        await app.stop()


async def test_after_a_checkpoint_the_next_envelope_must_chain_from_it_and_be_signed() -> None:
    table_key = Signer.from_key(TABLE_WRITER, ed25519.Ed25519PrivateKey.generate())
    public = PublicKey(
        key_id=table_key.key_id,
        writer=TABLE_WRITER,
        public=raw_public(table_key.key.public_key()),
        created=T0,
    )
    verifier = signature_verifier(Keyring(keys={public.key_id: public}), writer=TABLE_WRITER)
    opened = engine_table.decide(None, OpenTable(table_id="a", rules=rules()))
    first = seal(
        Draft(
            stream_id="a",
            version=1,
            command_id="c1",
            owner_epoch=1,
            rules_version="seeds/1",
            engine_version="e1",
            events=tuple(
                RecordedEvent(type=type(e).__name__, payload=json.dumps(codec.encode(e)).encode())
                for e in opened
            ),
            recorded_at=T0,
        ),
        GENESIS,
        signer=table_key,
    )
    log = [first, *_chain("a", 2, table_key, start=2, prev=first.hash)]
    table = FakeTable(lambda *_: None)
    apps = [
        DealerApp(
            rng=FakeRng(table), table=table, wallet=FakeWallet(), audit=InMemoryAudit(), verifier=verifier
        )
        for _ in range(2)
    ]
    try:
        for sequence, env in enumerate(log, start=1):
            apps[0].apply("a", env, sequence, subject="poker.table.0.a")
        saved = checkpoint.encode(apps[0].drivers["a"].track)
        again = apps[1]
        again.restore(checkpoint.decode(saved, "a"))
        genuine = _chain("a", 1, table_key, start=4, prev=log[-1].hash)[0]
        again.apply("a", genuine, 4, subject="poker.table.0.a")
        assert again.drivers["a"].track.version == 4
        forged = _chain("a", 1, None, start=5, prev=genuine.hash)[0]
        again.apply("a", forged, 5, subject="poker.table.0.a")
        assert again.quarantined["a"].version == 5
    finally:
        for app in apps:
            await app.stop()
