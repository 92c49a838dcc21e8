"""The one exception -> google.rpc.Status mapping."""

from __future__ import annotations

import grpc
import pytest
from google.rpc.error_details_pb2 import ErrorInfo

from openpoker.engine.errors import EngineError, InvalidCard, RuleViolation
from openpoker.errors import OpenPokerError
from openpoker.eventstore.errors import ConcurrencyConflict
from openpoker.ledger.errors import InsufficientFunds
from openpoker.shell.errors import (
    CODE_KINDS,
    KIND_CODES,
    Aborted,
    FailedPrecondition,
    NotFound,
    PermissionDenied,
    ServiceError,
    lower_camel,
    to_status,
)


class TableNotFound(NotFound):
    reason = "TABLE_NOT_FOUND"


class NotYourTurn(RuleViolation):
    reason = "NOT_YOUR_TURN"

    def __init__(self, *, seat: int, seat_to_act: int) -> None:
        super().__init__("not your turn", seat=seat, seat_to_act=seat_to_act)


class StoreConflict(OpenPokerError):
    """Any tree's error of kind ``conflict`` (as ``eventstore.ConcurrencyConflict``)."""

    reason = "CONCURRENCY_CONFLICT"
    kind = "conflict"


def info_of(exc: BaseException) -> tuple[grpc.StatusCode, ErrorInfo, int]:
    mapped = to_status(exc, domain="poker.test")
    assert len(mapped.status.details) == 1
    info = ErrorInfo()
    assert mapped.status.details[0].Unpack(info)
    assert mapped.status.code == mapped.code.value[0]
    return mapped.code, info, mapped.status.code


def test_engine_rule_violation_is_failed_precondition_with_camel_metadata() -> None:
    code, info, _ = info_of(NotYourTurn(seat=2, seat_to_act=5))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert (info.reason, info.domain) == ("NOT_YOUR_TURN", "poker.test")
    assert dict(info.metadata) == {"seat": "2", "seatToAct": "5"}


def test_engine_invalid_input_is_invalid_argument() -> None:
    code, info, _ = info_of(InvalidCard(text="Zz"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert info.reason == "INVALID_CARD"
    assert dict(info.metadata) == {"text": "Zz"}


def test_store_conflict_is_aborted() -> None:
    code, info, rpc_code = info_of(StoreConflict("wrong last sequence", stream_id="t1", expected_sequence=4))
    assert code == grpc.StatusCode.ABORTED
    assert rpc_code == 10  # google.rpc.Code.ABORTED
    assert dict(info.metadata) == {"streamId": "t1", "expectedSequence": "4"}


@pytest.mark.parametrize(
    ("exc", "code", "reason"),
    [
        (TableNotFound("no table", table_id="t9"), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
        (Aborted("stale", current_version=7), grpc.StatusCode.ABORTED, "ABORTED"),
        (PermissionDenied("not your seat"), grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED"),
        (FailedPrecondition("no funds"), grpc.StatusCode.FAILED_PRECONDITION, "FAILED_PRECONDITION"),
    ],
)
def test_service_errors_use_their_class_code(exc: ServiceError, code: grpc.StatusCode, reason: str) -> None:
    got_code, info, _ = info_of(exc)
    assert (got_code, info.reason) == (code, reason)
    assert dict(info.metadata) == {lower_camel(k): str(v) for k, v in exc.fields.items()}


def test_unknown_exception_is_internal_and_leaks_nothing() -> None:
    mapped = to_status(KeyError("secret-seed-bytes"), domain="poker.test")
    assert mapped.code == grpc.StatusCode.INTERNAL
    assert mapped.internal
    assert "secret" not in mapped.message
    assert "secret" not in mapped.status.SerializeToString().decode("latin-1")


def test_engine_error_with_unknown_kind_is_internal() -> None:
    class Odd(EngineError):
        kind = "weird"  # type: ignore[assignment]

    assert to_status(Odd("x"), domain="d").code == grpc.StatusCode.INTERNAL


def test_lower_camel() -> None:
    assert lower_camel("seat_to_act") == "seatToAct"
    assert lower_camel("seatToAct") == "seatToAct"
    assert lower_camel("amount") == "amount"


def test_not_implemented_is_unimplemented() -> None:
    code, info, _ = info_of(NotImplementedError("Method not implemented!"))
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert info.reason == "NOT_IMPLEMENTED"


def test_every_status_code_but_ok_has_one_kind() -> None:
    assert set(CODE_KINDS) == set(grpc.StatusCode) - {grpc.StatusCode.OK}
    assert len(CODE_KINDS) == len(KIND_CODES)


def test_every_tree_maps_by_its_kind() -> None:
    code, info, _ = info_of(InsufficientFunds(account="cash/alice", available=3, amount=5))
    assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    assert dict(info.metadata) == {"account": "cash/alice", "available": "3", "amount": "5"}
    conflict = ConcurrencyConflict(
        subject="s", expected_sequence=4, actual_sequence=None, error_code=None, msg_id="m"
    )
    code, info, _ = info_of(conflict)
    assert (code, info.reason) == (grpc.StatusCode.ABORTED, "CONCURRENCY_CONFLICT")
    # Numbers the server did not give are left out, not sent as "None".
    assert dict(info.metadata) == {"subject": "s", "expectedSequence": "4", "msgId": "m"}


def test_a_service_error_without_a_kind_is_internal_with_its_reason() -> None:
    mapped = to_status(ServiceError("odd"), domain="d")
    assert (mapped.code, mapped.reason, mapped.internal) == (grpc.StatusCode.INTERNAL, "INTERNAL", False)
