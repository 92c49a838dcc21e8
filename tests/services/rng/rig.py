"""Test rig: a real ``grpc.aio`` rng server on a free port over in-memory stores."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from grpc import aio

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as pb_grpc
from openpoker.services.rng.app import RngApp
from openpoker.services.rng.handlog import InMemoryHandLog
from openpoker.services.rng.sealing import SeedSealer
from openpoker.services.rng.server import spec
from openpoker.services.rng.store import InMemoryShuffleStore, ShuffleStore
from openpoker.shell.client import channel
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import start_server
from openpoker.shuffle.entropy import os_seed

KEY = bytes(range(100, 132))


@dataclass
class Rig:
    stub: pb_grpc.RngServiceAsyncStub
    store: ShuffleStore
    hand_log: InMemoryHandLog
    sealer: SeedSealer


def dealer() -> tuple[tuple[str, str], ...]:
    return (("x-caller", "dealer"),)


def caller(name: str) -> tuple[tuple[str, str], ...]:
    return (("x-caller", name),)


async def start_rig(
    *, seed_source: Callable[[], bytes] = os_seed, store: ShuffleStore | None = None
) -> AsyncIterator[Rig]:
    store = InMemoryShuffleStore() if store is None else store
    hand_log = InMemoryHandLog()
    sealer = SeedSealer(KEY, "test-key")
    app = RngApp(store=store, hand_log=hand_log, sealer=sealer, seed_source=seed_source)
    config = ShellConfig.from_env("rng", environ={"POKER_INSECURE": "true", "POKER_RNG_PORT": "0"})
    running = await start_server(config, [spec(app)])
    chan: aio.Channel = channel(running.address)
    try:
        yield Rig(stub=pb_grpc.RngServiceStub(chan), store=store, hand_log=hand_log, sealer=sealer)
    finally:
        await chan.close()
        await running.stop(0)


def cards_of(response: pb.ShuffleResponse) -> list[str]:
    """The card codes of a deck from a rig without deck keys (sent as codes, not sealed)."""
    text = response.sealed_deck.decode("ascii")
    return [text[i : i + 2] for i in range(0, len(text), 2)]
