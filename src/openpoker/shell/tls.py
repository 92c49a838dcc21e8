"""TLS credentials for servers and channels, from PEM files.

A service serves two listeners with the same handlers (``shell.server``): the *service* listener
requires a client certificate signed by the CA (mutual TLS: services and staff tools, named by
their SAN URI), the *client* listener serves TLS to anyone holding the CA and identifies people
by bearer token (``shell.identity``). gRPC's Python API cannot ask for a client certificate
without requiring one, hence two ports rather than one.

Private keys must not be readable by group or others: a key that is refuses to load.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import grpc

from openpoker.shell.pki import LocalPki


class TlsFileError(ValueError):
    """A certificate or key file that is missing, unreadable or too open; names the file."""

    def __init__(self, *, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsFiles:
    """The CA to trust and, optionally, this end's own certificate and key."""

    ca: Path
    cert: Path | None = None
    key: Path | None = None

    @classmethod
    def from_pki(cls, pki: LocalPki, name: str | None) -> TlsFiles:
        """The files of ``name`` (a service or ``pokerctl``) in a local PKI, or the CA alone."""
        if name is None:
            return cls(ca=pki.ca_cert)
        return cls(ca=pki.ca_cert, cert=pki.cert(name), key=pki.key(name))

    def read_ca(self) -> bytes:
        return _read(self.ca)

    def read_pair(self) -> tuple[bytes, bytes]:
        if self.cert is None or self.key is None:
            raise TlsFileError(path=self.ca, problem="no certificate and key configured beside this CA")
        mode = _stat(self.key).st_mode
        if stat.S_IMODE(mode) & 0o077:
            raise TlsFileError(
                path=self.key, problem=f"private key is mode {stat.S_IMODE(mode):o}; make it 0600"
            )
        return _read(self.key), _read(self.cert)


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError as exc:
        raise TlsFileError(path=path, problem=exc.strerror or "cannot stat") from None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TlsFileError(path=path, problem=exc.strerror or "cannot read") from None


def server_credentials(files: TlsFiles, *, mutual: bool) -> grpc.ServerCredentials:
    """Credentials for a listener: ``mutual`` requires a client certificate from the CA."""
    key, cert = files.read_pair()
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=files.read_ca() if mutual else None, require_client_auth=mutual
    )


def channel_credentials(files: TlsFiles) -> grpc.ChannelCredentials:
    """Credentials for a channel: trust the CA; present this end's certificate if it has one."""
    if files.cert is None or files.key is None:
        return grpc.ssl_channel_credentials(root_certificates=files.read_ca())
    key, cert = files.read_pair()
    return grpc.ssl_channel_credentials(
        root_certificates=files.read_ca(), private_key=key, certificate_chain=cert
    )
