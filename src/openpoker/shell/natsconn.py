"""Connecting to NATS as an identity: its nkey seed, TLS against the NATS CA, its own inbox.

Every process that talks to NATS (the four services, ``pokerctl``'s live commands) connects
through ``connect``. ``NatsCredentials.from_env`` reads ``POKER_NATS_NKEY`` (the seed file,
``DATA/nats/auth/<name>.nk`` on a local system) and ``POKER_NATS_CA`` (the CA the server's
certificate must chain to, ``DATA/pki/ca.crt``); with neither, the connection is anonymous and
plaintext, as a server without authorization (test rigs, ``POKER_INSECURE``) expects. A
``NatsTarget`` is a server and who to be there: what ``pokerctl``'s readers are given, live or
a private server of their own (``pokerctl.natsopts``, ``dispute.source.offline_server``).
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client

from openpoker.shell.natsauth import inbox_prefix


class NatsCredentialsError(ValueError):
    """A seed or CA file that is named but unusable; ``reason`` is stable."""

    def __init__(self, *, reason: str, path: str) -> None:
        super().__init__(f"{reason}: {path}")
        self.reason = reason
        self.path = path


@dataclass(frozen=True, slots=True, kw_only=True)
class NatsCredentials:
    name: str  # the identity the seed belongs to (its inbox prefix)
    seed: Path | None = None
    ca: Path | None = None

    @classmethod
    def from_env(cls, name: str, env: Mapping[str, str]) -> NatsCredentials:
        seed = env.get("POKER_NATS_NKEY", "").strip()
        ca = env.get("POKER_NATS_CA", "").strip()
        for path in (seed, ca):
            if path and not Path(path).is_file():
                raise NatsCredentialsError(reason="NATS_CREDENTIAL_MISSING", path=path)
        return cls(name=name, seed=Path(seed) if seed else None, ca=Path(ca) if ca else None)

    @classmethod
    def local(cls, name: str, data_dir: Path) -> NatsCredentials:
        """The identity's files on a local system made by ``pokerctl up``."""
        return cls(name=name, seed=data_dir / "nats" / "auth" / f"{name}.nk", ca=data_dir / "pki" / "ca.crt")

    def env(self) -> dict[str, str]:
        """The variables ``from_env`` reads back (for a child process)."""
        out = {}
        if self.seed is not None:
            out["POKER_NATS_NKEY"] = str(self.seed)
        if self.ca is not None:
            out["POKER_NATS_CA"] = str(self.ca)
        return out

    def options(self) -> dict[str, Any]:
        """nats-py ``connect`` keyword arguments for these credentials."""
        out: dict[str, Any] = {}
        if self.seed is not None:
            out["nkeys_seed"] = str(self.seed)
            out["inbox_prefix"] = inbox_prefix(self.name)
        if self.ca is not None:
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca))
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            out["tls"] = context
        return out


async def connect(url: str, credentials: NatsCredentials | None = None, **kwargs: Any) -> Client:
    """``nats.connect`` as ``credentials`` (anonymous when None or empty)."""
    options = {} if credentials is None else credentials.options()
    return await nats.connect(url, **options, **kwargs)


@dataclass(frozen=True, slots=True)
class NatsTarget:
    """A NATS server and the credentials to connect there with (None: anonymous)."""

    url: str
    credentials: NatsCredentials | None = None

    @classmethod
    def of(cls, target: NatsTarget | str) -> NatsTarget:
        """A target as given, or a bare URL: an open server (a test rig's)."""
        return target if isinstance(target, NatsTarget) else cls(target)

    async def connect(self, **kwargs: Any) -> Client:
        return await connect(self.url, self.credentials, **kwargs)
