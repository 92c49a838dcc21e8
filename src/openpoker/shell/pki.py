"""The local PKI a development or single-host system runs on: made once under ``DATA/pki/``.

``ensure_local_pki`` creates, on first start, and reuses after:

* ``ca.crt`` / ``ca.key``: an EC P-256 certificate authority (path length 0).
* ``<service>.crt`` / ``<service>.key`` for every service: a leaf for both TLS ends (serverAuth
  and clientAuth), valid for ``localhost``, ``127.0.0.1`` and any advertised address, whose
  identity is its SAN URI ``spiffe://openpoker/service/<name>``.
* ``pokerctl.crt`` / ``pokerctl.key``: the operator's client certificate
  (``spiffe://openpoker/staff/pokerctl``, role ``operator``).
* ``token.key`` (Ed25519, PKCS#8) and ``jwks.json`` (its public key): what ``pokerctl token``
  signs player and staff tokens with, and what the services verify them against.

Every private key is written 0600 in a folder of mode 0700. A production system points the
services at the operator's own CA, certificates and JWKS instead (docs/operations.md).
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

TRUST_DOMAIN = "openpoker"
SERVICES: tuple[str, ...] = ("rng", "wallet", "table", "dealer")
CLIENT = "pokerctl"
DEFAULT_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1")
CA_DAYS = 3650
LEAF_DAYS = 397
RENEW_BEFORE = dt.timedelta(days=30)
TOKEN_KEY_ID_BYTES = 8


def service_id(name: str) -> str:
    """The SPIFFE-style identity of a service's certificate."""
    return f"spiffe://{TRUST_DOMAIN}/service/{name}"


def staff_id(name: str) -> str:
    """The SPIFFE-style identity of a staff client certificate (such as ``pokerctl``)."""
    return f"spiffe://{TRUST_DOMAIN}/staff/{name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalPki:
    """Paths of a local PKI folder; every file exists once ``ensure_local_pki`` returned it."""

    root: Path

    @property
    def ca_cert(self) -> Path:
        return self.root / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.root / "ca.key"

    def cert(self, name: str) -> Path:
        return self.root / f"{name}.crt"

    def key(self, name: str) -> Path:
        return self.root / f"{name}.key"

    @property
    def token_key(self) -> Path:
        return self.root / "token.key"

    @property
    def jwks(self) -> Path:
        return self.root / "jwks.json"


def ensure_local_pki(
    data_dir: Path,
    *,
    services: Sequence[str] = SERVICES,
    hosts: Iterable[str] = (),
    now: dt.datetime | None = None,
) -> LocalPki:
    """Create what is missing under ``data_dir/pki`` and renew leaves that expire soon or do not
    cover ``hosts``; the CA and token key are made once and kept."""
    pki = LocalPki(root=data_dir / "pki")
    pki.root.mkdir(parents=True, exist_ok=True)
    os.chmod(pki.root, 0o700)
    at = now or dt.datetime.now(dt.UTC)
    names = tuple(dict.fromkeys([*DEFAULT_HOSTS, *hosts]))

    ca_key, ca_cert = _ensure_ca(pki, at)
    for name in services:
        _ensure_leaf(pki, name, uri=service_id(name), hosts=names, ca_key=ca_key, ca_cert=ca_cert, at=at)
    _ensure_leaf(pki, CLIENT, uri=staff_id(CLIENT), hosts=(), ca_key=ca_key, ca_cert=ca_cert, at=at)
    _ensure_token_key(pki)
    return pki


def infra_id(name: str) -> str:
    """The identity of an infrastructure server's certificate (such as NATS): no service's."""
    return f"spiffe://{TRUST_DOMAIN}/infra/{name}"


def ensure_server_leaf(
    pki: LocalPki,
    name: str,
    *,
    uri: str,
    hosts: Iterable[str] = (),
    now: dt.datetime | None = None,
) -> None:
    """One more leaf from the CA of an ensured ``pki`` (made once, renewed like the others)."""
    at = now or dt.datetime.now(dt.UTC)
    ca_key, ca_cert = _ensure_ca(pki, at)
    names = tuple(dict.fromkeys([*DEFAULT_HOSTS, *hosts]))
    _ensure_leaf(pki, name, uri=uri, hosts=names, ca_key=ca_key, ca_cert=ca_cert, at=at)


def _ensure_ca(pki: LocalPki, at: dt.datetime) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    if pki.ca_cert.exists() and pki.ca_key.exists():
        key = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return key, x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{TRUST_DOMAIN} local CA")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(at - dt.timedelta(minutes=5))
        .not_valid_after(at + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_secret(pki.ca_key, _pem_key(key))
    _write_public(pki.ca_cert, cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


def _ensure_leaf(
    pki: LocalPki,
    name: str,
    *,
    uri: str,
    hosts: Sequence[str],
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    at: dt.datetime,
) -> None:
    if pki.cert(name).exists() and pki.key(name).exists():
        current = x509.load_pem_x509_certificate(pki.cert(name).read_bytes())
        if _still_good(current, ca_cert, uri, hosts, at):
            return
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.UniformResourceIdentifier(uri)]
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(at - dt.timedelta(minutes=5))
        .not_valid_after(min(at + dt.timedelta(days=LEAF_DAYS), ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_secret(pki.key(name), _pem_key(key))
    _write_public(pki.cert(name), cert.public_bytes(serialization.Encoding.PEM))


def _still_good(
    cert: x509.Certificate, ca_cert: x509.Certificate, uri: str, hosts: Sequence[str], at: dt.datetime
) -> bool:
    if cert.issuer != ca_cert.subject or cert.not_valid_after_utc - at < RENEW_BEFORE:
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    have = {str(v) for v in san.get_values_for_type(x509.IPAddress)}
    have |= set(san.get_values_for_type(x509.DNSName))
    return uri in san.get_values_for_type(x509.UniformResourceIdentifier) and set(hosts) <= have


def _ensure_token_key(pki: LocalPki) -> None:
    if pki.token_key.exists() and pki.jwks.exists():
        return
    key = ed25519.Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    kid = base64.urlsafe_b64encode(os.urandom(TOKEN_KEY_ID_BYTES)).rstrip(b"=").decode()
    jwk = {"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": kid, "x": _b64(public)}
    _write_secret(pki.token_key, _pem_key(key))
    _write_public(pki.jwks, (json.dumps({"keys": [jwk]}, indent=2) + "\n").encode())


def load_token_key(pki: LocalPki) -> tuple[str, ed25519.Ed25519PrivateKey]:
    """The token-signing key and its key id (the one ``jwks.json`` publishes)."""
    key = serialization.load_pem_private_key(pki.token_key.read_bytes(), password=None)
    assert isinstance(key, ed25519.Ed25519PrivateKey)
    public = _b64(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    for jwk in json.loads(pki.jwks.read_text())["keys"]:
        if jwk.get("x") == public:
            return str(jwk["kid"]), key
    raise ValueError(f"{pki.jwks} does not publish the public key of {pki.token_key}")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _pem_key(key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write_secret(path: Path, data: bytes) -> None:
    """Write a key 0600 from its first byte (never world-readable, even for an instant)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def write_secret(path: Path, data: bytes) -> None:
    """Write a secret file 0600 (atomically, never readable by others)."""
    _write_secret(path, data)


def _write_public(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o644)
    tmp.replace(path)
