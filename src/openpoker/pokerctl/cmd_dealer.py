"""``pokerctl dealer``: an operator's view of the dealer, and its pauses.

``pokerctl dealer status``
    ``DealerService.GetDealerStatus`` as one JSON object: ``tables_followed``, ``active_hands``,
    ``hands_completed``, ``pending_events``, ``engine_version``, ``started_at`` and ``paused``,
    one entry per paused table (``table``, ``paused_by``: ``operator`` or ``dealer``, ``reason``,
    ``failures``, ``detail``, ``paused_at``). A table the dealer paused itself could not open its
    hands (docs/operations.md: the dealer's own pauses): find the cause, then resume it.

``pokerctl dealer pause --table T`` / ``pokerctl dealer resume --table T``
    Stop dealing new hands at table T (a hand in play finishes), or deal again; one JSON line
    ``{"table", "paused"}``. Resuming lifts the dealer's own pause too.

Who calls: ``pokerctl``'s staff certificate on the dealer's service port (``--data-dir DATA``, or
``--ca/--cert/--key``), else an operator's token (``--token`` or ``$POKER_TOKEN``, with
``--ca``; ``status`` also takes an auditor's) on its client port; ``--insecure``: plaintext.

Exit codes: 0 answered, 1 refused (the code and reason on stderr), 2 no connection or no
credentials.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from openpoker.pokerctl import connect
from openpoker.pokerctl.cmd_table import Caller, operator_of, table_name
from openpoker.pokerctl.connect import Connection, MissingCredentials
from openpoker.shell.client import rich_error

SERVICES = ("dealer",)
TIMEOUT = 10.0  # seconds per call
_PAUSED_BY = {pb.PAUSED_BY_OPERATOR: "operator", pb.PAUSED_BY_DEALER: "dealer"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dealer = sub.add_parser(
        "dealer",
        help="the dealer's status and its pauses",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dealer_sub = dealer.add_subparsers(dest="dealer_command", required=True, metavar="ACTION")
    status = dealer_sub.add_parser("status", help="what the dealer drives, and every paused table")
    connect.add_arguments(status, services=SERVICES)
    status.set_defaults(func=run_status)
    actions = (("pause", "stop dealing new hands at a table"), ("resume", "deal again at a table"))
    for name, helptext in actions:
        action = dealer_sub.add_parser(name, help=helptext)
        action.add_argument("--table", required=True, help="a table id or tables/{id}")
        action.add_argument("--request-id", default="", help="idempotency key (default: a fresh one)")
        connect.add_arguments(action, services=SERVICES)
        action.set_defaults(func=run_pause, pause=name == "pause")


def _caller(conn: Connection) -> Caller:
    return operator_of(conn, "dealer", doing="the dealer's commands")


def status_json(reply: pb.GetDealerStatusResponse) -> dict[str, Any]:
    """The status as printed: protobuf's JSON names, ``paused_by`` as a word."""
    out = MessageToDict(reply, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    for entry, paused in zip(out.get("paused", []), reply.paused, strict=True):
        entry["paused_by"] = _PAUSED_BY.get(paused.paused_by, "unknown")
    return out


async def dealer_status(conn: Connection) -> dict[str, Any]:
    caller = _caller(conn)
    async with caller.channel as chan:
        stub: Any = pb_grpc.DealerServiceStub(chan)
        request = pb.GetDealerStatusRequest()
        reply = await stub.GetDealerStatus(request, metadata=caller.metadata, timeout=TIMEOUT)
    return status_json(reply)


async def set_paused(conn: Connection, *, table: str, pause: bool, request_id: str = "") -> dict[str, Any]:
    caller = _caller(conn)
    async with caller.channel as chan:
        stub: Any = pb_grpc.DealerServiceStub(chan)
        name = table_name(table)
        rid = request_id or str(uuid.uuid4())
        if pause:
            reply = await stub.PauseTable(
                pb.PauseTableRequest(request_id=rid, table=name), metadata=caller.metadata, timeout=TIMEOUT
            )
        else:
            reply = await stub.ResumeTable(
                pb.ResumeTableRequest(request_id=rid, table=name), metadata=caller.metadata, timeout=TIMEOUT
            )
    return {"table": reply.table.removeprefix("tables/"), "paused": reply.paused}


def _run(args: argparse.Namespace, work: Any) -> int:
    command = f"pokerctl dealer {args.dealer_command}"
    try:
        conn = connect.from_args(args, services=SERVICES)
        result = asyncio.run(work(conn))
    except MissingCredentials as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as err:
        info = rich_error(err)
        print(f"{command}: {info.code.name} {info.reason} {info.message}".rstrip(), file=sys.stderr)
        return 2 if info.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) else 1
    print(json.dumps(result, sort_keys=True))
    return 0


def run_status(args: argparse.Namespace) -> int:
    return _run(args, dealer_status)


def run_pause(args: argparse.Namespace) -> int:
    return _run(
        args, lambda conn: set_paused(conn, table=args.table, pause=args.pause, request_id=args.request_id)
    )
