"""``pokerctl watch TABLE [--as PLAYER] [--once | --frames N]``: a live terminal view of a table.

Follows ``WatchTable`` and redraws on every change: the seats (player, stack, bet, cards the
watcher may see, status, the button, who is to act and their options), the board, the pots and
the last actions. ``--as PLAYER`` watches as that player (their own hole cards shown); by default
the view is a spectator's. ``--once`` prints the current view and exits; ``--frames N`` prints N
views one after another (no screen clearing) and exits, for logs and tests. TABLE is a table id
or ``tables/{id}``. The table service is ``--table-target`` (default ``$POKER_TABLE_TARGET`` or
127.0.0.1:50053).

On a secure system (``--data-dir DATA`` of ``pokerctl up``, or ``--ca``) the view
comes from the table's client port (``--table-client-target``, default the table port + 100)
over TLS: as a spectator with no token, or as ``--as PLAYER`` with ``--token`` (or
``$POKER_TOKEN``), else a player token minted from the data folder's token key.
``--insecure``: plaintext to the table port.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import grpc

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.pokerctl import connect
from openpoker.pokerctl.connect import Connection
from openpoker.shell.client import rich_error

CLEAR = "\x1b[H\x1b[2J"
GAME_NAMES = {tpb.GAME_TEXAS_HOLDEM: "Hold'em", tpb.GAME_OMAHA: "Omaha", tpb.GAME_SIX_PLUS_HOLDEM: "Six Plus"}
STRUCTURE_NAMES = {
    tpb.STRUCTURE_NO_LIMIT: "No Limit",
    tpb.STRUCTURE_POT_LIMIT: "Pot Limit",
    tpb.STRUCTURE_FIXED_LIMIT: "Fixed Limit",
}
ACTION_NAMES = {
    tpb.ACTION_TYPE_FOLD: "folds",
    tpb.ACTION_TYPE_CHECK: "checks",
    tpb.ACTION_TYPE_CALL: "calls",
    tpb.ACTION_TYPE_BET: "bets",
    tpb.ACTION_TYPE_RAISE: "raises to",
    tpb.ACTION_TYPE_SHOW: "shows",
    tpb.ACTION_TYPE_MUCK: "mucks",
}
SEAT_STATUS = {
    tpb.SEAT_STATUS_EMPTY: "empty",
    tpb.SEAT_STATUS_WAITING: "waiting",
    tpb.SEAT_STATUS_READY: "ready",
    tpb.SEAT_STATUS_ACTIVE: "in hand",
    tpb.SEAT_STATUS_FOLDED: "folded",
    tpb.SEAT_STATUS_ALL_IN: "all-in",
    tpb.SEAT_STATUS_SITTING_OUT: "sitting out",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    watch = sub.add_parser(
        "watch",
        help="live terminal view of a table",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("table", help="table id or tables/{id}")
    watch.add_argument("--as", dest="viewer", default="", help="watch as this player")
    watch.add_argument("--once", action="store_true", help="print the current view and exit")
    watch.add_argument("--frames", type=int, default=0, help="print N views and exit")
    connect.add_arguments(watch, services=("table",))
    watch.set_defaults(func=run)


def _cards(cards: Iterable[str]) -> str:
    return " ".join(c if c else "??" for c in cards)


def describe_action(record: tpb.ActionRecord, players: dict[int, str]) -> str:
    who = players.get(record.seat) or f"seat {record.seat}"
    text = f"{who} {ACTION_NAMES.get(record.action, '?')}"
    if record.action in (tpb.ACTION_TYPE_CALL, tpb.ACTION_TYPE_BET, tpb.ACTION_TYPE_RAISE) and record.amount:
        text += f" {record.amount}"
    if record.all_in:
        text += " (all-in)"
    if record.automatic:
        text += " [time]"
    return text


def render(table: tpb.Table, recent: Iterable[str] = (), *, viewer: str = "") -> str:
    """One frame of the view (pure: a ``Table`` message in, text out)."""
    cfg = table.config
    stakes = f"{cfg.stakes.small_blind}/{cfg.stakes.big_blind}"
    if cfg.structure == tpb.STRUCTURE_FIXED_LIMIT:
        stakes = f"{cfg.stakes.small_bet}/{cfg.stakes.big_bet}"
    title = (
        f"{table.name}  {GAME_NAMES.get(cfg.game, '?')} {STRUCTURE_NAMES.get(cfg.structure, '?')} {stakes}"
        f"  version {table.version}  hands played {table.hands_played}"
    )
    lines = [title, f"watching as {viewer or 'a spectator'}", ""]
    hand = table.current_hand
    live = hand.hand_id != "" and hand.outcome == tpb.HAND_OUTCOME_IN_PROGRESS
    if live:
        street = tpb.Street.Name(hand.street).removeprefix("STREET_").lower()
        pots = " + ".join(str(p.amount) for p in hand.pots) or "0"
        lines.append(f"hand #{hand.hand_number} ({hand.hand_id})  {street}  pot {pots}")
        lines.append(f"board: {_cards(hand.board) or '-'}")
    else:
        lines.append("between hands")
    lines.append("")
    lines.append(f"{'seat':<6}{'player':<22}{'stack':>8}{'bet':>7}  {'cards':<13} status")
    to_act = hand.to_act.seat if live else 0
    for s in table.seats:
        if not s.player_id:
            continue
        mark = "D" if s.is_button else " "
        cards = _cards(s.hole_cards) if s.hole_cards else ""
        status = SEAT_STATUS.get(s.status, "?")
        if s.disconnected:
            status += ", disconnected"
        row = f"{s.seat:>2} {mark}   {s.player_id:<22}{s.stack:>8}{s.bet:>7}  {cards:<13} {status}"
        if s.seat == to_act:
            la = hand.to_act
            options = ", ".join(ACTION_NAMES.get(a, "?") for a in la.actions)
            row += f"  <- to act ({options}"
            if la.call_amount:
                row += f"; call {la.call_amount}"
            if la.max_raise_to:
                row += f"; to {la.min_raise_to}..{la.max_raise_to}"
            row += ")"
        lines.append(row)
    recent = list(recent)
    if recent:
        lines.append("")
        lines.append("last actions: " + "; ".join(recent[-6:]))
    return "\n".join(lines)


async def watch(
    target: str,
    table: str,
    *,
    viewer: str = "",
    frames: int = 0,
    emit: Callable[[str], None],
    clear: bool = False,
    conn: Connection | None = None,
) -> int:
    """Print a frame per ``WatchTable`` message; stop after ``frames`` frames (0 = never).
    Over ``conn`` (the table's client port on a secure system), else plaintext to ``target``."""
    conn = conn if conn is not None else Connection.plaintext({"table": target})
    name = table if table.startswith("tables/") else f"tables/{table}"
    recent: deque[str] = deque(maxlen=12)
    shown = 0
    metadata = conn.viewer_metadata(viewer)
    async with conn.client_channel("table") as chan:
        stub: Any = tgrpc.TableServiceStub(chan)
        call = stub.WatchTable(tpb.WatchTableRequest(name=name, viewer_player_id=viewer), metadata=metadata)
        try:
            async for msg in call:
                players = {s.seat: s.player_id for s in msg.table.seats if s.player_id}
                recent.extend(describe_action(a, players) for a in msg.new_actions)
                frame = render(msg.table, recent, viewer=viewer)
                emit((CLEAR if clear else "") + frame + ("" if clear else "\n"))
                shown += 1
                if frames and shown >= frames:
                    break
        finally:
            call.cancel()
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        conn = connect.from_args(args, services=("table",))
    except connect.MissingCredentials as exc:
        print(f"watch: {exc}", file=sys.stderr)
        return 2
    frames = 1 if args.once else args.frames

    def emit(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    try:
        return asyncio.run(
            watch(
                conn.target("table"),
                args.table,
                viewer=args.viewer,
                frames=frames,
                emit=emit,
                clear=not frames,
                conn=conn,
            )
        )
    except connect.MissingCredentials as exc:
        print(f"watch: {exc}", file=sys.stderr)
        return 2
    except grpc.RpcError as err:
        info = rich_error(err)
        print(f"watch failed: {info.code.name} {info.reason} {info.message}", file=sys.stderr)
        if info.code == grpc.StatusCode.UNAVAILABLE and not conn.secure:
            print("watch: a secure system (pokerctl up) needs --data-dir DATA", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
