"""A fuzzer of a running secure system (``tests/security/test_fuzz_system.py``); what it calls
and checks is in ``tests/helpers/fuzz_checks.py``.

Every RPC of every service is found from the generated protobuf descriptors (``rpcs()``), so an
RPC added to a ``.proto`` is fuzzed without a change here. Requests are built field by field from
their descriptors (``Gen``): values are drawn from the system's real ids (tables, hands, players,
accounts) and from hostile ones (empty, 10 kB, unicode and control characters, extreme integers,
wrong resource names, random bytes), and sent with a credential drawn from every kind of caller
(``Gen.caller``). ``Fuzzer.call`` sends one and checks the answer (``Fuzzer.violations``).

Each call draws from its own ``random.Random(f"{seed}:{index}")``, so a seed names the same calls
whatever the concurrency; the system's state (the dealer's timing) may still differ between runs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import jwt
from cryptography.hazmat.primitives.asymmetric import ed25519
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from grpc import aio

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.pokerctl.bots import table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import pki
from openpoker.shell.client import bearer_metadata, channel
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import Role, TokenIssuer
from tests.helpers.fuzz_checks import Caller, Checks, Meta, Rpc, Shot, World, rpcs

DEALER_PROBES = ("StartHand", "ActStream", "ActBatchStream")
HUGE = 10_000
CALL_TIMEOUT = 20.0
WATCH_FIRST = 1.0  # a watch of a real table answers its current view at once; others may wait
LOCAL_INTERNAL = "Internal error from Core"  # gRPC's status for a write that failed on this side


def _tokens(system: LocalSystem) -> tuple[TokenIssuer, TokenIssuer, str]:
    assert system.pki is not None
    kid, key = pki.load_token_key(system.pki)
    forger = TokenIssuer(key=ed25519.Ed25519PrivateKey.generate(), kid=kid)  # our kid, not our key
    return TokenIssuer(key=key, kid=kid), forger, kid


# -- values --------------------------------------------------------------------------------------

HOSTILE = (
    "",
    " ",
    "\x00",
    "\x01\x02\x7f",
    "\n\r\t",
    "ünïcødé-テーブル-🂡",
    "\u202eevil",
    "tables/",
    "tables//hands/",
    "tables/../wallet",
    "hands/x",
    "tables/A",
    "tables/-x-",
    "tables/x/hands/y/z",
    "cash/",
    "escrow//",
    "../../etc/passwd",
    "%s%n%x",
    "' OR 1=1 --",
    "null",
    "*",
    "a" * 64,
    "a" * 129,
)
INT_EDGES = (
    0,
    1,
    -1,
    2,
    7,
    52,
    100,
    200,
    255,
    256,
    257,
    1000,
    2**31 - 1,
    -(2**31),
    2**32 - 1,
    2**53,
    2**63 - 1,
    -(2**63),
)
RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
CARDS = [r + s for r in "23456789TJQKA" for s in "cdhs"]
GAMES = ("holdem", "omaha", "sixplus")
STRUCTURES = ("nl", "pl", "fl")


class Gen:
    """One call's random choices: a request of any type and a caller."""

    def __init__(self, rng: random.Random, world: World, system: LocalSystem) -> None:
        self.rng = rng
        self.world = world
        self.system = system
        self.huge_left = 1  # one 10 kB string per request keeps a batch under the 1 MiB limit
        # Half the calls are plausible (a wrong value here and there, the caller's own player id)
        # so that they pass validation and reach the rules; the other half are hostile throughout.
        self.plausible = rng.random() < 0.5
        self.odd = 0.03 if self.plausible else 0.25  # how often a field gets a hostile value
        self.subject = ""

    # credentials

    def caller(self, rpc: Rpc, issuer: TokenIssuer, forger: TokenIssuer, kid: str) -> Caller:
        r = self.rng
        who = r.choice(self.world.players)
        # The dealer's certificate, where only the table checks what it sends (a deck that must
        # open for the hand): never at the wallet, which trusts the dealer's sums.
        if rpc.service == "table" and rpc.name in DEALER_PROBES and r.random() < 0.25:
            return Caller("dealer", (), cert="dealer")
        kind = r.choices(
            [
                "none",
                "player",
                "spectator",
                "cashier",
                "auditor",
                "operator",
                "staff",
                "expired",
                "forged",
                "foreign-kid",
                "alg-none",
                "garbage",
                "no-scheme",
            ],
            weights=[8, 30, 4, 6, 6, 6, 10, 4, 4, 2, 2, 3, 2],
        )[0]
        extra: Meta = ()
        if r.random() < 0.15:  # headers that mean nothing over TLS
            extra = (("x-caller", r.choice(["dealer", "table", "wallet", "auditor"])), ("x-player-id", who))
        if kind in ("player", "spectator", "cashier", "auditor", "operator"):
            role = Role(kind)
            self.subject = who
            return Caller(kind, (*bearer_metadata(issuer.issue(who, role)), *extra), role=role, subject=who)
        if kind == "staff":
            return Caller(kind, extra, cert=pki.CLIENT)
        now = dt.datetime.now(dt.UTC)
        token = {
            "none": "",
            "expired": issuer.issue(who, Role.OPERATOR, now=now - dt.timedelta(days=2)),
            "forged": forger.issue(who, Role.OPERATOR),
            "foreign-kid": TokenIssuer(key=ed25519.Ed25519PrivateKey.generate(), kid="k" + kid).issue(
                who, Role.OPERATOR
            ),
            "alg-none": jwt.encode(
                {"sub": who, "role": "operator", "exp": int(now.timestamp()) + 600}, "", algorithm="none"
            ),
            "garbage": "".join(r.choice("abcXYZ019.-_~+/=") for _ in range(r.randrange(0, 300))),
            "no-scheme": "",
        }[kind]
        if kind == "none":
            return Caller(kind, extra)
        if kind == "no-scheme":
            return Caller(
                kind, (("authorization", r.choice(["Bearer", "Bearer ", "Basic YTpi", "bearer x"])), *extra)
            )
        return Caller(kind, (("authorization", f"Bearer {token}"), *extra))

    # requests

    def message(self, descriptor: Any, depth: int = 0) -> Message:
        if descriptor.full_name == "poker.table.v1.TableConfig" and self.rng.random() < 0.6:
            return self._mutated(self._config(), depth)
        out = GetMessageClass(descriptor)()
        if depth > 4:
            return out
        chosen: dict[str, Any] = {}
        for oneof in descriptor.oneofs:  # a real oneof: one member (or none); proto3 optional: some
            members = list(oneof.fields)
            chosen[oneof.name] = (
                self.rng.choice(members if self.plausible else [*members, None])
                if len(members) > 1
                else (members[0] if self.rng.random() < (0.1 if self.plausible else 0.5) else None)
            )
        for f in descriptor.fields:
            if f.containing_oneof is not None and chosen.get(f.containing_oneof.name) is not f:
                continue
            if f.containing_oneof is None and self.rng.random() < self.odd / 2:
                continue  # left at its default
            self._fill(out, f, depth)
        return out

    def _config(self) -> tpb.TableConfig:
        r = self.rng
        return table_config(
            r.choice(GAMES), r.choice(STRUCTURES), seats=r.choice([2, 6, 9]), clock_ms=r.choice([500, 60_000])
        )

    def _mutated(self, msg: Message, depth: int) -> Message:
        fields: list[Any] = list(msg.DESCRIPTOR.fields)
        for f in self.rng.sample(fields, k=min(len(fields), self.rng.choice([0, 0, 1, 2]))):
            msg.ClearField(f.name)
            self._fill(msg, f, depth)
        return msg

    def _fill(self, out: Any, f: Any, depth: int) -> None:
        repeated = f.is_repeated
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            return  # no maps in the API; their keys would need their own rules
        if repeated:
            many = self.rng.randrange(4, 300)
            n = self.rng.choices([0, 1, 2, 3, many], weights=[30, 30, 15, 10, 100 * self.odd / 5])[0]
            target = getattr(out, f.name)
            for _ in range(n):
                if f.message_type is not None:
                    target.add().CopyFrom(self.message(f.message_type, depth + 1))
                else:
                    target.append(self.scalar(f))
            return
        if f.message_type is not None:
            getattr(out, f.name).CopyFrom(self.message(f.message_type, depth + 1))
            return
        setattr(out, f.name, self.scalar(f))

    def scalar(self, f: Any) -> Any:
        r = self.rng
        if f.type == FieldDescriptor.TYPE_BOOL:
            return r.random() < 0.5
        if f.type == FieldDescriptor.TYPE_ENUM:
            values = [v.number for v in f.enum_type.values]
            return r.choice([99, -1, 2**31 - 1]) if r.random() < self.odd else r.choice(values)
        if f.type == FieldDescriptor.TYPE_BYTES:
            return self._bytes()
        if f.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return r.choice([0.0, -1.0, 1e308, float("nan"), float("inf")])
        if f.type == FieldDescriptor.TYPE_STRING:
            return self.string(f.name, f.containing_type.name)
        low, high = RANGES[f.type]
        return max(low, min(high, self.integer(f.name)))

    def integer(self, name: str) -> int:
        r = self.rng
        if r.random() < self.odd:
            return r.choice(INT_EDGES)
        if "version" in name:
            return r.randrange(0, 400)
        if name in ("seat", "seat_to_act", "seat_count", "position", "min_players_dealt_in"):
            return r.randrange(-1, 12)
        if name in ("hand_number", "after_hand"):
            return r.randrange(-1, 8)
        if name == "page_size":
            return r.choice([-5, 0, 1, 2, 500, 501])
        if name == "deck_size":
            return r.choice([0, 36, 52, 53])
        if name in ("seconds", "nanos"):
            return r.choice([0, 1, -1, 10**9, 10**12, -(10**12)])
        return r.choice([1, 2, 4, 5, 10, 40, 100, 199, 200, 400, 1000, 5000, r.randrange(-10, 10_000)])

    def _bytes(self) -> bytes:
        r = self.rng
        pick = r.randrange(5)
        if pick == 0:
            return b""
        if pick == 1 and self.huge_left:
            self.huge_left -= 1
            return r.randbytes(HUGE)
        if pick == 2:  # a deck in clear, as a plaintext rig would send it
            deck = CARDS[:]
            r.shuffle(deck)
            return "".join(deck).encode()
        return r.randbytes(r.choice([1, 12, 16, 28, 64, 120, 200]))

    def string(self, name: str, within: str) -> str:
        r = self.rng
        w = self.world
        if r.random() < self.odd:
            return self.hostile()
        table = r.choice(w.tables)
        if self.plausible and self.subject in w.seated and r.random() < 0.7:
            table = w.seated[self.subject]  # where the caller plays
        hand_table, hand = r.choice(w.hands)
        player = r.choice([*w.players, "mallory"])
        if name == "request_id":
            if w.request_ids and r.random() < 0.2:
                return r.choice(w.request_ids)  # a retry, or the same id with other fields
            rid = str(uuid.uuid4())
            w.request_ids.append(rid)
            del w.request_ids[:-50]
            return rid
        if name in ("table_id",):
            return r.choice([table, table, hand_table, f"fz-{r.randrange(10**6)}", hand])
        hand_name = f"tables/{hand_table}/hands/{hand}"
        if self.plausible and name in ("table", "name"):  # the right kind of name
            return hand_name if name == "name" and "Hand" in within else f"tables/{table}"
        if name in ("table",):
            return r.choice(
                [f"tables/{table}", f"tables/{table}", f"tables/{hand_table}/hands/{hand}", table]
            )
        if name == "name":
            return r.choice(
                [
                    f"tables/{table}",
                    f"tables/{hand_table}/hands/{hand}",
                    f"tables/{hand_table}/hands/{hand}",
                    f"tables/{table}/hands/{hand}",
                    f"tables/{hand_table}/hands/",
                    hand,
                ]
            )
        if name == "hand_id":
            if self.plausible and r.random() < 0.5:
                return ""  # optional where players send it
            return r.choice([hand, hand, f"h-{r.randrange(10**6)}", table])
        if "player" in name:
            if self.subject and self.plausible:
                return r.choice([self.subject, self.subject, self.subject, "", player])
            return r.choice([player, player, ""])
        if name == "account":
            return r.choice(
                [
                    f"cash/{player}",
                    f"escrow/{table}/{player}",
                    "world",
                    "house/rake",
                    f"pot/{table}/1",
                    f"cash/{player}/x",
                ]
            )
        if name in ("commitment", "deck_commitment"):
            return r.choice(["", r.randbytes(32).hex(), "zz" * 32])
        if name == "card":
            return r.choice([*CARDS, "", "??", "1x", "Ahh"])
        if name == "page_token":
            return r.choice(["", "AAAA", "eyJ4IjoxfQ", r.randbytes(12).hex()])
        if name == "currency":
            return r.choice(["", "", "CHIPS", "USD", "xxx"])
        return r.choice(["", "fuzz", "x" * 200, self.hostile()])

    def hostile(self) -> str:
        r = self.rng
        if self.huge_left and r.random() < 0.15:
            self.huge_left -= 1
            return r.choice(["a", "é", "\x07", "tables/"]) * HUGE
        if r.random() < 0.2:
            return "".join(
                chr(r.choice([r.randrange(0, 32), r.randrange(32, 0xD7FF)]))
                for _ in range(r.randrange(1, 40))
            )
        return r.choice(HOSTILE)


# -- calling ----------------------------------------------------------------------------------------


class Fuzzer(Checks):
    def __init__(self, system: LocalSystem, world: World, seed: int) -> None:
        assert system.pki is not None
        super().__init__(world)
        self.system = system
        self.seed = seed
        self.issuer, self.forger, self.kid = _tokens(system)
        ca = TlsFiles.from_pki(system.pki, None)
        self.channels = {
            (name, "client"): channel(target, ca) for name, target in system.client_targets.items()
        } | {(name, pki.CLIENT): channel(target, system.tls) for name, target in system.targets.items()}
        dealer = TlsFiles.from_pki(system.pki, "dealer")
        self.channels[("table", "dealer")] = channel(system.targets["table"], dealer)
        self.rpcs = [r for r in rpcs() if r.service in system.processes]

    async def close(self) -> None:
        for chan in self.channels.values():
            await chan.close()

    async def run(self, calls: int, concurrency: int) -> None:
        queue = iter(range(calls))

        async def worker() -> None:
            for index in queue:
                await self.call(index)

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    async def call(self, index: int) -> None:
        gen = Gen(random.Random(f"{self.seed}:{index}"), self.world, self.system)
        rpc = gen.rng.choice(self.rpcs)
        caller = gen.caller(rpc, self.issuer, self.forger, self.kid)
        count = gen.rng.randrange(1, 4) if rpc.method.client_streaming else 1
        shot = Shot(index, rpc, caller, [gen.message(rpc.request.DESCRIPTOR) for _ in range(count)])
        if any(msg.ByteSize() > 900_000 for msg in shot.requests):
            return  # over the server's 1 MiB limit: gRPC's own refusal, not ours to check
        self.tally.calls += 1
        self.tally.by_rpc[rpc.name] = self.tally.by_rpc.get(rpc.name, 0) + 1
        answers: list[Message] = []
        try:
            await self._send(shot, answers)
        except grpc.RpcError as err:
            self._count(err.code())
            self.check_error(shot, err)
        else:
            self._count(grpc.StatusCode.OK)
            self._reason(f"{rpc.name} OK")
            self.tally.ok += 1
        for answer in answers:
            self.check_answer(shot, answer)

    async def _send(self, shot: Shot, answers: list[Message]) -> None:
        rpc, caller = shot.rpc, shot.caller
        chan = self.channels[(rpc.service, caller.cert or "client")]
        ser: Callable[[Any], bytes] = rpc.request.SerializeToString
        de = rpc.response.FromString
        streaming = (rpc.method.client_streaming, rpc.method.server_streaming)
        if streaming == (False, False):
            unary = chan.unary_unary(rpc.path, request_serializer=ser, response_deserializer=de)
            answers.append(await unary(shot.requests[0], timeout=CALL_TIMEOUT, metadata=caller.metadata))
        elif streaming == (False, True):
            watch = chan.unary_stream(rpc.path, request_serializer=ser, response_deserializer=de)
            await self._watch(
                watch(shot.requests[0], timeout=CALL_TIMEOUT, metadata=caller.metadata), answers
            )
        elif streaming == (True, True):
            both = chan.stream_stream(rpc.path, request_serializer=ser, response_deserializer=de)
            try:
                await self._lockstep(both(timeout=CALL_TIMEOUT, metadata=caller.metadata), shot, answers)
            except aio.AioRpcError as err:
                if err.details() != LOCAL_INTERNAL:
                    raise
                # Our write raced the server's refusal of the call itself (from its metadata):
                # the same call without a request shows the refusal; an acceptance is reported.
                probe = both(iter(()), timeout=CALL_TIMEOUT, metadata=caller.metadata)
                answers.extend([got async for got in probe])
                raise err from None
        else:
            up = chan.stream_unary(rpc.path, request_serializer=ser, response_deserializer=de)
            answers.append(await up(iter(shot.requests), timeout=CALL_TIMEOUT, metadata=caller.metadata))

    async def _watch(self, call: Any, answers: list[Message]) -> None:
        try:
            for wait in (WATCH_FIRST, 0.2):
                try:
                    got = await asyncio.wait_for(call.read(), wait)
                except TimeoutError:
                    return  # a watch waiting for versions to come is a good answer
                if got is aio.EOF:
                    break
                answers.append(got)
            if call.done():
                await _raise_status(call)
        finally:
            call.cancel()

    @staticmethod
    async def _lockstep(call: Any, shot: Shot, answers: list[Message]) -> None:
        """One request, then its answer, and so on: a refusal that ends the stream is read
        before the next write, which would fail on this side and hide the server's status."""
        try:
            for msg in shot.requests:
                try:
                    await call.write(msg)
                except asyncio.InvalidStateError:
                    break  # the server ended the stream: its status says why
                got = await call.read()
                if got is aio.EOF:
                    break
                answers.append(got)
            else:
                await call.done_writing()
                while (got := await call.read()) is not aio.EOF:
                    answers.append(got)
            await _raise_status(call)
        finally:
            call.cancel()


async def _raise_status(call: Any) -> None:
    code = await call.code()
    if code != grpc.StatusCode.OK:
        raise aio.AioRpcError(
            code, await call.initial_metadata(), await call.trailing_metadata(), await call.details()
        )
