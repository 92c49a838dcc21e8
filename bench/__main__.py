"""Run every benchmark and print one JSON object per benchmark, plus a readable table.

Each module ``bench.<name>`` listed in ``BENCHMARKS`` exposes ``run(quick: bool) -> dict``:
the figures it measured, always with the peer's figure measured in the same run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import platform
import sys

BENCHMARKS: tuple[str, ...] = (
    "ranking",
    "eventstore",
    "services",
    "wallet",
    "rng",
    "engine",
    "system",
    "table_snapshot",
)


def main() -> int:
    parser = argparse.ArgumentParser(prog="make bench")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the harness")
    parser.add_argument("only", nargs="*", help="benchmark names to run (default: all)")
    args = parser.parse_args()
    header = {"date": dt.date.today().isoformat(), "python": platform.python_version()}
    print(json.dumps({"bench": "environment", **header}), flush=True)
    for name in BENCHMARKS:
        if args.only and name not in args.only:
            continue
        result = importlib.import_module(f"bench.{name}").run(args.quick)
        print(json.dumps({"bench": name, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
