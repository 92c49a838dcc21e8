"""``shell.identity``: certificates name services and staff, tokens name people, nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest

from openpoker.shell import identity, pki
from openpoker.shell.identity import Kind, NotYourSeat, Principal
from openpoker.shell.tokens import Role, TokenExpired, TokenInvalid, TokenIssuer, TokenMissing, TokenVerifier


@pytest.fixture
def tokens(tmp_path: Path) -> tuple[TokenIssuer, TokenVerifier]:
    made = pki.ensure_local_pki(tmp_path)
    kid, key = pki.load_token_key(made)
    return TokenIssuer(key=key, kid=kid), TokenVerifier.from_file(made.jwks)


def test_a_service_certificate_is_the_service_whatever_the_headers_say(
    tokens: tuple[TokenIssuer, TokenVerifier],
) -> None:
    issuer, verifier = tokens
    auth = {"peer_spiffe_id": [b"spiffe://openpoker/service/dealer"]}
    meta = [("x-caller", "wallet"), ("authorization", f"Bearer {issuer.issue('eve', Role.OPERATOR)}")]
    who = identity.authenticate(auth, meta, verifier)
    assert who == Principal(kind=Kind.SERVICE, name="dealer")


def test_a_staff_certificate_is_an_operator() -> None:
    who = identity.authenticate({"peer_spiffe_id": [b"spiffe://openpoker/staff/pokerctl"]}, [], None)
    assert (who.kind, who.name, who.role) == (Kind.STAFF, "pokerctl", Role.OPERATOR)


def test_a_certificate_of_another_trust_domain_names_nobody() -> None:
    who = identity.authenticate({"peer_spiffe_id": [b"spiffe://elsewhere/service/dealer"]}, [], None)
    assert who == identity.ANONYMOUS


def test_a_token_names_its_subject_and_role(tokens: tuple[TokenIssuer, TokenVerifier]) -> None:
    issuer, verifier = tokens
    meta = [("authorization", f"Bearer {issuer.issue('alice', Role.PLAYER)}"), ("x-player-id", "bob")]
    who = identity.authenticate({}, meta, verifier)
    assert (who.kind, who.name, who.role) == (Kind.USER, "alice", Role.PLAYER)


def test_headers_alone_name_nobody(tokens: tuple[TokenIssuer, TokenVerifier]) -> None:
    _, verifier = tokens
    who = identity.authenticate({}, [("x-caller", "dealer"), ("x-player-id", "alice")], verifier)
    assert who == identity.ANONYMOUS


def test_bad_tokens_are_refused_even_when_none_is_needed(tokens: tuple[TokenIssuer, TokenVerifier]) -> None:
    _, verifier = tokens
    with pytest.raises(TokenInvalid):
        identity.authenticate({}, [("authorization", "Bearer nonsense")], verifier)
    with pytest.raises(TokenMissing):
        identity.authenticate({}, [("authorization", "Basic abc")], verifier)
    with pytest.raises(TokenMissing):  # no JWKS configured: tokens cannot be checked
        identity.authenticate({}, [("authorization", "Bearer x.y.z")], None)


def test_expired_tokens_say_so(tokens: tuple[TokenIssuer, TokenVerifier]) -> None:
    import datetime as dt

    issuer, verifier = tokens
    old = issuer.issue("alice", Role.PLAYER, now=dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    with pytest.raises(TokenExpired):
        identity.authenticate({}, [("authorization", f"Bearer {old}")], verifier)


def test_a_player_names_only_themself() -> None:
    alice = Principal(kind=Kind.USER, name="alice", role=Role.PLAYER)
    identity.require_self(alice, "alice")
    with pytest.raises(NotYourSeat):
        identity.require_self(alice, "bob")
    identity.require_self(Principal(kind=Kind.SERVICE, name="table"), "bob")
