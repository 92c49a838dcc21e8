"""What the fuzzer calls and what it checks (``tests/helpers/fuzz.py``,
``tests/security/test_fuzz_system.py``): every RPC found from the protobuf descriptors (``rpcs``),
the callers (``Caller``), the ids the system holds (``World``), and the checks every answer must
pass (``Checks``), kept apart from the system so that a negative control can feed them answers.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.rpc.error_details_pb2 import ErrorInfo
from grpc_status import rpc_status

import openpoker.api
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.shell.tokens import Role

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


# -- checking ------------------------------------------------------------------------------------


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
                if not hand_id and msg.last_hand_id:
                    # Between hands a seat holds only the cards its winner by folds showed
                    # (ShowHand): the last hand's, checked against its log like a showdown's.
                    hand_id, street = msg.last_hand_id, tpb.STREET_ENDED
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
