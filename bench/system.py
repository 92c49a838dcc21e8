"""The whole system: hands/s with bots at many tables (default 50), every service a process.

Setup: nats-server and the rng, wallet, table and dealer services as processes on a temporary
data folder (``pokerctl.local.LocalSystem``), tables created through the API (Hold'em, Omaha and
Six Plus in turn, in no, pot and fixed limit in turn), two bots per table playing through the
public gRPC API (``pokerctl.bots``, the same bots as ``pokerctl demo``), all in this process.
After every table has played a hand (warm-up), hands and actions are counted over a fixed
window; ``Act`` round trips as the bots see them give p50/p99. Each hand also costs the dealer a
shuffle, a reservation, a settlement and a seed reveal.

Peers, same run (``bench.services._peers``): a bare gRPC call to the table service (health
check) and a bare JetStream append on the same nats-server.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.services import _cpu_seconds, _peers
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl.bots import QUIET, create_table, start_bots, wait_tables
from openpoker.pokerctl.cmd_demo import hands_played, percentile, table_plan
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import channel


async def _run(quick: bool) -> dict[str, object]:
    tables = 5 if quick else 50
    window = 5.0 if quick else 30.0
    data_dir = Path(tempfile.mkdtemp(prefix="bench-system-"))
    system = LocalSystem(data_dir=data_dir, free_ports=True)
    try:
        await system.start()
        targets = system.targets
        plan = table_plan(tables, "bench-")
        names = [n for n, _ in plan]
        for name, config in plan:
            await create_table(targets["table"], name, config)
        bots = await start_bots(
            table_target=targets["table"],
            wallet_target=targets["wallet"],
            tables=names,
            players_per_table=2,
            behaviour=QUIET,
        )
        try:
            await asyncio.wait_for(
                wait_tables(targets["table"], names, lambda t: t.hands_played >= 1), timeout=300
            )
            async with channel(targets["table"]) as chan:
                stub: Any = tgrpc.TableServiceStub(chan)
                hands0 = await hands_played(stub, names)
                actions0 = bots.stats.actions
                lat0 = len(bots.stats.latencies_ms)
                pids = {n: p.process.pid for n, p in system.processes.items()}
                cpu0 = {n: _cpu_seconds(pid) for n, pid in pids.items()}
                bots_cpu0 = time.process_time()
                t0 = time.perf_counter()
                await asyncio.sleep(window)
                hands1 = await hands_played(stub, names)
                elapsed = time.perf_counter() - t0
                cpu = {n: round(_cpu_seconds(pid) - cpu0[n], 2) for n, pid in pids.items()}
                # The bots all run in this process: near ``window_s`` it is the bottleneck.
                cpu["bots (this process)"] = round(time.process_time() - bots_cpu0, 2)
                actions1 = bots.stats.actions
                lat = bots.stats.latencies_ms[lat0:]
        finally:
            await bots.stop()
        peers = await _peers(targets["table"], system.nats.url, 200 if quick else 1000, pids["table"])
        return {
            "tables": tables,
            "bots": 2 * tables,
            "window_s": round(elapsed, 2),
            "hands": hands1 - hands0,
            "hands_per_s": round((hands1 - hands0) / elapsed, 2),
            "actions_per_s": round((actions1 - actions0) / elapsed, 1),
            "act_p50_ms": round(percentile(lat, 50), 3),
            "act_p99_ms": round(percentile(lat, 99), 3),
            # CPU seconds each service process used in the window (where the time goes).
            "cpu_s": cpu,
            "dealer_cpu_ms_per_hand": round(1000 * cpu["dealer"] / max(1, hands1 - hands0), 2),
            "table_cpu_ms_per_action": round(1000 * cpu["table"] / max(1, actions1 - actions0), 3),
            **peers,
        }
    finally:
        await system.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def run(quick: bool) -> dict[str, object]:
    return asyncio.run(_run(quick))
