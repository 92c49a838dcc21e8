"""``pokerctl.connect``: which connection the options describe (no server needed)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from openpoker.pokerctl import connect
from openpoker.shell import pki
from openpoker.shell.tokens import Role, TokenVerifier

SERVICES = ("table", "wallet")


def parse(*argv: str) -> connect.Connection:
    parser = argparse.ArgumentParser()
    connect.add_arguments(parser, services=SERVICES)
    return connect.from_args(parser.parse_args(list(argv)), services=SERVICES)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("POKER_TOKEN", "POKER_INSECURE", "POKER_TABLE_TARGET", "POKER_TABLE_CLIENT_TARGET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # ./data is where the default looks
    data = tmp_path / "elsewhere"
    pki.ensure_local_pki(data)
    return data


def bearer_of(meta: connect.Metadata) -> str:
    (key, value), *_ = meta
    assert key == "authorization"
    return value.removeprefix("Bearer ")


def test_a_data_dir_gives_the_staff_certificate_the_ca_and_the_token_key(data_dir: Path) -> None:
    conn = parse("--data-dir", str(data_dir), "--table-target", "127.0.0.1:6000")
    local = pki.LocalPki(root=data_dir / "pki")
    assert conn.secure
    assert conn.staff is not None
    assert conn.staff.cert == local.cert("pokerctl")
    assert conn.ca is not None
    assert conn.ca.cert is None
    assert conn.ca.ca == local.ca_cert
    assert conn.staff_metadata() == ()  # the certificate names pokerctl
    assert conn.client_target("table") == "127.0.0.1:6100"  # the service port + 100
    claims = TokenVerifier.from_file(local.jwks).verify(bearer_of(conn.player_metadata("bot-1")))
    assert (claims.subject, claims.role) == ("bot-1", Role.PLAYER)
    assert conn.viewer_metadata() == ()  # a spectator
    assert TokenVerifier.from_file(local.jwks).verify(bearer_of(conn.viewer_metadata("ann"))).subject == "ann"


def test_a_given_token_and_client_target_win(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POKER_TOKEN", "from-env")
    conn = parse("--data-dir", str(data_dir), "--table-client-target", "10.0.0.1:7")
    assert conn.client_target("table") == "10.0.0.1:7"
    assert conn.viewer_metadata("ann") == (("authorization", "Bearer from-env"),)
    assert parse("--data-dir", str(data_dir), "--token", "flag").viewer_metadata() == (
        ("authorization", "Bearer flag"),
    )


def test_ca_cert_and_key_without_a_data_dir(data_dir: Path) -> None:
    local = pki.LocalPki(root=data_dir / "pki")
    conn = parse(
        "--ca", str(local.ca_cert), "--cert", str(local.cert("pokerctl")), "--key", str(local.key("pokerctl"))
    )
    assert conn.secure
    assert conn.staff is not None
    assert conn.staff.key == local.key("pokerctl")
    assert conn.issuer is None
    with pytest.raises(connect.MissingCredentials, match="--data-dir"):
        conn.player_metadata("bot-1")  # no token key to mint with
    with pytest.raises(connect.MissingCredentials, match="--token"):
        conn.viewer_metadata("ann")
    with pytest.raises(connect.MissingCredentials, match="together"):
        parse("--ca", str(local.ca_cert), "--cert", str(local.cert("pokerctl")))


def test_without_a_data_dir_or_ca_it_is_plaintext_even_beside_a_data_folder(data_dir: Path) -> None:
    pki.ensure_local_pki(Path("data"))  # ./data/pki of a pokerctl up run in this folder
    assert not parse().secure  # never guessed: a plaintext system's tests stay plaintext


def test_insecure_is_plaintext_with_the_identity_headers(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for conn in (parse("--data-dir", str(data_dir), "--insecure"), parse("--table-target", "h:1")):
        assert not conn.secure
        assert conn.staff_metadata() == (("x-caller", "pokerctl"),)
        assert conn.player_metadata("bot-1") == (("x-caller", "pokerctl"), ("x-player-id", "bot-1"))
        assert conn.viewer_metadata("ann") == (("x-player-id", "ann"),)
        assert conn.client_target("table") == conn.target("table")
    monkeypatch.setenv("POKER_INSECURE", "true")
    assert not parse("--data-dir", str(data_dir)).secure
