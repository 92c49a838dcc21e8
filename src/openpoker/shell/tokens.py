"""Bearer tokens for players and staff: JWTs signed EdDSA or ES256, verified with PyJWT.

A token names its subject (``sub``: a player or staff id) and one ``role``; the services check
the issuer, the audience and the expiry, and take the signing key from a JWKS (a file the local
PKI writes, or the operator's identity provider's URL: ``shell.jwks``). The algorithms accepted
are fixed here, never read from the token.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from openpoker.shell.errors import Unauthenticated
from openpoker.shell.jwks import FileKeys, KeySource, StaticKeys

ISSUER: Final = "openpoker-local"
AUDIENCE: Final = "openpoker"
ALGORITHMS: Final = ("EdDSA", "ES256")
DEFAULT_TTL = dt.timedelta(hours=1)
LEEWAY_SECONDS = 30
MAX_TOKEN_BYTES = 8 * 1024


class Role(StrEnum):
    PLAYER = "player"
    SPECTATOR = "spectator"
    CASHIER = "cashier"
    AUDITOR = "auditor"
    OPERATOR = "operator"


class TokenMissing(Unauthenticated):
    reason = "TOKEN_MISSING"

    def __init__(self) -> None:
        super().__init__("this call needs a bearer token (authorization: Bearer <token>)")


class TokenExpired(Unauthenticated):
    reason = "TOKEN_EXPIRED"

    def __init__(self) -> None:
        super().__init__("the bearer token has expired")


class TokenInvalid(Unauthenticated):
    reason = "TOKEN_INVALID"

    def __init__(self, *, problem: str) -> None:
        super().__init__("the bearer token is not valid", problem=problem)


@dataclass(frozen=True, slots=True, kw_only=True)
class Claims:
    """What a verified token says: who, in which role, until when."""

    subject: str
    role: Role
    expires_at: int


class TokenIssuer:
    """Signs tokens with one private key (``pokerctl token``, tests, a development login)."""

    def __init__(
        self,
        *,
        key: ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey,
        kid: str,
        issuer: str = ISSUER,
        audience: str = AUDIENCE,
    ) -> None:
        self._key = key
        self._kid = kid
        self._issuer = issuer
        self._audience = audience
        self._algorithm = "EdDSA" if isinstance(key, ed25519.Ed25519PrivateKey) else "ES256"

    def issue(
        self, subject: str, role: Role, *, ttl: dt.timedelta = DEFAULT_TTL, now: dt.datetime | None = None
    ) -> str:
        at = now or dt.datetime.now(dt.UTC)
        claims = {
            "iss": self._issuer,
            "aud": self._audience,
            "sub": subject,
            "role": role.value,
            "iat": int(at.timestamp()),
            "nbf": int(at.timestamp()),
            "exp": int((at + ttl).timestamp()),
        }
        return jwt.encode(claims, self._key, algorithm=self._algorithm, headers={"kid": self._kid})


class TokenVerifier:
    """Verifies tokens against a JWKS: signature, issuer, audience, expiry, subject and role.

    ``verify`` never touches the network; on a server whose keys come from a URL, the interceptor
    first awaits ``prepare`` (``fetches``), which may fetch the keys off the event loop."""

    def __init__(
        self,
        *,
        jwks: Mapping[str, Any] | None = None,
        keys: KeySource | None = None,
        issuer: str = ISSUER,
        audience: str = AUDIENCE,
    ) -> None:
        if (jwks is None) == (keys is None):
            raise TypeError("give a JWKS or a key source, one of the two")
        self._keys: KeySource = keys if keys is not None else StaticKeys(jwks or {})
        self._issuer = issuer
        self._audience = audience

    @classmethod
    def from_file(cls, path: Path, *, issuer: str = ISSUER, audience: str = AUDIENCE) -> TokenVerifier:
        """Keys from a JWKS file, re-read when it changes (``shell.jwks.FileKeys``)."""
        return cls(keys=FileKeys(path), issuer=issuer, audience=audience)

    @property
    def fetches(self) -> bool:
        """Whether ``prepare`` may fetch keys, so must be awaited before ``verify``."""
        return self._keys.fetches

    async def prepare(self, token: str) -> None:
        """Fetch the key ``token`` names if the source may (``shell.jwks.KeySource.ensure``)."""
        if not token or len(token) > MAX_TOKEN_BYTES:
            return
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            return
        if isinstance(kid, str) and kid:
            await self._keys.ensure(kid)

    def verify(self, token: str) -> Claims:
        if not token:
            raise TokenMissing
        if len(token) > MAX_TOKEN_BYTES:
            raise TokenInvalid(problem="too long")
        try:
            header = jwt.get_unverified_header(token)
            key = self._key_for(header.get("kid"))
            claims = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                audience=self._audience,
                issuer=self._issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "sub", "aud", "iss"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenExpired from None
        except jwt.PyJWTError as exc:
            raise TokenInvalid(problem=type(exc).__name__) from None
        subject, role = claims.get("sub"), claims.get("role")
        if not isinstance(subject, str) or not subject:
            raise TokenInvalid(problem="no subject")
        try:
            parsed = Role(str(role))
        except ValueError:
            raise TokenInvalid(problem="unknown role") from None
        return Claims(subject=subject, role=parsed, expires_at=int(claims["exp"]))

    def _key_for(self, kid: object) -> jwt.PyJWK:
        key = self._keys.key(kid) if isinstance(kid, str) else None
        if key is None:
            raise jwt.InvalidKeyError("no key with this kid")
        return key


def bearer(metadata: Mapping[str, str]) -> str:
    """The token of an ``authorization: Bearer <token>`` header, or ``""``."""
    value = metadata.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
