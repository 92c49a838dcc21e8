"""Who is calling: a service or staff member by its TLS client certificate, a person by token.

* A peer whose certificate (verified by the server's TLS stack against the CA) carries the SAN URI
  ``spiffe://openpoker/service/<name>`` is that service; ``spiffe://openpoker/staff/<name>`` is a
  staff client with the ``operator`` role (``DATA/pki/pokerctl.crt``).
* Otherwise an ``authorization: Bearer <token>`` header names a subject and one role
  (``shell.tokens``); a bad token is refused even where no identity is needed.
* Otherwise the caller is anonymous.

Nothing a client writes in a request field or an ``x-*`` header is identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from openpoker.shell.errors import PermissionDenied
from openpoker.shell.pki import TRUST_DOMAIN
from openpoker.shell.tokens import Role, TokenMissing, TokenVerifier, bearer

_SERVICE_PREFIX = f"spiffe://{TRUST_DOMAIN}/service/"
_STAFF_PREFIX = f"spiffe://{TRUST_DOMAIN}/staff/"


class Kind(StrEnum):
    SERVICE = "service"
    STAFF = "staff"
    USER = "user"
    ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True, kw_only=True)
class Principal:
    """The authenticated caller of one RPC."""

    kind: Kind
    name: str  # service or staff name, the token's subject, or "" when anonymous
    role: Role | None = None


ANONYMOUS = Principal(kind=Kind.ANONYMOUS, name="")

_current: ContextVar[Principal | None] = ContextVar("openpoker_principal", default=None)


def bound() -> Principal | None:
    """The caller of the RPC this task serves, as the server interceptor authenticated it; None
    on a plaintext server, which authenticates nobody."""
    return _current.get()


def bind(principal: Principal | None) -> None:
    _current.set(principal)


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def authenticate(
    auth_context: Mapping[str, Iterable[bytes]],
    metadata: Iterable[tuple[str, str | bytes]] | None,
    verifier: TokenVerifier | None,
) -> Principal:
    """The principal of a call from its TLS peer and its metadata (see the module docstring)."""
    for uri in auth_context.get("peer_spiffe_id", ()):
        text = _text(uri)
        if text.startswith(_SERVICE_PREFIX):
            return Principal(kind=Kind.SERVICE, name=text.removeprefix(_SERVICE_PREFIX))
        if text.startswith(_STAFF_PREFIX):
            return Principal(kind=Kind.STAFF, name=text.removeprefix(_STAFF_PREFIX), role=Role.OPERATOR)
    headers = {k: _text(v) for k, v in metadata or () if k == "authorization"}
    token = bearer(headers)
    if not token:
        if "authorization" in headers:
            raise TokenMissing
        return ANONYMOUS
    if verifier is None:  # a server with no JWKS configured takes no tokens
        raise TokenMissing
    claims = verifier.verify(token)
    return Principal(kind=Kind.USER, name=claims.subject, role=claims.role)


class NotYourSeat(PermissionDenied):
    reason = "NOT_YOUR_SEAT"

    def __init__(self, *, player: str) -> None:
        super().__init__("a player acts, views and moves money only as themself", player=player)


def require_self(principal: Principal, player: str) -> None:
    """A player-role caller names only themself; services and staff are checked elsewhere."""
    if principal.kind is Kind.USER and principal.role is Role.PLAYER and player != principal.name:
        raise NotYourSeat(player=player)


def peer_context(context: Any) -> Mapping[str, Iterable[bytes]]:
    """``context.auth_context()`` of a grpc servicer context ({} where there is none)."""
    auth = getattr(context, "auth_context", None)
    return dict(auth()) if callable(auth) else {}
