"""Who a quota counts (``shell.quotas.key_of``), the settings, and errors that never echo an
oversized value back (``openpoker.errors.shown``, the backstop in ``shell.errors.to_status``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from openpoker.errors import shown
from openpoker.ledger.accounts import check_account
from openpoker.ledger.errors import InvalidIdentifier
from openpoker.services.table import mapping
from openpoker.services.table.config import TableConfig
from openpoker.services.table.errors import InvalidPlayerId, InvalidTableName
from openpoker.shell.config import ConfigError, ShellConfig
from openpoker.shell.errors import InvalidArgument, to_status
from openpoker.shell.identity import ANONYMOUS, Kind, Principal
from openpoker.shell.quotas import key_of, peer_host
from openpoker.shell.tokens import Role
from openpoker.tablelog import ids

PLAIN = {"POKER_INSECURE": "true"}


@pytest.mark.parametrize(
    ("peer", "host"),
    [
        ("ipv4:127.0.0.1:50123", "127.0.0.1"),
        ("ipv6:[::1]:50123", "[::1]"),
        ("unix:/tmp/sock", "/tmp/sock"),
        ("", ""),
    ],
)
def test_anonymous_callers_are_counted_per_host(peer: str, host: str) -> None:
    assert peer_host(peer) == host


def test_keys_are_the_principal_and_certificate_holders_are_exempt() -> None:
    ann = Principal(kind=Kind.USER, name="ann", role=Role.PLAYER)
    assert key_of(ann, lambda: "ipv4:10.0.0.1:1") == key_of(ann, lambda: "ipv4:10.0.0.2:2") == "user:ann"
    assert key_of(ANONYMOUS, lambda: "ipv4:10.0.0.1:1") == "peer:10.0.0.1"
    assert key_of(ANONYMOUS, lambda: "ipv4:10.0.0.1:2") == "peer:10.0.0.1"  # a new connection
    assert key_of(ANONYMOUS, lambda: "ipv4:10.0.0.2:1") != key_of(ANONYMOUS, lambda: "ipv4:10.0.0.1:1")
    never: list[str] = []
    assert key_of(Principal(kind=Kind.SERVICE, name="dealer"), never.pop) is None  # peer not asked
    assert key_of(Principal(kind=Kind.STAFF, name="pokerctl", role=Role.OPERATOR), lambda: "x") is None
    assert key_of(None, lambda: "ipv4:10.0.0.1:1") is None  # a plaintext rig enforces nothing


def test_quota_settings_from_the_environment() -> None:
    shell = ShellConfig.from_env("table", PLAIN)
    assert (shell.quota_rps, shell.quota_burst) == (200.0, 400)
    table = TableConfig.from_env(PLAIN)
    assert (table.creates_per_minute, table.watches_per_identity, table.watches_per_table) == (30, 16, 500)
    env = {
        **PLAIN,
        "POKER_QUOTA_RPS": "0",
        "POKER_QUOTA_BURST": "5",
        "POKER_TABLE_QUOTA_CREATES_PER_MINUTE": "2",
        "POKER_TABLE_QUOTA_WATCHES_PER_IDENTITY": "3",
        "POKER_TABLE_QUOTA_WATCHES_PER_TABLE": "4",
    }
    table = TableConfig.from_env(env)
    assert (table.shell.quota_rps, table.shell.quota_burst) == (0.0, 5)
    assert (table.creates_per_minute, table.watches_per_identity, table.watches_per_table) == (2, 3, 4)
    with pytest.raises(ConfigError, match="POKER_TABLE_QUOTA_WATCHES_PER_TABLE"):
        TableConfig.from_env({**PLAIN, "POKER_TABLE_QUOTA_WATCHES_PER_TABLE": "0"})
    with pytest.raises(ConfigError, match="POKER_QUOTA_BURST"):
        ShellConfig.from_env("table", {**PLAIN, "POKER_QUOTA_BURST": "0"})


BIG = "z" * 10_000


def assert_not_echoed(exc: Exception) -> None:
    mapped = to_status(exc, domain="poker.test")
    assert "zzzz" not in mapped.message
    wire = mapped.status.SerializeToString()
    assert b"zzzz" not in wire
    assert len(wire) < 1000


def test_short_values_are_quoted_long_ones_only_counted() -> None:
    assert shown("t1") == "'t1'"
    assert shown(BIG) == "<10000 characters>"


@pytest.mark.parametrize(
    ("parse", "error"),
    [
        (lambda: mapping.table_id_of(f"tables/{BIG}"), InvalidTableName),
        (lambda: mapping.player_id_of(BIG), InvalidPlayerId),
        (lambda: mapping.hand_id_of(BIG), InvalidArgument),
        (lambda: mapping.hand_name_of(f"tables/t/hands/{BIG}"), InvalidArgument),
        (lambda: mapping.request_id_of(BIG), InvalidArgument),
        (lambda: check_account(f"cash/{BIG}"), InvalidIdentifier),
    ],
)
def test_oversized_names_are_refused_without_echo(
    parse: Callable[[], object], error: type[Exception]
) -> None:
    with pytest.raises(error) as refused:
        parse()
    assert_not_echoed(refused.value)


def test_player_ids_are_what_the_wallet_takes() -> None:
    assert mapping.player_id_of("ann@example.com") == "ann@example.com"
    assert mapping.player_id_of("p" * 128) == "p" * 128
    for bad in ("", "p" * 129, "-ann", "ann/bob", "ann bob"):
        with pytest.raises(InvalidPlayerId):
            mapping.player_id_of(bad)


def test_the_mapping_withholds_any_long_text_an_error_carries() -> None:
    mapped = to_status(InvalidArgument(f"bad {BIG}", value=BIG), domain="poker.test")
    assert mapped.message == "INVALID_ARGUMENT"
    assert b"zzzz" not in mapped.status.SerializeToString()


def test_the_dealer_refuses_oversized_names() -> None:
    assert ids.parse_table_name("tables/" + "t" * 63) == "t" * 63
    assert ids.parse_table_name("tables/" + "t" * 64) is None
    assert ids.parse_hand_name(f"tables/t/hands/{'h' * 128}") == ("t", "h" * 128)
    assert ids.parse_hand_name(f"tables/t/hands/{'h' * 129}") is None
