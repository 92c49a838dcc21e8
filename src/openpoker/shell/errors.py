"""THE error mapping: any exception a handler raises -> one ``google.rpc.Status``.

Every non-OK RPC carries a ``google.rpc.Status`` with exactly one ``google.rpc.ErrorInfo``
(``reason`` UPPER_SNAKE, ``domain`` = the service's domain such as ``poker.table``, ``metadata``
with lowerCamel keys holding the numbers behind the error), sent in the
``grpc-status-details-bin`` trailer through ``context.abort`` (see ``shell.interceptor``).

Three families of exceptions are mapped, by duck typing so the shell imports neither the engine
nor the event store:

* ``ServiceError`` (below) and its per-code subclasses: the service's own errors; the status code
  is the class's ``code``.
* Anything with a string ``reason``, a ``kind`` and a ``metadata()`` method: the engine's
  ``EngineError`` tree and the event store's errors. ``kind`` picks the code: ``invalid`` ->
  INVALID_ARGUMENT, ``precondition`` -> FAILED_PRECONDITION (an action illegal now), ``not_found``
  -> NOT_FOUND, ``conflict`` -> ABORTED (stale expected version / lost optimistic-concurrency
  race: re-read and decide again), ``permission`` -> PERMISSION_DENIED, ``unavailable`` ->
  UNAVAILABLE.
* ``NotImplementedError`` (what generated servicer base classes raise): UNIMPLEMENTED.
* Anything else: INTERNAL with reason ``INTERNAL`` and no detail leaked (the interceptor logs the
  traceback).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import grpc
from google.rpc.code_pb2 import Code
from google.rpc.error_details_pb2 import ErrorInfo
from google.rpc.status_pb2 import Status

KIND_CODES: Mapping[str, grpc.StatusCode] = {
    "invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "precondition": grpc.StatusCode.FAILED_PRECONDITION,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "conflict": grpc.StatusCode.ABORTED,
    "permission": grpc.StatusCode.PERMISSION_DENIED,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "exists": grpc.StatusCode.ALREADY_EXISTS,
}


class ServiceError(Exception):
    """Base of the services' own errors: a status ``code``, a stable ``reason``, fields.

    Subclass the per-code classes below with a stable reason, e.g.::

        class TableNotFound(NotFound):
            reason = "TABLE_NOT_FOUND"

        raise TableNotFound("no such table", table_id="t1")
    """

    code: ClassVar[grpc.StatusCode] = grpc.StatusCode.INTERNAL
    reason: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields: dict[str, object] = dict(fields)

    def metadata(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.fields.items()}


class InvalidArgument(ServiceError):
    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "INVALID_ARGUMENT"


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND
    reason = "NOT_FOUND"


class AlreadyExists(ServiceError):
    code = grpc.StatusCode.ALREADY_EXISTS
    reason = "ALREADY_EXISTS"


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION
    reason = "FAILED_PRECONDITION"


class Aborted(ServiceError):
    code = grpc.StatusCode.ABORTED
    reason = "ABORTED"


class PermissionDenied(ServiceError):
    code = grpc.StatusCode.PERMISSION_DENIED
    reason = "PERMISSION_DENIED"


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED
    reason = "UNAUTHENTICATED"


class ResourceExhausted(ServiceError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    reason = "RESOURCE_EXHAUSTED"


class Unavailable(ServiceError):
    code = grpc.StatusCode.UNAVAILABLE
    reason = "UNAVAILABLE"


class _Unimplemented(ServiceError):
    code = grpc.StatusCode.UNIMPLEMENTED
    reason = "NOT_IMPLEMENTED"


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
    if isinstance(exc, ServiceError):
        return exc.code, exc.reason, exc.metadata()
    reason = getattr(exc, "reason", None)
    kind = getattr(exc, "kind", None)
    metadata = getattr(exc, "metadata", None)
    if isinstance(reason, str) and isinstance(kind, str) and kind in KIND_CODES and callable(metadata):
        raw = metadata()
        if isinstance(raw, Mapping):
            return KIND_CODES[kind], reason, {str(k): str(v) for k, v in raw.items()}
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
    info = ErrorInfo(reason=reason, domain=domain, metadata={lower_camel(k): v for k, v in metadata.items()})
    status = Status(code=_rpc_code(code), message=message)
    status.details.add().Pack(info)
    return MappedError(code=code, reason=reason, message=message, status=status, internal=known is None)


def _rpc_code(code: grpc.StatusCode) -> int:
    # grpc.StatusCode values are (int, name) pairs whose ints equal google.rpc.Code's.
    value = code.value[0]
    assert Code.Name(value) == code.name
    return int(value)
