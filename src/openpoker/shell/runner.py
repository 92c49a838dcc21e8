"""Run a service's async main under ``python -m openpoker.services.<name>`` with graceful shutdown.

``run(main)`` calls ``asyncio.run(main(stop))`` where ``stop`` is an ``asyncio.Event`` set on
SIGTERM or SIGINT. ``main`` starts its server, waits for ``stop``, then stops the server (health
goes NOT_SERVING, in-flight RPCs get the grace period) and closes its connections. A second
signal while stopping exits at once. Returns the process exit code.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable

from openpoker.shell.config import ConfigError

Main = Callable[[asyncio.Event], Awaitable[int | None]]


async def _supervise(main: Main) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals_seen = 0

    def on_signal() -> None:
        nonlocal signals_seen
        signals_seen += 1
        if signals_seen > 1:
            os._exit(130)  # operator insists: no more waiting for in-flight RPCs
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    try:
        code = await main(stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    return 0 if code is None else code


def run(main: Main) -> int:
    """Entry point body for ``openpoker/services/<name>/__main__.py``: ``sys.exit(run(main))``."""
    try:
        return asyncio.run(_supervise(main))
    except ConfigError as exc:
        print(f"configuration error: {exc}", flush=True)
        return 2
