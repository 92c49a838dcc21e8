"""Chip conservation across the wallet and the tables, checked through the public APIs.

After dealing has stopped (no hand in flight), for the given tables and players:

* every seated player's stack at the table equals their escrow account ``escrow/{table}/{player}``
  in the wallet, and a player who is not seated has an empty escrow there;
* every hand's pot account ``pot/{table}/{n}`` is empty (settled or voided);
* the house's rake grew by exactly the rake the tables' hands recorded;
* the players' money is all still there: cash + escrows = deposits - rake paid.

A cash-out the table retries in the background (a player who left while their chips were still
reserved) may land a moment after the hand: the check polls a few times before it reports.
The checks call as staff (``pokerctl.connect``: ``pokerctl``'s certificate on a secure system).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wgrpc
from openpoker.pokerctl.connect import CALLER, Connection, Metadata
from openpoker.shell.client import rich_error
from openpoker.tablelog.ids import hand_id

META: Metadata = (("x-caller", CALLER),)  # plaintext; over TLS the certificate names pokerctl


@dataclass(slots=True)
class ChipReport:
    conserved: bool
    problems: list[str] = field(default_factory=list)
    rake: int = 0
    hands: int = 0
    voided: int = 0


async def balance(wallet: Any, account: str, *, meta: Metadata = META) -> int:
    try:
        got = await wallet.GetBalance(wpb.GetBalanceRequest(account=account), timeout=5.0, metadata=meta)
    except grpc.RpcError as err:
        if rich_error(err).reason == "UNKNOWN_ACCOUNT":
            return 0
        raise
    return int(got.balance.balance)


async def hands_of(tables: Any, table_id: str, count: int, *, meta: Metadata = ()) -> list[tpb.Hand]:
    out = []
    for n in range(1, count + 1):
        try:
            got = await tables.GetHand(
                tpb.GetHandRequest(name=f"tables/{table_id}/hands/{hand_id(table_id, n)}"),
                timeout=5.0,
                metadata=meta,
            )
        except grpc.RpcError as err:
            if rich_error(err).reason == "HAND_NOT_FOUND":
                break
            raise
        out.append(got.hand)
    return out


async def _check_once(
    tables: Any,
    wallet: Any,
    *,
    table_ids: Iterable[str],
    players: dict[str, set[str]],
    deposits: int,
    house_before: int,
    meta: Metadata,
) -> ChipReport:
    report = ChipReport(conserved=True)
    escrow_total = 0
    for table_id in table_ids:
        got = await tables.GetTable(
            tpb.GetTableRequest(name=f"tables/{table_id}"), timeout=5.0, metadata=meta
        )
        table = got.table
        seated = {s.player_id: s.stack for s in table.seats if s.player_id}
        if table.current_hand.outcome == tpb.HAND_OUTCOME_IN_PROGRESS:
            report.problems.append(f"{table_id}: hand {table.current_hand.hand_id} still in progress")
        for player in sorted(players.get(table_id, set()) | set(seated)):
            escrow = await balance(wallet, f"escrow/{table_id}/{player}", meta=meta)
            escrow_total += escrow
            if escrow != seated.get(player, 0):
                report.problems.append(
                    f"{table_id}: {player} has {seated.get(player, 0)} at the table, {escrow} in escrow"
                )
        # Hand numbers count voided hands too; GetHand lists them all.
        hands = await hands_of(tables, table_id, int(table.hands_played) + 64, meta=meta)
        for number, hand in enumerate(hands, start=1):
            if hand.outcome == tpb.HAND_OUTCOME_VOIDED:
                report.voided += 1
            elif hand.outcome == tpb.HAND_OUTCOME_IN_PROGRESS:
                report.problems.append(f"{table_id}: hand {hand.hand_id} not finished")
            else:
                report.hands += 1
                report.rake += int(hand.rake)
            pot = await balance(wallet, f"pot/{table_id}/{number}", meta=meta)
            if pot:
                report.problems.append(f"{table_id}: pot of hand {number} holds {pot}")
    house = await balance(wallet, "house/rake", meta=meta) - house_before
    if house != report.rake:
        report.problems.append(f"house took {house} in rake, the tables recorded {report.rake}")
    cash_total = 0
    for player in sorted({p for ps in players.values() for p in ps}):
        cash_total += await balance(wallet, f"cash/{player}", meta=meta)
    if cash_total + escrow_total != deposits - house:
        report.problems.append(
            f"players hold {cash_total} cash + {escrow_total} escrow, deposits {deposits} - rake {house}"
        )
    report.conserved = not report.problems
    return report


async def check_chips(
    *,
    table_target: str,
    wallet_target: str,
    table_ids: list[str],
    players: dict[str, set[str]],
    deposits: int,
    house_before: int = 0,
    attempts: int = 20,
    conn: Connection | None = None,
) -> ChipReport:
    conn = (
        conn if conn is not None else Connection.plaintext({"table": table_target, "wallet": wallet_target})
    )
    async with conn.staff_channel("table") as tchan, conn.staff_channel("wallet") as wchan:
        tables: Any = tgrpc.TableServiceStub(tchan)
        wallet: Any = wgrpc.WalletServiceStub(wchan)
        report = ChipReport(conserved=False)
        for _ in range(attempts):
            report = await _check_once(
                tables,
                wallet,
                table_ids=table_ids,
                players=players,
                deposits=deposits,
                house_before=house_before,
                meta=conn.staff_metadata(),
            )
            if report.conserved:
                return report
            await asyncio.sleep(0.25)
        return report


async def house_balance(wallet_target: str, *, conn: Connection | None = None) -> int:
    conn = conn if conn is not None else Connection.plaintext({"wallet": wallet_target})
    async with conn.staff_channel("wallet") as chan:
        return await balance(wgrpc.WalletServiceStub(chan), "house/rake", meta=conn.staff_metadata())
