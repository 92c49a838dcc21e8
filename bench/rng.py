"""rng service: CPU per hand of the ``python -m openpoker.services.rng`` process, as the dealer
uses it.

Setup: a real nats-server and ONE rng process (info-level JSON logs to a file, as ``pokerctl
up`` and ``bench system`` run it). Per hand, exactly the dealer's calls: ``Shuffle`` (as the
dealer), then the table's log gets the hand (``ENVELOPES_PER_HAND`` sealed envelopes on the
table's subject, ``HandEnded`` in the last one, as the table service appends them), then
``RevealSeed``. Tables run concurrently (one hand after another at each), like the dealer's
drivers. The figure is the rng process's CPU (user + system, ``/proc``) over the measured hands
divided by their number, after a warm-up hand per table.

Peer, same run: the pure library alone (commitment + deck derivation + verification of the
revealed record, in this process), the floor under the service's I/O.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import nats

from bench.services import _free_port, _measured, _serving, _spawn
from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as pb_grpc
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, ensure_stream
from openpoker.eventstore.writer import SealedWriter
from openpoker.shell.client import channel
from openpoker.shell.natsproc import NatsServer
from openpoker.shuffle import ShuffleRecord, commitment, dealt_from_top, derive_deck, verify_record

DEALER = (("x-caller", "dealer"),)
ENVELOPES_PER_HAND = 8  # a heads-up hand in bench system: start, deck, ~6 actions (measured)


class _TableLog(SealedWriter):
    """Writes one table's hands the way the table service does (sealed envelopes)."""

    def __init__(self, store: JetStreamEventStore, table_id: str) -> None:
        super().__init__(store, table_id, clock=lambda: dt.datetime.now(dt.UTC))

    async def play(self, hand_id: str, commitment_hex: str) -> None:
        await self.append(("HandStarted", {"type": "HandStarted", "hand_id": hand_id}))
        await self.append(("DeckCommitted", {"type": "DeckCommitted", "commitment": commitment_hex}))
        for i in range(ENVELOPES_PER_HAND - 3):
            await self.append(("ActionTaken", {"type": "ActionTaken", "seat": i % 2, "action": "call"}))
        await self.append(
            ("ActionTaken", {"type": "ActionTaken", "seat": 1, "action": "check"}),
            ("HandEnded", {"type": "HandEnded", "hand_id": hand_id, "stacks": [200, 200]}),
        )


async def _table(stub: Any, log: _TableLog, first: int, hands: int) -> None:
    for n in range(first, first + hands):
        hand_id = f"{log.table_id}-{n}"
        shuffled = await stub.Shuffle(
            pb.ShuffleRequest(
                request_id=f"{hand_id}-shuffle", table_id=log.table_id, hand_id=hand_id, deck_size=52
            ),
            metadata=DEALER,
        )
        await log.play(hand_id, shuffled.commitment)
        await stub.RevealSeed(pb.RevealSeedRequest(hand_id=hand_id), metadata=DEALER)


def _pure(hands: int) -> float:
    """Microseconds per hand of the library work a hand needs: commit, derive, verify."""
    started = time.perf_counter()
    for n in range(hands):
        seed = os.urandom(32)
        hand_id = f"pure-{n}"
        digest = commitment(seed, hand_id)
        deck = derive_deck(seed, hand_id, 52)
        record = ShuffleRecord(
            version="openpoker-shuffle-v1",
            hand_id=hand_id,
            deck_size=52,
            commitment=digest,
            seed=seed,
            dealt=dealt_from_top(deck[:9]),
        )
        assert verify_record(record).ok
    return (time.perf_counter() - started) / hands * 1e6


async def _measure(url: str, data: Path, tables: int, hands: int) -> dict[str, Any]:
    port = _free_port()
    env = {
        **os.environ,
        "POKER_NATS_URL": url,
        "POKER_RNG_PORT": str(port),
        "POKER_RNG_SEED_KEY": os.urandom(32).hex(),
        "POKER_LOG_LEVEL": "info",
        "POKER_LOG_FORMAT": "json",
    }
    nc = await nats.connect(url)
    proc = _spawn("openpoker.services.rng", env, log=data / "rng.log")
    try:
        js = nc.jetstream()
        await ensure_stream(js, TABLE_EVENTS)
        store = JetStreamEventStore(js, stream=TABLE_EVENTS.name, nc=nc)
        target = f"127.0.0.1:{port}"
        await _serving(target)
        async with channel(target) as chan:
            stub: Any = pb_grpc.RngServiceStub(chan)
            logs = [_TableLog(store, f"bench-rng-{t}") for t in range(tables)]
            await asyncio.gather(*(_table(stub, log, 1, 1) for log in logs))  # warm-up
            measured = asyncio.gather(*(_table(stub, log, 2, hands) for log in logs))
            elapsed, cpu = await _measured(proc.pid, measured)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        await nc.close()
    total = tables * hands
    return {
        "tables": tables,
        "hands": total,
        "envelopes_per_hand": ENVELOPES_PER_HAND,
        "rng_cpu_s": round(cpu, 2),
        "rng_cpu_ms_per_hand": round(1000 * cpu / total, 3),
        "hands_per_s": round(total / elapsed, 1),
        "peer_pure_library_us_per_hand": round(_pure(2000), 1),
    }


def run(quick: bool) -> dict[str, Any]:
    tables, hands = (4, 25) if quick else (20, 100)
    with tempfile.TemporaryDirectory() as tmp, NatsServer(data_dir=Path(tmp) / "nats") as server:
        return asyncio.run(_measure(server.url, Path(tmp), tables, hands))
