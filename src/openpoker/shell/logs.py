"""structlog set-up: JSON lines in production, a readable console in development.

Per-RPC identifiers (``rpc``, ``request_id``, ``table_id``, ``hand_id``) live in structlog's
context variables: the interceptor clears and binds them at the start of each RPC (each RPC runs
in its own task, so contexts never leak between calls), and handlers add more with ``bind``.
Logs go to stdout; never log secrets (seeds, tokens).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

import structlog

from openpoker.shell.config import ShellConfig

# The wrapper class ``configure_logging`` installed and whether it keeps debug lines. Hot paths
# check ``debug_enabled`` before logging at debug: a filtered call through structlog's lazy
# proxy still builds a bound logger every time (tens of microseconds per RPC).
_configured: dict[type[Any], bool] = {}  # at most one entry: the wrapper in force


def debug_enabled() -> bool:
    """Would a debug line be kept? True unless our own configuration, still in force, filters
    debug (structlog's defaults, or a configuration made elsewhere, keep everything)."""
    return _configured.get(structlog.get_config()["wrapper_class"], True)


def configure_logging(config: ShellConfig) -> None:
    """Configure structlog once per process (services call it first thing in main)."""
    service = config.service
    level = logging.getLevelNamesMapping()[config.log_level.upper()]
    wrapper = structlog.make_filtering_bound_logger(level)

    def add_service(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
        event.setdefault("service", service)
        return event

    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        add_service,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: list[Any]
    if config.log_format == "json":
        renderer = [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        renderer = [structlog.dev.ConsoleRenderer(colors=sys.stdout.isatty())]
    structlog.configure(
        processors=[*shared, structlog.processors.StackInfoRenderer(), *renderer],
        wrapper_class=wrapper,
        logger_factory=structlog.PrintLoggerFactory(file=sys.stdout),
        cache_logger_on_first_use=False,
    )
    _configured.clear()
    _configured[wrapper] = level <= logging.DEBUG


@contextlib.contextmanager
def cli_logging(level: str = "warning") -> Iterator[None]:
    """A command line's logging while it runs: lines at ``level`` and above, readable, on stderr,
    so stdout keeps only the command's own output (``pokerctl``; the bots' retries log at
    debug). The configuration before is restored after (tests run commands in-process)."""
    before = structlog.get_config()
    before["processors"] = list(before["processors"])
    kept = dict(_configured)
    number = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    wrapper = structlog.make_filtering_bound_logger(number)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=wrapper,
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured.clear()
    _configured[wrapper] = number <= logging.DEBUG
    try:
        yield
    finally:
        structlog.configure(**before)
        _configured.clear()
        _configured.update(kept)


def get_logger(**initial: Any) -> Any:
    """A bound structlog logger (typed ``Any``: structlog's proxies are dynamic)."""
    return structlog.get_logger(**initial)


def bind(**ids: str | int) -> None:
    """Add identifiers (``hand_id=...``) to the log context of the current RPC."""
    structlog.contextvars.bind_contextvars(**ids)
