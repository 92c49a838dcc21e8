from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from openpoker.shell.config import (
    DEFAULT_PORTS,
    ConfigError,
    ShellConfig,
    env_bool,
    env_float,
    env_int,
    service_target,
)
from tests.helpers.natscreds import nats_env


def test_defaults_are_development_console_on_the_service_port() -> None:
    config = ShellConfig.from_env(
        "table",
        environ={
            "POKER_INSECURE": "true",
        },
    )
    assert config.port == DEFAULT_PORTS["table"]
    assert config.host == "127.0.0.1"
    assert config.environment == "development"
    assert config.log_format == "console"
    assert config.nats_url == "nats://127.0.0.1:4222"
    assert config.address == f"127.0.0.1:{DEFAULT_PORTS['table']}"


def test_production_defaults_to_json_logs_and_reads_every_variable(tmp_path: Path) -> None:
    nats = nats_env(tmp_path, "dealer")
    config = ShellConfig.from_env(
        "dealer",
        environ={
            **nats,
            "POKER_TLS_DIR": "/nonexistent/pki",
            "POKER_ENV": "production",
            "POKER_DEALER_PORT": "0",
            "POKER_DEALER_HOST": "0.0.0.0",
            "POKER_NATS_URL": "nats://n1:4222",
            "POKER_LOG_LEVEL": "WARNING",
            "POKER_GRACE_SECONDS": "1.5",
        },
    )
    assert (config.environment, config.log_format, config.port, config.host) == (
        "production",
        "json",
        0,
        "0.0.0.0",
    )
    assert (config.nats_url, config.log_level, config.grace_seconds) == ("nats://n1:4222", "warning", 1.5)
    assert config.nats_credentials is not None
    assert config.nats_credentials.name == "dealer"
    assert str(config.nats_credentials.seed) == nats["POKER_NATS_NKEY"]
    assert str(config.nats_credentials.ca) == nats["POKER_NATS_CA"]


@pytest.mark.parametrize("missing", ["POKER_NATS_NKEY", "POKER_NATS_CA"])
def test_a_secure_service_refuses_to_start_without_nats_credentials(tmp_path: Path, missing: str) -> None:
    env = {"POKER_TLS_DIR": "/nonexistent/pki", **nats_env(tmp_path)}
    del env[missing]
    with pytest.raises(ConfigError) as caught:
        ShellConfig.from_env("table", environ=env)
    assert caught.value.variable == missing
    assert "no NATS credentials" in caught.value.problem
    assert "POKER_INSECURE" in caught.value.problem
    with pytest.raises(ConfigError) as caught:  # in production too
        ShellConfig.from_env("table", environ={**env, "POKER_ENV": "production"})
    assert caught.value.variable == missing


def test_a_named_credential_file_must_exist(tmp_path: Path) -> None:
    env = {"POKER_TLS_DIR": "/nonexistent/pki", **nats_env(tmp_path)}
    for variable in ("POKER_NATS_NKEY", "POKER_NATS_CA"):
        gone = str(tmp_path / "gone" / variable)
        with pytest.raises(ConfigError) as caught:
            ShellConfig.from_env("table", environ={**env, variable: gone})
        assert (caught.value.variable, caught.value.value) == (variable, gone)
    with pytest.raises(ConfigError) as caught:  # a plaintext rig may leave them out, not name a missing one
        ShellConfig.from_env("table", environ={"POKER_INSECURE": "true", "POKER_NATS_NKEY": gone})
    assert caught.value.variable == "POKER_NATS_NKEY"


def test_a_plaintext_rig_connects_to_nats_anonymously() -> None:
    config = ShellConfig.from_env("table", environ={"POKER_INSECURE": "true"})
    assert config.nats_credentials is not None
    assert (config.nats_credentials.seed, config.nats_credentials.ca) == (None, None)


def test_config_is_frozen() -> None:
    config = ShellConfig.from_env(
        "rng",
        environ={
            "POKER_INSECURE": "true",
        },
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("POKER_TABLE_PORT", "abc"),
        ("POKER_TABLE_PORT", "-1"),
        ("POKER_TABLE_PORT", "70000"),
        ("POKER_ENV", "staging"),
        ("POKER_LOG_FORMAT", "xml"),
        ("POKER_LOG_LEVEL", "loud"),
        ("POKER_GRACE_SECONDS", "nan"),
    ],
)
def test_bad_values_name_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ShellConfig.from_env("table", environ={"POKER_INSECURE": "true", variable: value})
    assert caught.value.variable == variable


def test_typed_helpers() -> None:
    env = {"A": "7", "B": "0.25", "C": "yes", "D": "off", "E": "maybe"}
    assert env_int(env, "A", 1) == 7
    assert env_int(env, "MISSING", 3) == 3
    assert env_float(env, "B", 1.0) == 0.25
    assert env_bool(env, "C", False) is True
    assert env_bool(env, "D", True) is False
    with pytest.raises(ConfigError):
        env_bool(env, "E", True)


def test_service_target() -> None:
    assert service_target({}, "wallet") == f"127.0.0.1:{DEFAULT_PORTS['wallet']}"
    assert service_target({"POKER_WALLET_TARGET": "w:9"}, "wallet") == "w:9"
