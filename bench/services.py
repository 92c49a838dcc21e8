"""Table service: action round trip (client -> table -> engine -> append -> reply) and actions/s.

Setup: a real nats-server, the wallet service and ONE table-service process (``python -m
openpoker.services.table``), each its own process as in production; the client runs in this process.
Heads-up tables play check/call hands; each ``Act`` is one gRPC call that the table decides with
the engine and appends to JetStream before answering. A driver works from the replies, as the
dealer and players do: ``StartHand`` (as the dealer) returns the hand with the seat to act, each
``Act`` returns the table with the live hand; nothing else is read (no ``GetTable`` per hand:
neither the dealer nor players make that call).

* latency: sequential actions at one table (p50/p99 over every ``Act``), over ``ActStream``
  with the table in each reply, over unary ``Act``, and over ``ActStream`` with ``omit_table``
  (as the bots and the dealer act: the reply carries the version only, and this driver then
  reads the table with an untimed ``GetTable`` to learn the next seat, where bots follow
  ``WatchTable``);
* throughput: one driver per table, 50 tables at once, for a fixed time (actions/s served by
  the one table-service process), three ways in turn: the drivers' commands on four shared
  ``ActBatchStream``s (``shell.streamcalls.BatchedCalls``: the commands made while a message is
  in flight leave together, as a game server acting for many tables over a few connections
  sends them; the headline figure), one ``ActStream`` per table (as each bot sends its own), one
  unary call per command. On the streams a hand's ``StartHand`` goes with the actions
  (``ActStreamRequest.start_hand``; the drivers deal as well as act): a unary ``StartHand``
  beside the streams would cost the service a whole unary call per hand and break up the
  batches;
* peers, same run: a bare gRPC call to the same server (health check) and a bare JetStream
  append (publish with ``Nats-Expected-Last-Subject-Sequence`` and ``Nats-Msg-Id``) from here;
  their sum is the floor of an action's round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

from grpc_health.v1 import health_pb2, health_pb2_grpc

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from openpoker.engine.cards import STANDARD_DECK
from openpoker.eventstore import keyfiles
from openpoker.pokerctl import natssetup
from openpoker.shell import childproc, natsauth, natsconn, pki
from openpoker.shell.client import channel, health_status
from openpoker.shell.natsconn import NatsCredentials
from openpoker.shell.natsproc import NatsServer
from openpoker.shell.streamcalls import BatchedCalls, StreamedCalls
from openpoker.shell.tls import TlsFiles
from openpoker.shuffle.deck_seal import DeckKeys, ensure_deck_keys, seal_deck

# Who the drivers are on a plaintext run (headers); over TLS their certificates say it: the
# dealer's for the hands (StartHand, and actions named by player, as a game server sends them),
# pokerctl's staff certificate for tables, seats and deposits.
DEALER = (("x-caller", "dealer"),)
CASHIER = (("x-caller", "cashier"),)
ADMIN = (("x-caller", "pokerctl"),)
PREFIX = {"batched": "m", "stream": "s", "unary": "u", "paired": "c"}  # throughput rounds' table ids
# Throughput: as many tables as `bench system` seats bots at; the batched round's drivers split
# over this many ActBatchStreams (a game server's few connections): with one, every driver
# waits on the same message and the service idles while the answers travel and the next batch
# is made; with several, one stream's batch is decided while another's answers travel.
THROUGHPUT_TABLES = 50
BATCH_STREAMS = 4
# The paired cost rounds (``_paired_cost``): this many plaintext/secured pairs of this many seconds.
PAIRS = 9
PAIR_SECONDS = 4.0
ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stream_message(request: Any, *, omit_table: bool = False) -> pb.ActStreamRequest:
    """A driver's command as a stream message: StartHand as ``start_hand``, Act as ``request``."""
    if isinstance(request, pb.StartHandRequest):
        return pb.ActStreamRequest(start_hand=request)
    return pb.ActStreamRequest(request=request, omit_table=omit_table)


def batched_calls(stub: Any) -> BatchedCalls:
    """One ActBatchStream for many drivers (the replies carry the table, as on ActStream). The
    drivers deal too (``x-caller: dealer``), so a hand's StartHand goes in the batches as well."""
    return BatchedCalls(
        stub.ActBatchStream,
        wrap=stream_message,
        batch=lambda items: pb.ActBatchStreamRequest(actions=items),
        metadata=DEALER,
    )


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux ``/proc``), to report CPU per action."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _measured(pid: int, work: Awaitable[object]) -> tuple[float, float]:
    """Run ``work``; return the wall seconds it took and the CPU seconds process ``pid`` spent."""
    cpu0, started = _cpu_seconds(pid), time.perf_counter()
    await work
    return time.perf_counter() - started, _cpu_seconds(pid) - cpu0


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)


async def _serving(target: str, tls: TlsFiles | None = None) -> None:
    for _ in range(200):
        try:
            if await health_status(target, tls=tls) == "SERVING":
                return
        except Exception:
            pass
        await asyncio.sleep(0.05)
    raise RuntimeError(f"{target} did not start")


def _spawn(module: str, env: dict[str, str], *, log: Path | None = None) -> subprocess.Popen[bytes]:
    """``python -m module`` with ``env`` over this environment (warnings only unless ``env`` says
    otherwise), its output to ``log`` (appended) or dropped."""
    full = {**os.environ, "POKER_LOG_LEVEL": "warning", **env}
    if "POKER_TLS_DIR" not in env:
        full["POKER_INSECURE"] = "true"  # the run without security
    # childproc: the service dies with the bench if the bench is killed.
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(log.open("ab")) if log is not None else subprocess.DEVNULL
        return childproc.popen(
            [sys.executable, "-m", module],
            cwd=ROOT,
            env=full,
            stdout=out,
            stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
        )


class _Table:
    def __init__(
        self,
        stub: Any,
        table_id: str,
        rng: random.Random,
        *,
        admin: Any = None,
        deck_keys: DeckKeys | None = None,
        stream: bool = True,
        lean: bool = False,
        acts: BatchedCalls | None = None,
    ) -> None:
        self.stub = stub
        self.admin = admin or stub  # who creates the table
        self.deck_keys = deck_keys  # over TLS the table takes sealed decks only, as rng seals them
        self.table_id = table_id
        self.name = f"tables/{table_id}"
        self.rng = rng
        self.hands = 0
        self.view: pb.Hand | None = None  # the live hand as the last reply showed it
        # Commands (StartHand and the actions) over one ActStream (as the bots send their
        # actions), or one unary call each; ``lean``: actions on the stream with ``omit_table``
        # (the reply is the version only).
        self.lean = lean
        # ``acts`` given: this driver's commands share one ActBatchStream with other tables'.
        self.acts: StreamedCalls | BatchedCalls | None = acts or (
            StreamedCalls(stub.ActStream, wrap=lambda r: stream_message(r, omit_table=lean), metadata=DEALER)
            if stream
            else None
        )

    async def setup(self) -> None:
        config = pb.TableConfig(
            game=pb.GAME_TEXAS_HOLDEM,
            structure=pb.STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            seat_count=2,
        )
        await self.admin.CreateTable(
            pb.CreateTableRequest(request_id=str(uuid.uuid4()), table_id=self.table_id, config=config),
            metadata=ADMIN,
        )
        # Seated, like their actions, by the game server's (the dealer's) certificate: a service
        # names the players it acts for; pokerctl's staff certificate sits in nobody's seat.
        for seat, player in ((1, f"{self.table_id}-a"), (2, f"{self.table_id}-b")):
            await self.stub.JoinTable(
                pb.JoinTableRequest(
                    request_id=str(uuid.uuid4()), table=self.name, player_id=player, seat=seat, buy_in=200
                ),
                metadata=DEALER,
            )

    async def start(self) -> pb.Hand:
        deck = list(STANDARD_DECK)
        self.rng.shuffle(deck)
        self.hands += 1
        hand_id = f"{self.table_id}-h{self.hands}"
        codes = "".join(str(c) for c in deck)
        sealed = (
            codes.encode()
            if self.deck_keys is None
            else seal_deck(self.deck_keys, codes, table_id=self.table_id, hand_id=hand_id, commitment="")
        )
        request = pb.StartHandRequest(
            request_id=str(uuid.uuid4()), table=self.name, hand_id=hand_id, sealed_deck=sealed
        )
        if self.acts is None:
            reply = await self.stub.StartHand(request, metadata=DEALER)
        else:
            reply = await self.acts.call(request)
        return reply.hand  # type: ignore[no-any-return]

    async def act(self, hand: pb.Hand | None, samples: list[float]) -> pb.Hand | None:
        """One action on the live hand (``None`` or no seat to act: start the next hand). The
        hand comes from the previous reply, as a dealer and players see it: no extra reads."""
        if hand is None or not hand.to_act.seat:
            return await self.start()
        legal = hand.to_act
        player = next(s.player_id for s in hand.seats if s.seat == legal.seat)
        action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
        request = pb.ActRequest(
            request_id=str(uuid.uuid4()), table=self.name, player_id=player, action=action
        )
        t0 = time.perf_counter()
        reply = await (self.stub.Act(request) if self.acts is None else self.acts.call(request))
        samples.append(time.perf_counter() - t0)
        if self.lean:  # outside the timed round trip
            reply = await self.stub.GetTable(pb.GetTableRequest(name=self.name, viewer_player_id=player))
        table = reply.table
        return table.current_hand if table.status == pb.TABLE_STATUS_IN_HAND else None


async def _peers(
    target: str,
    nats_url: str,
    n: int,
    server_pid: int,
    *,
    tls: TlsFiles | None = None,
    nats_credentials: NatsCredentials | None = None,
) -> dict[str, float]:
    grpc_samples: list[float] = []
    async with channel(target, tls) as chan:
        stub: Any = health_pb2_grpc.HealthStub(chan)
        cpu0 = _cpu_seconds(server_pid)
        for _ in range(n):
            t0 = time.perf_counter()
            await stub.Check(health_pb2.HealthCheckRequest())
            grpc_samples.append(time.perf_counter() - t0)
        grpc_cpu = _cpu_seconds(server_pid) - cpu0
    nc = await natsconn.connect(nats_url, nats_credentials)
    js = nc.jetstream()
    await js.add_stream(name="BENCH_PEER", subjects=["bench.peer.>"], duplicate_window=120)
    append_samples: list[float] = []
    last = 0
    payload = b"x" * 600  # about one envelope
    append_cpu0 = time.process_time()
    for i in range(n):
        headers = {"Nats-Expected-Last-Subject-Sequence": str(last), "Nats-Msg-Id": f"peer:{i}:1"}
        t0 = time.perf_counter()
        ack = await js.publish("bench.peer.t1", payload, headers=headers)
        append_samples.append(time.perf_counter() - t0)
        last = ack.seq
    append_cpu = time.process_time() - append_cpu0
    await nc.close()
    return {
        "grpc_call_p50_ms": _pct(grpc_samples, 0.5),
        "grpc_call_p99_ms": _pct(grpc_samples, 0.99),
        "jetstream_append_p50_ms": _pct(append_samples, 0.5),
        "jetstream_append_p99_ms": _pct(append_samples, 0.99),
        "floor_p50_ms": round(_pct(grpc_samples, 0.5) + _pct(append_samples, 0.5), 3),
        # The table-service process's CPU for one bare health check (grpc.aio in Python, no
        # interceptor, no NATS): the floor of the server's CPU per RPC.
        "server_cpu_ms_per_bare_grpc_call": round(grpc_cpu / n * 1000, 3),
        # This process's CPU for one bare append (nats-py publish + ack in Python).
        "client_cpu_ms_per_bare_append": round(append_cpu / n * 1000, 3),
    }


async def _throughput(drivers: list[_Table], seconds: float, server_pid: int) -> dict[str, float]:
    """One driver per table, all at once, for ``seconds``; what the one server process did."""
    counts: list[float] = []
    deadline = time.perf_counter() + seconds

    async def drive(d: _Table) -> None:
        # A hand left live by an earlier window goes on where it stopped.
        while time.perf_counter() < deadline:
            d.view = await d.act(d.view, counts)

    cpu0, client0 = _cpu_seconds(server_pid), time.process_time()
    t0 = time.perf_counter()
    await asyncio.gather(*(drive(d) for d in drivers))
    elapsed = time.perf_counter() - t0
    cpu = _cpu_seconds(server_pid) - cpu0
    client_cpu = time.process_time() - client0
    hands = sum(d.hands for d in drivers)
    return {
        "actions_per_s": round(len(counts) / elapsed, 1),
        "hands_per_s": round(hands / elapsed, 1),
        # CPU the table-service process spent per action (the hands' StartHand included):
        # the load-independent cost; 1000 / this is the actions/s one core could serve.
        "server_cpu_ms_per_action": round(cpu / len(counts) * 1000, 3),
        # Per RPC or stream message: each hand adds a StartHand to its actions.
        "server_cpu_ms_per_rpc": round(cpu / (len(counts) + hands) * 1000, 3),
        # The drivers run in this one process and share the 2 cores with the server: when
        # this is near the server's figure, actions/s measures the machine, not the server.
        "client_cpu_ms_per_action": round(client_cpu / len(counts) * 1000, 3),
        "server_capacity_actions_per_s_per_core": round(len(counts) / cpu, 1),
        "concurrent_action_p50_ms": _pct(counts, 0.5),
        "concurrent_action_p99_ms": _pct(counts, 0.99),
    }


@dataclasses.dataclass
class _System:
    """One running system (nats-server, the wallet, one table service) and the bench's clients."""

    stub: Any  # TableService as the dealer (hands, seats, actions)
    admin: Any  # TableService as pokerctl (tables)
    table_pid: int
    target: str
    nats_url: str
    deck_keys: DeckKeys | None
    dealer_tls: TlsFiles | None
    nats_admin: NatsCredentials | None

    def driver(self, table_id: str, rng: random.Random, **kwargs: Any) -> _Table:
        return _Table(self.stub, table_id, rng, admin=self.admin, deck_keys=self.deck_keys, **kwargs)


@contextlib.asynccontextmanager
async def _system(tables: int, *, secure: bool) -> AsyncIterator[_System]:
    """Start a system, plaintext or secured as ``pokerctl up`` runs it, and fund the players of
    every table id the rounds use; stopped on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        server = NatsServer(data_dir=data / "nats")
        wallet_port, table_port = _free_port(), _free_port()
        dealer_tls = admin_tls = None
        nats_admin: NatsCredentials | None = None
        deck_keys: DeckKeys | None = None
        common: dict[str, str] = {}
        table_env: dict[str, str] = {}
        wallet_env: dict[str, str] = {}
        if secure:
            # As `pokerctl up` runs it: TLS and tokens on gRPC, NATS with a key per service over
            # TLS and streams set up by the admin identity, envelopes signed by their writer.
            local = pki.ensure_local_pki(data)
            server.config_file = natsauth.server_config(natsauth.ensure_nats_auth(data, local))
            nats_admin = NatsCredentials.local(natsauth.ADMIN, data)
            deck_keys = ensure_deck_keys(data / "deck-keys.json")
            common["POKER_TLS_DIR"] = str(local.root)
            common["POKER_WALLET_CLIENT_PORT"] = str(_free_port())
            common["POKER_TABLE_CLIENT_PORT"] = str(_free_port())
            table_env["POKER_DECK_KEYS"] = str(data / "deck-keys.json")
            for name, env in (("table", table_env), ("wallet", wallet_env)):
                env.update(NatsCredentials.local(name, data).env())
                env["POKER_SIGNING_KEY"] = str(keyfiles.ensure_signing_key(data, name))
            # Each service verifies the envelopes it loads against the published keyring.
            common["POKER_SIGNING_KEYS"] = str(keyfiles.keyring_path(data))
            dealer_tls = TlsFiles.from_pki(local, "dealer")
            admin_tls = TlsFiles.from_pki(local, pki.CLIENT)
        server.start()
        procs: list[subprocess.Popen[bytes]] = []
        try:
            if nats_admin is not None:
                await natssetup.set_up(server.url, nats_admin)
            common["POKER_NATS_URL"] = server.url
            # Each player deposits once (never broke): above the wallet's default deposit limits.
            limits = {
                f"POKER_WALLET_{k}": str(10**12) for k in ("MAX_DEPOSIT", "DAILY_DEPOSIT", "MAX_BALANCE")
            }
            wallet_env = {**common, **wallet_env, **limits, "POKER_WALLET_PORT": str(wallet_port)}
            procs.append(_spawn("openpoker.services.wallet", wallet_env))
            await _serving(f"127.0.0.1:{wallet_port}", admin_tls)
            procs.append(
                _spawn(
                    "openpoker.services.table",
                    {
                        **common,
                        **table_env,
                        "POKER_TABLE_PORT": str(table_port),
                        "POKER_TABLE_WALLET": f"127.0.0.1:{wallet_port}",
                    },
                )
            )
            target = f"127.0.0.1:{table_port}"
            await _serving(target, admin_tls)
            async with channel(f"127.0.0.1:{wallet_port}", admin_tls) as wchan:
                wallet: Any = wpb_grpc.WalletServiceStub(wchan)
                table_ids = [f"b{tables}", f"b{tables + 1}", f"b{tables + 2}"]
                table_ids += [f"{kind}{t}" for kind in PREFIX.values() for t in range(tables)]
                for table_id in table_ids:
                    for side in "ab":
                        await wallet.Deposit(
                            wpb.DepositRequest(
                                request_id=str(uuid.uuid4()), player=f"{table_id}-{side}", amount=10**6
                            ),
                            metadata=CASHIER,
                        )
            async with channel(target, dealer_tls) as chan, channel(target, admin_tls) as admin_chan:
                yield _System(
                    stub=pb_grpc.TableServiceStub(chan),
                    admin=pb_grpc.TableServiceStub(admin_chan),
                    table_pid=procs[1].pid,
                    target=target,
                    nats_url=server.url,
                    deck_keys=deck_keys,
                    dealer_tls=dealer_tls,
                    nats_admin=nats_admin,
                )
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
            server.stop()


async def _run(quick: bool, *, secure: bool = False) -> dict[str, object]:
    latency_actions = 300 if quick else 3000
    tables = 8 if quick else THROUGHPUT_TABLES
    batch_streams = 2 if quick else BATCH_STREAMS
    seconds = 2.0 if quick else 10.0
    async with _system(tables, secure=secure) as system:
        rng = random.Random(7)
        # Latency: one table per transport, one action at a time, alternating blocks of
        # 100 so both see the same machine.
        solos = {
            "stream": system.driver(f"b{tables}", rng),
            "unary": system.driver(f"b{tables + 1}", rng, stream=False),
            "lean": system.driver(f"b{tables + 2}", rng, lean=True),
        }
        latency: dict[str, list[float]] = {k: [] for k in solos}
        views: dict[str, pb.Hand | None] = {}
        for key, solo in solos.items():
            await solo.setup()
            views[key] = await solo.start()
            for _ in range(50):  # warm-up
                views[key] = await solo.act(views[key], [])
        while len(latency["stream"]) < latency_actions:
            for key, solo in solos.items():
                for _ in range(100):
                    views[key] = await solo.act(views[key], latency[key])
        # Throughput: every table at once; the batch stream, one stream per table, unary.
        rounds: dict[str, dict[str, float]] = {}
        for key in ("batched", "stream", "unary"):
            shared = [batched_calls(system.stub) for _ in range(batch_streams if key == "batched" else 0)]
            drivers = [
                system.driver(
                    f"{PREFIX[key]}{t}",
                    rng,
                    stream=key != "unary",
                    acts=shared[t % len(shared)] if shared else None,
                )
                for t in range(tables)
            ]
            for d in drivers:
                await d.setup()
            rounds[key] = await _throughput(drivers, seconds, system.table_pid)
            if shared:
                sent = sum(c.requests for c in shared)
                rounds[key]["commands_per_message"] = round(sent / sum(c.messages for c in shared), 1)
                for calls in shared:
                    await calls.close()
        peers = await _peers(
            system.target,
            system.nats_url,
            300 if quick else 2000,
            system.table_pid,
            tls=system.dealer_tls,
            nats_credentials=system.nats_admin,
        )
    stream, unary = rounds["stream"], rounds["unary"]
    return {
        # Headline figures: latency over ActStream (as a player's connection sends actions),
        # throughput with every table's driver on one shared ActBatchStream (as a game server
        # acting for many tables over one connection sends them).
        "action_p50_ms": _pct(latency["stream"], 0.5),
        "action_p99_ms": _pct(latency["stream"], 0.99),
        "actions_measured": len(latency["stream"]),
        "tables": tables,
        **rounds["batched"],
        # The same drivers with one ActStream per table (one action per gRPC message).
        "stream": stream,
        # The same with one unary Act per action, in the same run.
        "unary": {
            "action_p50_ms": _pct(latency["unary"], 0.5),
            "action_p99_ms": _pct(latency["unary"], 0.99),
            **unary,
        },
        # ActStream with omit_table, as the bots and the dealer act (latency only).
        "lean": {
            "action_p50_ms": _pct(latency["lean"], 0.5),
            "action_p99_ms": _pct(latency["lean"], 0.99),
        },
        "load_average_1m": round(os.getloadavg()[0], 1),
        **peers,
        "goals": {"action_p50_ms": 2.0, "action_p99_ms": 10.0, "actions_per_s": 1500},
    }


async def _paired_cost(quick: bool) -> dict[str, object]:
    """What security costs in actions/s, measured so that the machine's drift cancels out: both
    systems run at once (idle but for heartbeats while the other is driven), and short batched
    throughput windows alternate plaintext, secured, secured, plaintext... each pair giving one
    ratio; the cost is one minus the median ratio. Two throughput rounds a minute apart on a
    shared machine differ by up to 25% on their own, more than the cost being measured."""
    tables = 8 if quick else THROUGHPUT_TABLES
    pairs = 3 if quick else PAIRS
    seconds = 1.0 if quick else PAIR_SECONDS
    batch_streams = 2 if quick else BATCH_STREAMS
    async with _system(tables, secure=False) as plain, _system(tables, secure=True) as secure:
        sides: dict[str, list[dict[str, float]]] = {"plain": [], "secure": []}
        rng = random.Random(11)
        drivers: dict[str, list[_Table]] = {}
        calls: dict[str, list[BatchedCalls]] = {}
        for name, system in (("plain", plain), ("secure", secure)):
            calls[name] = [batched_calls(system.stub) for _ in range(batch_streams)]
            drivers[name] = [
                system.driver(f"{PREFIX['paired']}{t}", rng, acts=calls[name][t % batch_streams])
                for t in range(tables)
            ]
            for d in drivers[name]:
                await d.setup()
            await _throughput(drivers[name], seconds, system.table_pid)  # warm-up
        pids = {"plain": plain.table_pid, "secure": secure.table_pid}
        for i in range(pairs):
            order = ("plain", "secure") if i % 2 == 0 else ("secure", "plain")
            for name in order:
                sides[name].append(await _throughput(drivers[name], seconds, pids[name]))
        for name in sides:
            for c in calls[name]:
                await c.close()
    ratios = sorted(
        s["actions_per_s"] / p["actions_per_s"] for p, s in zip(sides["plain"], sides["secure"], strict=True)
    )

    def mid(name: str, key: str) -> float:
        return round(statistics.median(r[key] for r in sides[name]), 3)

    return {
        "actions_per_s_cost": round(1 - statistics.median(ratios), 3),
        "pair_ratios": [round(r, 3) for r in ratios],
        "pairs": pairs,
        "window_s": seconds,
        "plain_actions_per_s_median": mid("plain", "actions_per_s"),
        "secure_actions_per_s_median": mid("secure", "actions_per_s"),
        "plain_server_cpu_ms_per_action_median": mid("plain", "server_cpu_ms_per_action"),
        "secure_server_cpu_ms_per_action_median": mid("secure", "server_cpu_ms_per_action"),
        "goal": 0.15,
    }


def run(quick: bool) -> dict[str, object]:
    """Plaintext, then the same secured as ``pokerctl up`` runs it, in one run: gRPC over TLS
    (mutual TLS with the dealer's and pokerctl's certificates, each call authenticated by the
    interceptor), NATS over TLS with a key per service and least-privilege permissions, and
    every envelope signed by its writer. ``tls`` holds the secured run's figures; its cost in
    actions/s comes from the paired rounds (``_paired_cost``), not from the two runs' ratio."""
    plain = asyncio.run(_run(quick))
    secure = asyncio.run(_run(quick, secure=True))
    keys = ("action_p50_ms", "action_p99_ms", "actions_per_s", "server_cpu_ms_per_action", "grpc_call_p50_ms")
    tls = {k: secure[k] for k in keys if k in secure}
    tls["stream_actions_per_s"] = secure["stream"]["actions_per_s"]  # type: ignore[index]
    paired = asyncio.run(_paired_cost(quick))
    tls["actions_per_s_cost"] = paired["actions_per_s_cost"]
    tls["paired"] = paired
    return {**plain, "tls": tls}
