"""Entry point of ``pokerctl``.

Each sub-command lives in its own module ``pokerctl.cmd_<name>`` exposing
``register(subparsers)``, which adds its parser and sets ``func`` (returning the exit code).
Adding a command means adding a module and its name to ``COMMANDS``.

Library log lines (``shell.logs``: the bots' retries at debug, give-ups at warning) go to
stderr from ``$POKER_LOG_LEVEL`` up (default warning), never into a command's stdout.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from openpoker.shell.logs import cli_logging

COMMANDS: tuple[str, ...] = (
    "phh",
    "up",
    "rng",
    "ledger",
    "sim",
    "demo",
    "watch",
    "bots",
    "replay",
    "token",
    "table",
    "dealer",
    "backup",  # and "restore"
    "keys",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokerctl", description="Operate and audit the poker backend.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"openpoker.pokerctl.cmd_{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with cli_logging(os.environ.get("POKER_LOG_LEVEL", "warning")):
        code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
