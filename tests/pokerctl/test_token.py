"""``pokerctl token``: one token on stdout, signed with the local token key, verifiable against
DATA/pki/jwks.json with the subject, role and lifetime asked for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from openpoker.pokerctl.__main__ import main
from openpoker.shell import pki
from openpoker.shell.tokens import Role, TokenVerifier


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("data")
    pki.ensure_local_pki(data)  # what pokerctl up makes
    return data


def test_a_player_token_by_default_verifies_against_the_jwks(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = int(time.time())
    assert main(["token", "--data-dir", str(data_dir), "--player", "ann"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # the token alone on stdout
    claims = TokenVerifier.from_file(data_dir / "pki" / "jwks.json").verify(out.strip())
    assert claims.subject == "ann"
    assert claims.role is Role.PLAYER
    assert before + 3600 <= claims.expires_at <= int(time.time()) + 3600


@pytest.mark.parametrize("role", ["player", "cashier", "auditor", "operator"])
def test_each_role_and_the_ttl_are_honoured(
    data_dir: Path, role: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = int(time.time())
    argv = ["token", "--data-dir", str(data_dir), "--player", "staff-1", "--role", role, "--ttl", "90"]
    assert main(argv) == 0
    claims = TokenVerifier.from_file(data_dir / "pki" / "jwks.json").verify(capsys.readouterr().out.strip())
    assert (claims.subject, claims.role.value) == ("staff-1", role)
    assert before + 90 <= claims.expires_at <= int(time.time()) + 90


@pytest.mark.parametrize(
    "extra", [["--role", "spectator"], ["--role", "root"], ["--ttl", "0"], ["--ttl", "soon"]]
)
def test_a_bad_role_or_ttl_is_refused_by_the_parser(
    data_dir: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["token", "--data-dir", str(data_dir), "--player", "ann", *extra])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no token
    assert "--role" in captured.err or "--ttl" in captured.err


def test_player_and_data_dir_are_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["token", "--player", "ann"])
    assert exited.value.code == 2
    assert capsys.readouterr().out == ""


def test_a_folder_without_a_token_key_exits_2_and_prints_no_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["token", "--data-dir", str(tmp_path), "--player", "ann"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "token key" in captured.err
    assert not (tmp_path / "pki").exists()  # nothing made
