"""``pokerctl up [--data-dir DIR] [--bots] [--free-ports]``: run the whole system in the foreground.

Starts nats-server with JetStream (store in DIR/nats, default ./data) and every service that
exists (``python -m services.<name>``, ports from ``POKER_<NAME>_PORT`` or the defaults rng 50051,
wallet 50052, table 50053, dealer 50054; ``--free-ports`` picks free ones), waits until each
answers SERVING on its health check, prints where each listens, and runs until Ctrl-C or
SIGTERM; then stops the services (SIGTERM, in-flight RPCs finish) and nats-server last. If a
service dies, everything is stopped and the exit code is 1. Logs: DIR/logs/<service>.log.

``--bots`` is accepted for ``make run``; the bots and the live view come with the table and
dealer work (issue 7) and are reported as not available until then.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from pokerctl.local import LocalSystem, StartError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    up = sub.add_parser(
        "up",
        help="run nats-server and every service in the foreground",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    up.add_argument("--data-dir", type=Path, default=Path("data"), help="data folder (default ./data)")
    up.add_argument("--bots", action="store_true", help="also play bots (when available)")
    up.add_argument("--free-ports", action="store_true", help="pick free ports instead of the defaults")
    up.add_argument("--nats-port", type=int, default=0, help="nats-server client port (default: a free one)")
    up.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_up(args))


def _say(text: str) -> None:
    print(text, flush=True)


async def _up(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    system = LocalSystem(data_dir=args.data_dir, free_ports=args.free_ports, nats_port=args.nats_port)
    try:
        await system.start()
    except StartError as exc:
        _say(f"start failed: {exc}")
        return 1
    store = system.nats.data_dir / "jetstream"
    _say(f"nats      {system.nats.url}  pid {system.nats.pid}  JetStream store {store}")
    for name, proc in system.processes.items():
        _say(f"{name:<9} {proc.address}  SERVING  pid {proc.process.pid}  log {proc.log_path}")
    missing = [n for n in ("rng", "wallet", "table", "dealer") if n not in system.processes]
    if missing:
        _say(f"not built yet: {', '.join(missing)}")
    if args.bots:
        _say("bots: not available yet (they come with the table and dealer services, issue 7)")
    _say("ready; Ctrl-C to stop")
    code = 0
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=0.5)
        except TimeoutError:
            dead = system.exited()
            if dead:
                _say(f"service exited unexpectedly: {', '.join(dead)}; stopping")
                code = 1
                break
    _say("stopping")
    codes = await system.stop()
    _say("stopped: " + ", ".join(f"{name} {rc}" for name, rc in codes.items()))
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(argparse.Namespace(data_dir=Path("data"), bots=False, free_ports=False, nats_port=0)))
