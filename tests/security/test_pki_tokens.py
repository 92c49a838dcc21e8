"""The local PKI (``shell.pki``) and bearer tokens (``shell.tokens``)."""

from __future__ import annotations

import datetime as dt
import json
import stat
from pathlib import Path

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from openpoker.shell import pki
from openpoker.shell.tokens import (
    Role,
    TokenExpired,
    TokenInvalid,
    TokenIssuer,
    TokenMissing,
    TokenVerifier,
    bearer,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_first_start_makes_every_file_keys_0600_and_reuses_them(tmp_path: Path) -> None:
    made = pki.ensure_local_pki(tmp_path)
    assert _mode(made.root) == 0o700
    names = [*pki.SERVICES, pki.CLIENT]
    for name in names:
        assert _mode(made.key(name)) == 0o600
        assert made.cert(name).exists()
    assert _mode(made.ca_key) == 0o600
    assert _mode(made.token_key) == 0o600
    before = {p.name: p.read_bytes() for p in made.root.iterdir()}
    again = pki.ensure_local_pki(tmp_path)
    assert {p.name: p.read_bytes() for p in again.root.iterdir()} == before


def test_service_certificates_carry_their_identity_and_hosts(tmp_path: Path) -> None:
    made = pki.ensure_local_pki(tmp_path, hosts=["10.1.2.3", "table.internal"])
    ca = x509.load_pem_x509_certificate(made.ca_cert.read_bytes())
    cert = x509.load_pem_x509_certificate(made.cert("table").read_bytes())
    cert.verify_directly_issued_by(ca)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.UniformResourceIdentifier) == ["spiffe://openpoker/service/table"]
    assert {str(ip) for ip in san.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "10.1.2.3"}
    assert set(san.get_values_for_type(x509.DNSName)) == {"localhost", "table.internal"}
    client = x509.load_pem_x509_certificate(made.cert("pokerctl").read_bytes())
    uris = client.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert uris.get_values_for_type(x509.UniformResourceIdentifier) == ["spiffe://openpoker/staff/pokerctl"]


def test_a_new_advertised_address_renews_the_leaves_not_the_ca(tmp_path: Path) -> None:
    made = pki.ensure_local_pki(tmp_path)
    ca, leaf = made.ca_cert.read_bytes(), made.cert("dealer").read_bytes()
    pki.ensure_local_pki(tmp_path, hosts=["192.0.2.7"])
    assert made.ca_cert.read_bytes() == ca
    assert made.cert("dealer").read_bytes() != leaf


def test_a_leaf_near_expiry_is_renewed(tmp_path: Path) -> None:
    made = pki.ensure_local_pki(tmp_path)
    leaf = made.cert("rng").read_bytes()
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=pki.LEAF_DAYS - 10)
    pki.ensure_local_pki(tmp_path, now=later)
    assert made.cert("rng").read_bytes() != leaf


@pytest.fixture
def keys(tmp_path: Path) -> tuple[TokenIssuer, TokenVerifier]:
    made = pki.ensure_local_pki(tmp_path)
    kid, key = pki.load_token_key(made)
    return TokenIssuer(key=key, kid=kid), TokenVerifier.from_file(made.jwks)


def test_a_token_verifies_to_its_subject_and_role(keys: tuple[TokenIssuer, TokenVerifier]) -> None:
    issuer, verifier = keys
    claims = verifier.verify(issuer.issue("alice", Role.PLAYER))
    assert (claims.subject, claims.role) == ("alice", Role.PLAYER)


def test_expired_missing_and_foreign_tokens_are_refused(
    keys: tuple[TokenIssuer, TokenVerifier], tmp_path: Path
) -> None:
    issuer, verifier = keys
    old = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
    with pytest.raises(TokenExpired):
        verifier.verify(issuer.issue("alice", Role.PLAYER, now=old))
    with pytest.raises(TokenMissing):
        verifier.verify("")
    other = pki.ensure_local_pki(tmp_path / "other")
    kid, key = pki.load_token_key(other)
    with pytest.raises(TokenInvalid):
        verifier.verify(TokenIssuer(key=key, kid=kid).issue("alice", Role.OPERATOR))
    # The right key id with another key's signature: still refused.
    own_kid = json.loads((tmp_path / "pki" / "jwks.json").read_text())["keys"][0]["kid"]
    with pytest.raises(TokenInvalid):
        verifier.verify(TokenIssuer(key=key, kid=own_kid).issue("alice", Role.OPERATOR))
    with pytest.raises(TokenInvalid):
        verifier.verify("not-a-token")


def test_wrong_audience_issuer_role_and_algorithm_are_refused(
    keys: tuple[TokenIssuer, TokenVerifier], tmp_path: Path
) -> None:
    _, verifier = keys
    kid, key = pki.load_token_key(pki.LocalPki(root=tmp_path / "pki"))
    with pytest.raises(TokenInvalid):
        verifier.verify(TokenIssuer(key=key, kid=kid, audience="elsewhere").issue("a", Role.PLAYER))
    with pytest.raises(TokenInvalid):
        verifier.verify(TokenIssuer(key=key, kid=kid, issuer="mallory").issue("a", Role.PLAYER))
    now = int(dt.datetime.now(dt.UTC).timestamp())
    base = {"iss": "openpoker-local", "aud": "openpoker", "sub": "a", "iat": now, "exp": now + 60}
    with pytest.raises(TokenInvalid):
        verifier.verify(jwt.encode({**base, "role": "king"}, key, algorithm="EdDSA", headers={"kid": kid}))
    # An HMAC token keyed with the public key (the classic algorithm confusion) is refused.
    with pytest.raises(TokenInvalid):
        verifier.verify(
            jwt.encode({**base, "role": "operator"}, "x" * 32, algorithm="HS256", headers={"kid": kid})
        )
    ec_key = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(TokenInvalid):
        verifier.verify(TokenIssuer(key=ec_key, kid=kid).issue("a", Role.PLAYER))
    assert isinstance(key, ed25519.Ed25519PrivateKey)


def test_bearer_reads_the_authorization_header() -> None:
    assert bearer({"authorization": "Bearer abc.def"}) == "abc.def"
    assert bearer({"authorization": "bearer  abc "}) == "abc"
    assert bearer({"authorization": "Basic abc"}) == ""
    assert bearer({}) == ""
