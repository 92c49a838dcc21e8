"""Seeds never reach a log line, an error or the store in plaintext; sealing binds records."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import structlog

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.services.rng.config import RngConfig
from openpoker.services.rng.errors import SeedUnsealable
from openpoker.services.rng.sealing import SeedSealer, associated_data
from openpoker.services.rng.store import InMemoryShuffleStore, decode, encode
from openpoker.shell.config import ConfigError, ShellConfig
from openpoker.shell.logs import configure_logging
from openpoker.shuffle.deck_seal import ensure_deck_keys
from tests.helpers.natscreds import nats_env
from tests.services.rng.rig import KEY, caller, cards_of, dealer, start_rig


def seed_forms(seed: bytes) -> list[str]:
    """Every way a seed could plausibly be printed."""
    return [
        seed.hex(),
        seed.hex().upper(),
        repr(seed),
        str(seed),
        base64.b64encode(seed).decode(),
        base64.urlsafe_b64encode(seed).decode(),
        str(list(seed)),
    ]


@pytest.fixture
def restore_logging() -> Iterator[None]:
    # configure_logging binds structlog to the captured stdout; undo it for later tests.
    try:
        yield
    finally:
        structlog.reset_defaults()


@pytest.mark.usefixtures("restore_logging")
@pytest.mark.parametrize("log_format", ["json", "console"])
async def test_logs_never_contain_a_seed(capsys: pytest.CaptureFixture[str], log_format: str) -> None:
    configure_logging(
        ShellConfig.from_env(
            "rng",
            environ={
                "POKER_INSECURE": "true",
                "POKER_LOG_LEVEL": "debug",
                "POKER_LOG_FORMAT": log_format,
                "POKER_RNG_PORT": "0",
            },
        )
    )
    store = InMemoryShuffleStore()
    seeds: list[bytes] = []
    async for rig in start_rig(store=store):
        for i in range(20):
            hand = f"h-{i}"
            req = pb.ShuffleRequest(request_id=f"r{i}", table_id="t-1", hand_id=hand, deck_size=52)
            r = await rig.stub.Shuffle(req, metadata=dealer())
            await rig.stub.Shuffle(req, metadata=dealer())  # idempotent retry
            # A reveal refused (hand live), then granted, then verified, tampered too.
            with pytest.raises(grpc.aio.AioRpcError):
                await rig.stub.RevealSeed(pb.RevealSeedRequest(hand_id=hand), metadata=dealer())
            rig.hand_log.end("t-1", hand)
            record = (
                await rig.stub.RevealSeed(pb.RevealSeedRequest(hand_id=hand), metadata=caller("auditor"))
            ).record
            seeds.append(record.seed)
            record.dealt.extend(pb.DealtCard(position=p, card=c) for p, c in enumerate(cards_of(r)[:5]))
            assert (await rig.stub.Verify(pb.VerifyRequest(record=record))).ok
            record.seed = bytes([record.seed[0] ^ 1]) + record.seed[1:]
            assert not (await rig.stub.Verify(pb.VerifyRequest(record=record))).ok
            with pytest.raises(grpc.aio.AioRpcError):
                await rig.stub.Shuffle(
                    pb.ShuffleRequest(request_id="x", table_id="t-2", hand_id=hand, deck_size=52),
                    metadata=dealer(),
                )
    out = capsys.readouterr()
    logs = out.out + out.err
    assert "shuffle.committed" in logs  # the capture does see the service's log lines
    assert "seed.revealed" in logs
    assert len(set(seeds)) == 20
    for seed in seeds:
        for form in seed_forms(seed):
            assert form not in logs
        stored = await store.get(f"h-{seeds.index(seed)}")
        assert stored is not None
        assert seed not in stored.sealed_seed
        assert seed not in encode(stored)
        assert all(form not in repr(stored) for form in seed_forms(seed))


def test_sealed_seed_is_bound_to_its_record() -> None:
    sealer = SeedSealer(KEY, "k1")
    seed = bytes(range(32))
    aad = associated_data(version="v1", table_id="t", hand_id="h1", commitment="c")
    sealed = sealer.seal(seed, aad)
    assert sealer.open(sealed, aad, hand_id="h1") == seed
    assert sealer.seal(seed, aad) != sealed  # fresh nonce per seal
    for other in (
        associated_data(version="v1", table_id="t", hand_id="h2", commitment="c"),
        associated_data(version="v1", table_id="t2", hand_id="h1", commitment="c"),
        associated_data(version="v2", table_id="t", hand_id="h1", commitment="c"),
    ):
        with pytest.raises(SeedUnsealable) as e:
            sealer.open(sealed, other, hand_id="h2")
        assert seed.hex() not in str(e.value)
    with pytest.raises(SeedUnsealable):
        SeedSealer(bytes(32), "k2").open(sealed, aad, hand_id="h1")
    flipped = sealed[:20] + bytes([sealed[20] ^ 1]) + sealed[21:]
    with pytest.raises(SeedUnsealable):
        sealer.open(flipped, aad, hand_id="h1")
    assert KEY.hex() not in repr(sealer)


async def test_a_tampered_store_record_is_data_loss() -> None:
    store = InMemoryShuffleStore()
    async for rig in start_rig(store=store):
        await rig.stub.Shuffle(
            pb.ShuffleRequest(request_id="r", table_id="t-1", hand_id="h", deck_size=52), metadata=dealer()
        )
        stored = await store.get("h")
        assert stored is not None
        # Move the record to another table: the sealed seed no longer opens.
        store._records["h"] = dataclasses.replace(stored, table_id="t-9")
        rig.hand_log.end("t-9", "h")
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await rig.stub.RevealSeed(pb.RevealSeedRequest(hand_id="h"), metadata=dealer())
        assert e.value.code() == grpc.StatusCode.DATA_LOSS


def test_store_codec_round_trip() -> None:
    sealer = SeedSealer(KEY, "k1")
    from openpoker.services.rng.store import StoredShuffle

    record = StoredShuffle(
        version="openpoker-shuffle-v1",
        table_id="t",
        hand_id="h/ü 1",
        deck_size=36,
        commitment="ab" * 32,
        sealed_seed=sealer.seal(bytes(32), b""),
        key_id="k1",
    )
    assert decode(encode(record)) == record


def test_config_requires_a_key_in_production_and_never_echoes_it(tmp_path: Path) -> None:
    deck_keys = tmp_path / "deck-keys.json"
    ensure_deck_keys(deck_keys)
    tls = {"POKER_TLS_DIR": "/nonexistent/pki", "POKER_ENV": "production", **nats_env(tmp_path, "rng")}
    with pytest.raises(ConfigError) as e:
        RngConfig.from_env(tls)
    assert e.value.variable == "POKER_RNG_SEED_KEY"
    with pytest.raises(ConfigError) as e:  # over TLS decks leave sealed, or not at all
        RngConfig.from_env({**tls, "POKER_RNG_SEED_KEY": KEY.hex()})
    assert e.value.variable == "POKER_DECK_KEYS"
    bad = "zz" + "11" * 31
    with pytest.raises(ConfigError) as e:
        RngConfig.from_env({"POKER_INSECURE": "true", "POKER_RNG_SEED_KEY": bad})
    assert bad not in str(e.value)
    good = RngConfig.from_env({**tls, "POKER_RNG_SEED_KEY": KEY.hex(), "POKER_DECK_KEYS": str(deck_keys)})
    assert (good.seed_key, good.ephemeral_key) == (KEY, False)
    assert good.deck_keys is not None
    assert KEY.hex() not in repr(good)
    dev = RngConfig.from_env({"POKER_INSECURE": "true"})
    assert dev.ephemeral_key
    assert len(dev.seed_key) == 32
