"""Logging set-up: JSON lines in production, console text in development, ids from contextvars."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from openpoker.shell.config import ShellConfig
from openpoker.shell.logs import bind, cli_logging, configure_logging, debug_enabled, get_logger
from tests.helpers.natscreds import nats_env


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    yield
    structlog.contextvars.clear_contextvars()
    structlog.reset_defaults()


def test_production_logs_are_json_with_bound_ids(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    env = {"POKER_TLS_DIR": "/nonexistent/pki", "POKER_ENV": "production", **nats_env(tmp_path)}
    configure_logging(ShellConfig.from_env("table", environ=env))
    bind(table_id="t1", hand_id="h9")
    get_logger().info("hand.started", seats=6)
    get_logger().debug("hidden")  # below the default info level
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["event"] == "hand.started"
    assert (entry["service"], entry["table_id"], entry["hand_id"], entry["seats"]) == ("table", "t1", "h9", 6)
    assert entry["level"] == "info"
    assert entry["timestamp"].endswith("Z")


def test_development_logs_are_console_text(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(
        ShellConfig.from_env("dealer", environ={"POKER_INSECURE": "true", "POKER_LOG_LEVEL": "debug"})
    )
    get_logger().debug("clock.started", seat=3)
    out = capsys.readouterr().out
    assert "clock.started" in out
    assert "seat" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_debug_enabled_follows_the_configured_level() -> None:
    assert debug_enabled()  # structlog's defaults keep everything
    configure_logging(
        ShellConfig.from_env("table", environ={"POKER_INSECURE": "true", "POKER_LOG_LEVEL": "info"})
    )
    assert not debug_enabled()
    configure_logging(
        ShellConfig.from_env("table", environ={"POKER_INSECURE": "true", "POKER_LOG_LEVEL": "debug"})
    )
    assert debug_enabled()
    configure_logging(
        ShellConfig.from_env("table", environ={"POKER_INSECURE": "true", "POKER_LOG_LEVEL": "warning"})
    )
    assert not debug_enabled()
    structlog.reset_defaults()  # someone else's configuration: assume debug lines are kept
    assert debug_enabled()


def test_cli_logging_keeps_stdout_clean_and_restores_what_was_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with cli_logging("warning"):
        assert not debug_enabled()
        get_logger().debug("retry.again", what="wallet.Deposit")
        get_logger().warning("retry.gave_up", what="wallet.Deposit", code="UNAVAILABLE")
    out, err = capsys.readouterr()
    assert out == ""
    assert "retry.gave_up" in err
    assert "UNAVAILABLE" in err
    assert "retry.again" not in err
    assert debug_enabled()  # structlog's defaults again
    with cli_logging("debug"):
        get_logger().debug("retry.again")
    assert "retry.again" in capsys.readouterr().err
