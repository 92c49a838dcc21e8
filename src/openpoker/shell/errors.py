"""THE error mapping: any exception a handler raises -> one ``google.rpc.Status``.

Every non-OK RPC carries a ``google.rpc.Status`` with exactly one ``google.rpc.ErrorInfo``
(``reason`` UPPER_SNAKE, ``domain`` = the service's domain such as ``poker.table``, ``metadata``
with lowerCamel keys holding the numbers behind the error), sent in the
``grpc-status-details-bin`` trailer through ``context.abort`` (see ``shell.interceptor``).

* ``OpenPokerError`` (``openpoker.errors``), the base of every tree (the engine's, the
  shuffle's, the ledger's, the event store's and the services' own below): its ``kind`` picks
  the code (``KIND_CODES``), its ``reason`` and ``metadata()`` fill the ``ErrorInfo``.
* ``NotImplementedError`` (what generated servicer base classes raise): UNIMPLEMENTED.
* Anything else, or a kind with no code: INTERNAL with reason ``INTERNAL`` and no detail leaked
  (the interceptor logs the traceback).

A backstop against echoing what a client sent: a message over ``MAX_TEXT`` characters is replaced
by its reason, a metadata value over it by its length (errors quote client values through
``openpoker.errors.shown`` in the first place).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import grpc
from google.rpc.code_pb2 import Code
from google.rpc.error_details_pb2 import ErrorInfo
from google.rpc.status_pb2 import Status

from openpoker.errors import ErrorKind, OpenPokerError

KIND_CODES: Mapping[ErrorKind, grpc.StatusCode] = {
    "invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "precondition": grpc.StatusCode.FAILED_PRECONDITION,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "exists": grpc.StatusCode.ALREADY_EXISTS,
    "conflict": grpc.StatusCode.ABORTED,
    "permission": grpc.StatusCode.PERMISSION_DENIED,
    "unauthenticated": grpc.StatusCode.UNAUTHENTICATED,
    "exhausted": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "unimplemented": grpc.StatusCode.UNIMPLEMENTED,
    "out_of_range": grpc.StatusCode.OUT_OF_RANGE,
    "deadline": grpc.StatusCode.DEADLINE_EXCEEDED,
    "cancelled": grpc.StatusCode.CANCELLED,
    "data_loss": grpc.StatusCode.DATA_LOSS,
    "unknown": grpc.StatusCode.UNKNOWN,
    "internal": grpc.StatusCode.INTERNAL,
}
# Every non-OK code has one kind, so an error relayed from another service keeps its code.
CODE_KINDS: Mapping[grpc.StatusCode, ErrorKind] = {code: kind for kind, code in KIND_CODES.items()}


MAX_TEXT = 1024


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_TEXT else f"<{len(text)} characters>"


class ServiceError(OpenPokerError):
    """Base of the services' own errors. Subclass a per-kind class below with a stable reason::

    class TableNotFound(NotFound):
        reason = "TABLE_NOT_FOUND"

    raise TableNotFound("no table", table_id="t1")
    """


class InvalidArgument(ServiceError):
    reason = "INVALID_ARGUMENT"
    kind = "invalid"


class NotFound(ServiceError):
    reason = "NOT_FOUND"
    kind = "not_found"


class AlreadyExists(ServiceError):
    reason = "ALREADY_EXISTS"
    kind = "exists"


class FailedPrecondition(ServiceError):
    reason = "FAILED_PRECONDITION"
    kind = "precondition"


class Aborted(ServiceError):
    reason = "ABORTED"
    kind = "conflict"


class PermissionDenied(ServiceError):
    reason = "PERMISSION_DENIED"
    kind = "permission"


class Unauthenticated(ServiceError):
    reason = "UNAUTHENTICATED"
    kind = "unauthenticated"


class ResourceExhausted(ServiceError):
    reason = "RESOURCE_EXHAUSTED"
    kind = "exhausted"


class Unavailable(ServiceError):
    reason = "UNAVAILABLE"
    kind = "unavailable"


class DataLoss(ServiceError):
    reason = "DATA_LOSS"
    kind = "data_loss"


class _Unimplemented(ServiceError):
    reason = "NOT_IMPLEMENTED"
    kind = "unimplemented"


@dataclass(frozen=True, slots=True, kw_only=True)
class MappedError:
    """The outcome of the mapping: what ``context.abort`` needs, plus the rich status."""

    code: grpc.StatusCode
    reason: str
    message: str
    status: Status
    internal: bool  # True when the exception was not a known error (log its traceback)


def lower_camel(key: str) -> str:
    """``seat_to_act`` -> ``seatToAct`` (AIP-193 metadata keys); camel keys pass unchanged."""
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _known(exc: BaseException) -> tuple[grpc.StatusCode, str, dict[str, str]] | None:
    if isinstance(exc, OpenPokerError) and exc.kind in KIND_CODES:
        return KIND_CODES[exc.kind], exc.reason, exc.metadata()
    return None


def to_status(exc: BaseException, *, domain: str) -> MappedError:
    """Map an exception to a status code and a ``google.rpc.Status`` with one ``ErrorInfo``."""
    if isinstance(exc, NotImplementedError):
        # The generated servicer base classes raise it for RPCs a service does not implement yet.
        exc = _Unimplemented(str(exc) or "method not implemented")
    known = _known(exc)
    if known is None:
        code, reason, message = grpc.StatusCode.INTERNAL, "INTERNAL", "internal error"
        metadata: dict[str, str] = {}
    else:
        code, reason, metadata = known
        message = str(exc) or reason
        if len(message) > MAX_TEXT:
            message = reason
    info = ErrorInfo(
        reason=reason, domain=domain, metadata={lower_camel(k): _bounded(v) for k, v in metadata.items()}
    )
    status = Status(code=_rpc_code(code), message=message)
    status.details.add().Pack(info)
    return MappedError(code=code, reason=reason, message=message, status=status, internal=known is None)


def _rpc_code(code: grpc.StatusCode) -> int:
    # grpc.StatusCode values are (int, name) pairs whose ints equal google.rpc.Code's.
    value = code.value[0]
    assert Code.Name(value) == code.name
    return int(value)
