"""TLS credentials for servers and channels, from PEM files.

A service serves two listeners with the same handlers (``shell.server``): the *service* listener
requires a client certificate signed by the CA (mutual TLS: services and staff tools, named by
their SAN URI), the *client* listener serves TLS to anyone holding the CA and identifies people
by bearer token (``shell.identity``). gRPC's Python API cannot ask for a client certificate
without requiring one, hence two ports rather than one.

Private keys must not be readable by group or others: a key that is refuses to load.

Server certificates rotate without a restart: each listener re-reads its CA, certificate and key
when they change, for the connections made after (``Rotation``); connections already open keep
the certificate they were made with.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import structlog
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

from openpoker.shell.pki import LocalPki

# structlog directly, not shell.logs: that module imports shell.config, which imports this one.
_log: Any = structlog.get_logger()


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
    """Credentials for a listener: ``mutual`` requires a client certificate from the CA. The
    files are read now (a bad file stops the start) and again, for the next connections, when
    they change (``Rotation``): certificates rotate without a restart."""
    rotation = Rotation(files, mutual=mutual)
    # The stubs type the fetcher as never returning None; gRPC documents None as "no change".
    fetcher: Any = rotation
    return grpc.dynamic_ssl_server_credentials(
        rotation.initial, fetcher, require_client_authentication=mutual
    )


_Stamp = tuple[tuple[int, int, int] | None, ...]


class Rotation:
    """The certificate-configuration fetcher of a listener: gRPC calls it before every new TLS
    handshake; it answers a new configuration when the CA, certificate or key file changed (by
    modification time, size or inode) and the new pair is whole, else None (keep the current one).
    A half-rotated pair (a new certificate beside the old key) is skipped until the key follows,
    so connections keep getting the old, working certificate meanwhile."""

    def __init__(self, files: TlsFiles, *, mutual: bool) -> None:
        self._files = files
        self._mutual = mutual
        self._stamp = self._stamps()
        self.initial = self._configuration()

    def __call__(self) -> grpc.ServerCertificateConfiguration | None:
        stamp = self._stamps()
        if stamp == self._stamp:
            return None
        try:
            configuration = self._configuration()
        except (TlsFileError, ValueError) as exc:
            _log.warning("tls.reload_skipped", cert=str(self._files.cert), problem=str(exc))
            return None
        self._stamp = stamp
        _log.info("tls.reloaded", cert=str(self._files.cert))
        return configuration

    def _stamps(self) -> _Stamp:
        paths = (self._files.ca, self._files.cert, self._files.key)
        return tuple(_stamp_of(p) if p is not None else None for p in paths)

    def _configuration(self) -> grpc.ServerCertificateConfiguration:
        key, cert = self._files.read_pair()
        _check_pair(key, cert, self._files)
        return grpc.ssl_server_certificate_configuration(
            [(key, cert)], root_certificates=self._files.read_ca() if self._mutual else None
        )


def _stamp_of(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _check_pair(key: bytes, cert: bytes, files: TlsFiles) -> None:
    """Raise ``TlsFileError`` unless ``key`` is the private half of ``cert``'s public key."""
    where = files.cert or files.ca
    try:
        public = x509.load_pem_x509_certificate(cert).public_key()
        private = serialization.load_pem_private_key(key, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise TlsFileError(path=where, problem=f"cannot parse: {exc}") from None
    raw = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if private.public_key().public_bytes(*raw) != public.public_bytes(*raw):
        raise TlsFileError(path=where, problem="the key is not this certificate's key")


def channel_credentials(files: TlsFiles) -> grpc.ChannelCredentials:
    """Credentials for a channel: trust the CA; present this end's certificate if it has one."""
    if files.cert is None or files.key is None:
        return grpc.ssl_channel_credentials(root_certificates=files.read_ca())
    key, cert = files.read_pair()
    return grpc.ssl_channel_credentials(
        root_certificates=files.read_ca(), private_key=key, certificate_chain=cert
    )
