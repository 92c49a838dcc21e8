"""``pokerctl up [--data-dir DIR] [--bots] [--free-ports] [--insecure]``: run the whole system.

Starts nats-server with JetStream (store in DIR/nats, default ./data; client port 4222, where
``pokerctl replay`` and ``pokerctl ledger audit`` look by default) and every service that
exists (``python -m openpoker.services.<name>``, ports from ``POKER_<NAME>_PORT`` or the defaults rng 50051,
wallet 50052, table 50053, dealer 50054; ``--free-ports`` picks free ones), waits until each
answers SERVING on its health check, prints where each listens, and runs until Ctrl-C or
SIGTERM; then stops the services (SIGTERM, in-flight RPCs finish) and nats-server last. If a
service dies, everything is stopped and the exit code is 1. Logs: DIR/logs/<service>.log.

Secure by default: the local PKI is made once under DIR/pki (ca.crt; a certificate per service;
pokerctl.crt/.key, the staff certificate other pokerctl commands use with --data-dir DIR;
token.key and jwks.json for bearer tokens, see ``pokerctl token``). Each service serves mutual
TLS on its port and TLS for token holders on its client port (the port + 100, or
``POKER_<NAME>_CLIENT_PORT``); both are printed. ``--insecure`` runs everything plaintext with
no identity (debugging, the benchmark without security).

``--bots`` (``make run``) also creates three tables if they do not exist (``holdem-1`` no
limit, ``omaha-1`` pot limit, ``sixplus-1`` no limit), seats four bots at each that play through
the gRPC API at a pace a human can follow, and shows the live view of ``holdem-1``
(``pokerctl watch``) in this terminal until Ctrl-C, which stops the bots, then everything.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from openpoker.pokerctl.bots import Behaviour, create_table, table_config
from openpoker.pokerctl.cmd_bots import play_bots
from openpoker.pokerctl.cmd_watch import watch
from openpoker.pokerctl.connect import Connection
from openpoker.pokerctl.local import LocalSystem, StartError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    up = sub.add_parser(
        "up",
        help="run nats-server and every service in the foreground",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    up.add_argument("--data-dir", type=Path, default=Path("data"), help="data folder (default ./data)")
    up.add_argument("--bots", action="store_true", help="also play bots at three tables and show one live")
    up.add_argument("--free-ports", action="store_true", help="pick free ports instead of the defaults")
    up.add_argument(
        "--insecure", action="store_true", help="plaintext, no identity (debugging, benchmarks without TLS)"
    )
    up.add_argument(
        "--nats-port",
        type=int,
        default=None,
        help="nats-server client port (default 4222, where the other pokerctl commands look; "
        "with --free-ports a free one)",
    )
    up.set_defaults(func=run)


BOT_TABLES = (("holdem-1", "holdem", "nl"), ("omaha-1", "omaha", "pl"), ("sixplus-1", "sixplus", "nl"))


async def _start_bots(system: LocalSystem, stop: asyncio.Event) -> list[asyncio.Task[Any]]:
    targets = system.targets
    conn = Connection.of_system(system)  # staff certificate; bots with player tokens
    for name, game, structure in BOT_TABLES:
        config = table_config(game, structure, clock_ms=5000, name=name)
        await create_table(targets["table"], name, config, conn=conn)
    names = [name for name, _, _ in BOT_TABLES]
    loop = asyncio.get_running_loop()
    bots = loop.create_task(
        play_bots(
            table_target=targets["table"],
            wallet_target=targets["wallet"],
            names=names,
            players=4,
            behaviour=Behaviour(think_ms=400),
            seed=int(time.time()),
            stop=stop,
            conn=conn,
        )
    )

    def emit(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    view = loop.create_task(watch(targets["table"], names[0], emit=emit, clear=True, conn=conn))
    return [bots, view]


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_up(args))


def _say(text: str) -> None:
    print(text, flush=True)


async def _up(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.bots:
        # A short pause between hands, so the live view can be followed.
        os.environ.setdefault("POKER_DEALER_HAND_DELAY_MS", "1500")
    nats_port = args.nats_port if args.nats_port is not None else (0 if args.free_ports else 4222)
    system = LocalSystem(
        data_dir=args.data_dir, free_ports=args.free_ports, nats_port=nats_port, secure=not args.insecure
    )
    try:
        await system.start()
    except StartError as exc:
        _say(f"start failed: {exc}")
        return 1
    store = system.nats.data_dir / "jetstream"
    _say(f"nats      {system.nats.url}  pid {system.nats.pid}  JetStream store {store}")
    for name, proc in system.processes.items():
        _say(f"{name:<9} {proc.address}  SERVING  pid {proc.process.pid}  log {proc.log_path}")
    if system.pki is not None:
        _say(f"pki       {system.pki.root}  (ca.crt; staff pokerctl.crt/.key; token.key, jwks.json)")
        for name, address in system.client_targets.items():
            _say(f"client    {name} {address}  TLS, bearer tokens")
    else:
        _say("insecure  plaintext, no identity (x-caller / x-player-id headers)")
    missing = [n for n in ("rng", "wallet", "table", "dealer") if n not in system.processes]
    if missing:
        _say(f"not built yet: {', '.join(missing)}")
    _say("ready; Ctrl-C to stop")
    extras: list[asyncio.Task[Any]] = []
    if args.bots:
        extras = await _start_bots(system, stop)
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
    for task in extras:
        task.cancel()
    await asyncio.gather(*extras, return_exceptions=True)
    codes = await system.stop()
    _say("stopped: " + ", ".join(f"{name} {rc}" for name, rc in codes.items()))
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(
        run(
            argparse.Namespace(
                data_dir=Path("data"), bots=False, free_ports=False, nats_port=None, insecure=False
            )
        )
    )
