"""How ``pokerctl`` reaches the services: one ``Connection`` (targets, TLS files, token).

A secure system (``pokerctl up``, the default) serves each service on two listeners: the
*service* port, mutual TLS, where ``pokerctl`` calls as staff with its own certificate
(``DATA/pki/pokerctl.crt``: creating tables, deposits for bots, the dealer, chip checks), and
the *client* port (the service port + 100 by default), TLS with the CA alone, where people call
with a bearer token: bots are players with a player token each (minted with the local token
key, ``DATA/pki/token.key``), ``pokerctl watch`` is a spectator, or a player with a token. On a
plaintext system (``--insecure``, test rigs) everything goes to the service port and the
``x-caller`` / ``x-player-id`` headers stand in for identity.

Commands that call a service take the options of ``add_arguments`` and build their connection
with ``from_args``; ``of_system`` is the connection to a ``LocalSystem`` this process runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grpc import aio

from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import pki
from openpoker.shell.client import bearer_metadata, channel
from openpoker.shell.config import CLIENT_PORT_OFFSET, DEFAULT_PORTS
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import Role, TokenIssuer

Metadata = tuple[tuple[str, str], ...]
CALLER = "pokerctl"
# A bot's player token: bots follow their table for as long as ``make run`` runs, and a stream
# reopened after its token expired would be refused. Local tokens, signed with the local key.
BOT_TOKEN_TTL = dt.timedelta(days=7)


class MissingCredentials(RuntimeError):
    """What ``pokerctl`` needs to connect is missing (a token, the token key); says what to pass."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection:
    """Where the services listen and who ``pokerctl`` is there."""

    targets: Mapping[str, str] = field(default_factory=dict)  # service ports
    client_targets: Mapping[str, str] = field(default_factory=dict)  # client ports (TLS only)
    ca: TlsFiles | None = None  # the CA alone (client ports); None: plaintext
    staff: TlsFiles | None = None  # pokerctl's certificate (service ports)
    token: str = ""  # a bearer token given (``--token``, ``POKER_TOKEN``)
    issuer: TokenIssuer | None = None  # mints tokens from the local token key

    @classmethod
    def plaintext(cls, targets: Mapping[str, str]) -> Connection:
        return cls(targets=dict(targets))

    @classmethod
    def of_system(cls, system: LocalSystem) -> Connection:
        """``pokerctl``'s connection to a local system this process runs."""
        if system.pki is None:
            return cls.plaintext(system.targets)
        return cls(
            targets=system.targets,
            client_targets=system.client_targets,
            ca=TlsFiles.from_pki(system.pki, None),
            staff=system.tls,
            issuer=_issuer(system.pki),
        )

    @property
    def secure(self) -> bool:
        return self.ca is not None

    def target(self, service: str) -> str:
        return self.targets.get(service) or f"127.0.0.1:{DEFAULT_PORTS[service]}"

    def client_target(self, service: str) -> str:
        """The client listener: given, else the service port + ``CLIENT_PORT_OFFSET``."""
        if not self.secure:
            return self.target(service)
        given = self.client_targets.get(service)
        if given:
            return given
        host, _, port = self.target(service).rpartition(":")
        return f"{host}:{int(port) + CLIENT_PORT_OFFSET}"

    def staff_channel(self, service: str) -> aio.Channel:
        """A channel to ``service``'s own port, as staff (``pokerctl``'s certificate)."""
        return channel(self.target(service), self.staff if self.secure else None)

    def staff_metadata(self) -> Metadata:
        """Per-call metadata of a staff call (the certificate says it all over TLS)."""
        return () if self.secure else (("x-caller", CALLER),)

    def client_channel(self, service: str) -> aio.Channel:
        """A channel for a token holder (the client port, trusting the CA)."""
        return channel(self.client_target(service), self.ca)

    def player_metadata(self, player: str, *, ttl: dt.timedelta = BOT_TOKEN_TTL) -> Metadata:
        """Per-call metadata of ``player``'s own calls (a bot): a fresh player token."""
        if not self.secure:
            return (("x-caller", CALLER), ("x-player-id", player))
        if self.issuer is None:
            raise MissingCredentials(
                f"a player token for {player} needs the token key: give --data-dir (DATA/pki/token.key)"
            )
        return bearer_metadata(self.issuer.issue(player, Role.PLAYER, ttl=ttl))

    def viewer_metadata(self, player: str = "") -> Metadata:
        """Metadata of a watcher: a spectator (no token, or the given one), or ``player`` (the
        given token, else one minted for them)."""
        if not self.secure:
            return (("x-player-id", player),) if player else ()
        if self.token:
            return bearer_metadata(self.token)
        if not player:
            return ()
        if self.issuer is None:
            raise MissingCredentials(
                f"watching as {player} needs their token: give --token (or POKER_TOKEN) or --data-dir"
            )
        return bearer_metadata(self.issuer.issue(player, Role.PLAYER))


def _issuer(local: pki.LocalPki) -> TokenIssuer:
    kid, key = pki.load_token_key(local)
    return TokenIssuer(key=key, kid=kid)


def add_arguments(parser: argparse.ArgumentParser, *, services: Sequence[str]) -> None:
    """The connection options of a command that calls ``services``."""
    group = parser.add_argument_group(
        "connection",
        "A secure system (pokerctl up): --data-dir DATA, or --ca/--cert/--key/--token; "
        "without them, or with --insecure, plaintext.",
    )
    group.add_argument("--data-dir", type=Path, default=None, help="a pokerctl up data folder: its pki/")
    group.add_argument("--ca", type=Path, default=None, help="the CA certificate to trust")
    group.add_argument("--cert", type=Path, default=None, help="staff client certificate (service ports)")
    group.add_argument("--key", type=Path, default=None, help="its private key")
    group.add_argument("--token", default=None, help="bearer token (default $POKER_TOKEN)")
    group.add_argument("--insecure", action="store_true", help="plaintext (a pokerctl up --insecure system)")
    for service in services:
        group.add_argument(
            f"--{service}-target",
            default=None,
            help=f"{service} service host:port (default $POKER_{service.upper()}_TARGET or "
            f"127.0.0.1:{DEFAULT_PORTS[service]})",
        )
        group.add_argument(
            f"--{service}-client-target",
            default=None,
            help=f"{service} client listener (default $POKER_{service.upper()}_CLIENT_TARGET or "
            f"the service port + {CLIENT_PORT_OFFSET})",
        )


def from_args(args: argparse.Namespace, *, services: Sequence[str]) -> Connection:
    """The connection the options of ``add_arguments`` describe."""
    targets: dict[str, str] = {}
    client_targets: dict[str, str] = {}
    for service in services:
        env = f"POKER_{service.upper()}_"
        targets[service] = (
            getattr(args, f"{service}_target", None)
            or os.environ.get(env + "TARGET")
            or f"127.0.0.1:{DEFAULT_PORTS[service]}"
        )
        client = getattr(args, f"{service}_client_target", None) or os.environ.get(env + "CLIENT_TARGET")
        if client:
            client_targets[service] = client
    insecure = args.insecure or os.environ.get("POKER_INSECURE", "").lower() in ("1", "true", "yes")
    if insecure:
        return Connection.plaintext(targets)
    token = args.token if args.token is not None else os.environ.get("POKER_TOKEN", "")
    data_dir: Path | None = args.data_dir
    if data_dir is None and args.ca is None:
        return Connection.plaintext(targets)  # nothing to trust given: a plaintext system
    local = pki.LocalPki(root=data_dir / "pki") if data_dir is not None else None
    ca = args.ca or (local.ca_cert if local is not None else None)
    assert ca is not None
    cert: Path | None = args.cert
    key: Path | None = args.key
    if cert is None and local is not None and local.cert(pki.CLIENT).exists():
        cert, key = local.cert(pki.CLIENT), local.key(pki.CLIENT)
    if (cert is None) != (key is None):
        raise MissingCredentials("give --cert and --key together")
    issuer = _issuer(local) if local is not None and local.token_key.exists() else None
    return Connection(
        targets=targets,
        client_targets=client_targets,
        ca=TlsFiles(ca=ca),
        staff=TlsFiles(ca=ca, cert=cert, key=key),
        token=token,
        issuer=issuer,
    )
