"""A fuzzer of a running secure system (``tests/security/test_fuzz_system.py``).

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

import ast
import asyncio
import datetime as dt
import importlib
import pkgutil
import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import jwt
from cryptography.hazmat.primitives.asymmetric import ed25519
from google.protobuf import any_pb2
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.rpc.error_details_pb2 import ErrorInfo
from grpc import aio
from grpc_status import rpc_status

import openpoker.api
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.pokerctl.bots import table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import pki
from openpoker.shell.client import bearer_metadata, channel
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import Role, TokenIssuer

Meta = tuple[tuple[str, str], ...]

# Never an answer to any caller while the system is up (docs/api.md#errors).
FORBIDDEN = {
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.DATA_LOSS,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
}
FORBIDDEN_NUMBERS = {c.value[0] for c in FORBIDDEN}
HIDDEN_STREETS = {
    tpb.STREET_UNSPECIFIED,
    tpb.STREET_PREFLOP,
    tpb.STREET_FLOP,
    tpb.STREET_TURN,
    tpb.STREET_RIVER,
}
PHH_PLAYERS = re.compile(r"^players = (\[.*\])$", re.MULTILINE)
PHH_DEALT = re.compile(r"'d dh p(\d+) ([^'\s#]+)")  # a PHH deal of hole cards: player, cards
CLEAR_DECK = re.compile(r"(?:[2-9TJQKA][cdhs]){5,}")  # five card codes in a row: a deck, or part
PLAYER_FIELDS = ("player_id", "viewer_player_id")
DEALER_PROBES = ("StartHand", "ActStream", "ActBatchStream")
HUGE = 10_000
CALL_TIMEOUT = 20.0
WATCH_FIRST = 1.0  # a watch of a real table answers its current view at once; others may wait
LOCAL_INTERNAL = "Internal error from Core"  # gRPC's status for a write that failed on this side


# -- what to call ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rpc:
    service: str  # the LocalSystem name: "table", "wallet", ...
    method: MethodDescriptor

    @property
    def name(self) -> str:
        return str(self.method.name)

    @property
    def path(self) -> str:
        return f"/{self.method.containing_service.full_name}/{self.method.name}"

    @property
    def request(self) -> type[Message]:
        return GetMessageClass(self.method.input_type)

    @property
    def response(self) -> type[Message]:
        return GetMessageClass(self.method.output_type)


def rpcs() -> list[Rpc]:
    """Every RPC of every ``openpoker.api.<svc>.v1.*_service_pb2`` module, by path."""
    found: dict[str, Rpc] = {}
    for info in pkgutil.walk_packages(openpoker.api.__path__, "openpoker.api."):
        if not info.name.endswith("_service_pb2"):
            continue
        module = importlib.import_module(info.name)
        for svc in module.DESCRIPTOR.services_by_name.values():
            service = svc.full_name.split(".")[1]  # poker.<service>.v1.<Name>
            for method in svc.methods:
                rpc = Rpc(service, method)
                found[rpc.path] = rpc
    return [found[p] for p in sorted(found)]


# -- whom to call as -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    label: str
    metadata: Meta
    cert: str = ""  # a certificate on the service port: "pokerctl" (staff) or "dealer"
    role: Role | None = None  # a valid token's role
    subject: str = ""  # a valid token's subject

    def owners(self, requests: list[Message]) -> set[str] | None:
        """The players whose hole cards this caller may see in the answer to ``requests`` (None:
        every player's, the dealer): a player token's subject; for the staff certificate any
        player a request names (as a game server does); anyone else sits in nobody's seat."""
        if self.role is Role.PLAYER:
            return {self.subject}
        if self.cert == "dealer":
            return None
        if self.cert:
            return {
                v for r in requests for m in _walk(r) for f, v in m.ListFields() if f.name in PLAYER_FIELDS
            }
        return set()


@dataclass
class World:
    """What exists in the system, for drawing real ids (grown from the answers)."""

    tables: list[str]
    hands: list[tuple[str, str]]
    players: list[str]
    seated: dict[str, str] = field(default_factory=dict)  # player -> the table seated at first
    request_ids: list[str] = field(default_factory=list)

    def learn(self, table_id: str, hand_id: str = "") -> None:
        if table_id and table_id not in self.tables and len(self.tables) < 200:
            self.tables.append(table_id)
        if hand_id and (table_id, hand_id) not in self.hands and len(self.hands) < 400:
            self.hands.append((table_id, hand_id))


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


# -- calling and checking -----------------------------------------------------------------------


@dataclass
class Tally:
    calls: int = 0
    ok: int = 0
    by_code: dict[str, int] = field(default_factory=dict)
    by_rpc: dict[str, int] = field(default_factory=dict)
    by_reason: dict[str, int] = field(default_factory=dict)
    deposits: int = 0  # money the answers say came in or went out, duplicates not counted twice
    withdrawals: int = 0
    histories: int = 0  # PHH texts whose hole cards were checked


@dataclass(frozen=True, slots=True)
class SeenCards:
    """Another player's hole cards shown to a caller after the betting: must be shown cards."""

    table_id: str
    hand_id: str
    seat: int
    cards: tuple[str, ...]
    index: int


@dataclass(frozen=True, slots=True)
class Shot:
    """One call: its number in the run, what was called, as whom, with what."""

    index: int
    rpc: Rpc
    caller: Caller
    requests: list[Message]

    def describe(self, what: str) -> str:
        shown = str(self.requests[0])[:400].replace("\n", " ")
        return f"call {self.index} {self.rpc.path} as {self.caller.label}: {what}; request: {shown}"


class Checks:
    """What every answer must hold (and what the answers say moved), call by call."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.tally = Tally()
        self.violations: list[str] = []
        self.seen: list[SeenCards] = []

    def _count(self, code: grpc.StatusCode) -> None:
        self.tally.by_code[code.name] = self.tally.by_code.get(code.name, 0) + 1

    def check_error(self, shot: Shot, err: grpc.RpcError) -> None:
        code = err.code()
        if code == grpc.StatusCode.CANCELLED:
            return  # our own cancel of a stream
        status = rpc_status.from_call(err)  # type: ignore[arg-type]
        infos = [] if status is None else [d for d in status.details if d.Is(ErrorInfo.DESCRIPTOR)]
        self._check_status(shot, code.value[0], f"{code.name} {err.details()!r}", infos)

    def _check_status(self, shot: Shot, number: int, said: str, infos: list[Any]) -> None:
        if number in FORBIDDEN_NUMBERS:
            self.violations.append(shot.describe(f"answered {said}"))
        if len(infos) != 1:
            self.violations.append(shot.describe(f"{said} with {len(infos)} ErrorInfo details"))
            return
        info = ErrorInfo()
        infos[0].Unpack(info)
        if not info.reason or not info.domain:
            self.violations.append(shot.describe(f"{said} with an ErrorInfo without reason or domain"))
        self._reason(f"{shot.rpc.name} {info.reason}")

    def _reason(self, key: str) -> None:
        self.tally.by_reason[key] = self.tally.by_reason.get(key, 0) + 1

    def check_answer(self, shot: Shot, answer: Message) -> None:
        rpc, caller = shot.rpc, shot.caller
        if rpc.service == "rng":
            if any(CLEAR_DECK.search(text) for text in _texts(answer)):
                self.violations.append(shot.describe("an rng answer holds cards in clear"))
            if rpc.name == "RevealSeed" and caller.role is not Role.AUDITOR:
                self.violations.append(shot.describe("a seed revealed to someone not an auditor"))
        if hasattr(answer, "transfers") and not getattr(answer, "duplicate", True):
            for t in answer.transfers:
                if t.code == 1:  # TRANSFER_CODE_DEPOSIT
                    self.tally.deposits += t.amount
                elif t.code == 2:  # TRANSFER_CODE_WITHDRAWAL
                    self.tally.withdrawals += t.amount
        auditor = caller.role is Role.AUDITOR and rpc.name == "GetHandHistory"
        if not auditor and len(getattr(answer, "envelopes", ())) > 0:
            self.violations.append(shot.describe("raw envelopes for a non-auditor"))
        owners = caller.owners(shot.requests)
        if rpc.name == "GetHandHistory" and not auditor and owners is not None:
            self._check_history_text(shot, owners, answer)
        for msg in _walk(answer):
            name = msg.DESCRIPTOR.full_name
            if name == "poker.common.v1.Status":
                infos = [d for d in msg.details if d.Is(ErrorInfo.DESCRIPTOR)]
                self._check_status(shot, msg.code, f"in-band {msg.code} {msg.message!r}", infos)
            elif name == "poker.table.v1.Table":
                hand_id = msg.current_hand.hand_id
                self.world.learn(msg.table_id, hand_id)
                street = msg.current_hand.street if hand_id else tpb.STREET_UNSPECIFIED
                self._check_seats(shot, owners, (msg.table_id, hand_id, street), msg.seats)
            elif name == "poker.table.v1.Hand":
                table_id = msg.name.split("/")[1] if msg.name.count("/") == 3 else ""
                self.world.learn(table_id, msg.hand_id)
                if auditor:
                    if msg.street != tpb.STREET_ENDED:
                        self.violations.append(shot.describe("an unredacted history of a live hand"))
                    continue
                if msg.revealed_seed:
                    self.violations.append(shot.describe("a seed in a hand for a non-auditor"))
                self._check_seats(shot, owners, (table_id, msg.hand_id, msg.street), msg.seats)

    def _check_history_text(self, shot: Shot, owners: set[str], answer: Any) -> None:
        """Hole cards in a history's PHH text: the caller's own, or those the hand shows."""
        names = PHH_PLAYERS.search(answer.text)
        if names is None:
            return
        players = ast.literal_eval(names.group(1))
        self.tally.histories += 1
        visible = {s.player_id: set(s.hole_cards) for s in answer.hand.seats}
        for number, cards in PHH_DEALT.findall(answer.text):
            name = players[int(number) - 1]
            codes = {cards[i : i + 2] for i in range(0, len(cards), 2)}
            if "?" in cards or name in owners or codes <= visible.get(name, set()):
                continue
            self.violations.append(shot.describe(f"{name}'s hole cards {cards} in a history's text"))

    def _check_seats(
        self, shot: Shot, owners: set[str] | None, hand: tuple[str, str, int], seats: Any
    ) -> None:
        if owners is None:
            return
        table_id, hand_id, street = hand
        for seat in seats:
            cards = tuple(seat.hole_cards)
            if not any(cards) or seat.player_id in owners:
                continue
            if street in HIDDEN_STREETS:
                self.violations.append(
                    shot.describe(f"seat {seat.seat}'s hole cards {cards} shown during the betting")
                )
            else:  # after the betting only cards the player showed: checked against the log later
                self.seen.append(SeenCards(table_id, hand_id, seat.seat, cards, shot.index))


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


def _walk(msg: Any) -> list[Any]:
    """``msg`` and every message inside it, depth first."""
    out = [msg]
    for f, value in msg.ListFields():
        if f.message_type is None or isinstance(msg, any_pb2.Any):
            continue
        for item in value if f.is_repeated else [value]:
            out.extend(_walk(item))
    return out


def _texts(msg: Any) -> list[str]:
    """Every string and bytes value in ``msg`` (bytes read as Latin-1)."""
    out: list[str] = []
    for m in _walk(msg):
        for f, value in m.ListFields():
            items = value if f.is_repeated else [value]
            for item in items:
                if isinstance(item, str):
                    out.append(item)
                elif isinstance(item, bytes):
                    out.append(item.decode("latin-1"))
    return out
