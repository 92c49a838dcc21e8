"""``pokerctl table``: an operator's commands about tables.

``pokerctl table reset-allowance --player P [--table T] [--request-id ID]``
    Reset P's allowance of all-ins due to disconnection (seed 000: 2 per 24 hours; "Members
    wishing to have their All-in Limits reset may contact our Support Department") through
    ``TableService.ResetAllInAllowance``: at table T (an id or ``tables/{id}``; its uses leave
    the site-wide record too), or without ``--table`` everywhere: first the site-wide record of
    the player's protections at every table (the line with table ``*``, version 0), then every
    table ``ListTables`` lists (every page). Prints one JSON line per table:
    ``{"table", "player", "cleared", "version"}`` (``cleared`` 0: nothing counted there, nothing
    appended), or ``{"table", "player", "error": {"code", "reason"}}`` for a table that refused.
    The request id (default a fresh one) is the same at every table: run again with
    ``--request-id`` to retry without resetting twice.

Who calls: on a secure system, ``pokerctl``'s staff certificate on the table's service port
(``--data-dir DATA``, or ``--ca/--cert/--key``), else an operator's token (``--token`` or
``$POKER_TOKEN``, with ``--ca``) on its client port; ``--insecure``: plaintext.

Exit codes: 0 every table answered, 1 a table refused, 2 no connection or no credentials.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc import aio

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl import connect
from openpoker.pokerctl.connect import Connection, Metadata, MissingCredentials
from openpoker.shell.client import bearer_metadata, rich_error

SERVICES = ("table",)
TIMEOUT = 10.0  # seconds per call


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    table = sub.add_parser(
        "table",
        help="an operator's commands about tables",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    table_sub = table.add_subparsers(dest="table_command", required=True, metavar="ACTION")
    reset = table_sub.add_parser(
        "reset-allowance",
        help="reset a player's all-in allowance at one table or every table",
        description="Reset a player's allowance of all-ins due to disconnection; one JSON line per table.",
    )
    reset.add_argument("--player", required=True, help="the player whose allowance is reset")
    reset.add_argument("--table", default="", help="a table id or tables/{id} (default: every table)")
    reset.add_argument("--request-id", default="", help="idempotency key (default: a fresh one)")
    connect.add_arguments(reset, services=SERVICES)
    reset.set_defaults(func=run_reset)


@dataclass(frozen=True, slots=True)
class Caller:
    """A channel to the table service and the metadata of each call on it."""

    channel: aio.Channel
    metadata: Metadata


def operator_of(conn: Connection, service: str = "table", *, doing: str = "resetting an allowance") -> Caller:
    """Staff with ``pokerctl``'s certificate when there is one, else the token given (on the
    client port of ``service``); plaintext: the ``x-caller`` header. ``doing`` names the
    command in the error when neither is given."""
    if not conn.secure or (conn.staff is not None and conn.staff.cert is not None):
        return Caller(conn.staff_channel(service), conn.staff_metadata())
    if conn.token:
        return Caller(conn.client_channel(service), bearer_metadata(conn.token))
    raise MissingCredentials(
        f"{doing} needs pokerctl's certificate (--data-dir, or --cert and --key) "
        "or an operator's token (--token or POKER_TOKEN)"
    )


def table_name(table: str) -> str:
    return table if table.startswith("tables/") else f"tables/{table}"


async def every_table(stub: Any, metadata: Metadata) -> list[str]:
    """Every table's name, in creation order (all pages of ``ListTables``)."""
    names: list[str] = []
    token = ""
    while True:
        page = await stub.ListTables(
            tpb.ListTablesRequest(page_token=token), metadata=metadata, timeout=TIMEOUT
        )
        names.extend(t.name for t in page.tables)
        token = page.next_page_token
        if not token:
            return names


async def reset_allowance(
    conn: Connection, *, player: str, tables: Sequence[str] = (), request_id: str = ""
) -> list[dict[str, Any]]:
    """Reset ``player``'s allowance at ``tables`` (default every table): one result per table,
    what the table answered or its refusal. Raises ``grpc.RpcError`` when the tables cannot be
    listed."""
    caller = operator_of(conn)
    request_id = request_id or str(uuid.uuid4())
    async with caller.channel as chan:
        stub = tgrpc.TableServiceStub(chan)
        # Everywhere: the site-wide record (request table "") before each table.
        names = [table_name(t) for t in tables] or ["", *await every_table(stub, caller.metadata)]
        results: list[dict[str, Any]] = []
        for name in names:
            request = tpb.ResetAllInAllowanceRequest(request_id=request_id, table=name, player_id=player)
            line: dict[str, Any] = {"table": name.removeprefix("tables/") or "*", "player": player}
            try:
                done = await stub.ResetAllInAllowance(request, metadata=caller.metadata, timeout=TIMEOUT)
            except grpc.RpcError as err:
                info = rich_error(err)
                line["error"] = {"code": info.code.name, "reason": info.reason}
            else:
                line.update(cleared=done.cleared, version=done.version)
            results.append(line)
    return results


def run_reset(args: argparse.Namespace) -> int:
    try:
        conn = connect.from_args(args, services=SERVICES)
        tables = [args.table] if args.table else []
        results = asyncio.run(
            reset_allowance(conn, player=args.player, tables=tables, request_id=args.request_id)
        )
    except MissingCredentials as exc:
        print(f"pokerctl table reset-allowance: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as err:
        info = rich_error(err)
        print(
            f"pokerctl table reset-allowance: cannot list the tables: {info.code.name} {info.reason}",
            file=sys.stderr,
        )
        return 2
    for line in results:
        print(json.dumps(line, sort_keys=True))
    return 1 if any("error" in line for line in results) else 0
