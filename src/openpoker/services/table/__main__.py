"""``python -m openpoker.services.table``: run the table service until SIGTERM/SIGINT.

The event loop is uvloop's: the action path is mostly loop and socket work (gRPC callbacks,
the NATS publish and its ack), which uvloop runs in C (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import sys

import uvloop

from openpoker.services.table.server import main
from openpoker.shell.runner import run

if __name__ == "__main__":
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    sys.exit(run(main))
