"""A player's allowance of all-ins due to disconnection counted across every table (seed 000:
"a total of no more than 2 All-ins due to disconnection within any 24-hour period").

Theory of operation
-------------------
The engine decides a time-out from its table's own protections plus a fact the shell gives it,
``TimeOut.used_elsewhere``: the protections the player used at other tables in the window,
read from the site-wide record (``tablelog.allowances``, KV ``poker-allowances``). The decision
records that number, so a replay of the log decides the same without the record.

* **Reserve, then decide.** Before a time-out that may protect
  (``engine.table.protection_at_stake``), ``reserve`` reads the player's record, counts the uses
  at other tables and, when this table's uses and those leave one, writes a reservation for this
  table and request with compare-and-set on the key's revision. A second table deciding at once then fails
  its write, reads again, counts the first table's reservation, and is told the allowance is
  used up: two tables never both take the last protection.
* **Settle after the append.** ``settle`` marks the reservation used when the appended
  ``DecisionTimedOut`` used protection, and drops it otherwise (the engine did not use it, the
  command was refused, or the append failed). A reservation left by a crash between the two
  counts as a use until it leaves the window (conservative) or an operator resets the player.
* **The record unreachable.** A time-out cannot wait for NATS: the table then counts only its
  own protections (``used_elsewhere`` 0, which the log records), logs
  ``allowance.record_unavailable`` and tries to record the use afterwards. The player, not the
  house, would otherwise pay for the outage by losing a hand with chips in the pot, and what a
  player can gain meanwhile is bounded by each table's own count; the warning names the player
  for the support desk. An operator's reset, which can wait, is refused instead
  (``ALLOWANCE_RECORD_UNAVAILABLE``) rather than done at the table and not in the record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from openpoker.services.table.errors import AllowanceRecordUnavailable
from openpoker.shell.logs import get_logger
from openpoker.tablelog.allowances import AllowanceRecords, Record, RecordChanged, Use

ATTEMPTS = 16  # compare-and-set rounds before giving up (each lost round means another wrote)


class SiteAllowances:
    def __init__(self, records: AllowanceRecords) -> None:
        self.records = records
        self._log = get_logger()

    async def _update(self, player: str, change: Callable[[Record], Record | None]) -> Record:
        """Apply ``change`` to the player's record with compare-and-set (None: write nothing);
        returns the record as read last. Raises what the store raises, or ``RecordChanged``
        after ``ATTEMPTS`` lost races."""
        for _ in range(ATTEMPTS):
            record, revision = await self.records.get(player)
            new = change(record)
            if new is None:
                return record
            try:
                await self.records.put(player, new, revision=revision)
            except RecordChanged:
                continue
            return record
        raise RecordChanged(player)

    async def reserve(
        self,
        *,
        player: str,
        table: str,
        hand: str,
        request: str,
        at_ms: int,
        window_ms: int,
        limit: int,
        used_here: int,
    ) -> int:
        """The protections ``player`` used at other tables in the window ending at ``at_ms``;
        one is reserved for ``request`` at ``table`` when the allowance has one left. 0 when
        the record cannot be read (logged): the table counts only its own."""
        elsewhere = 0

        def change(record: Record) -> Record | None:
            nonlocal elsewhere
            elsewhere = record.elsewhere(table, at_ms, window_ms)
            if record.of_request(request) is not None or used_here + elsewhere >= limit:
                return None  # reserved by an earlier attempt, or nothing left to reserve
            use = Use(at_ms=at_ms, table=table, hand=hand, request=request, used=False)
            return record.with_use(use, now_ms=at_ms)

        try:
            await self._update(player, change)
        except Exception as exc:
            self._log.warning("allowance.record_unavailable", player=player, table_id=table, error=repr(exc))
            return 0
        return elsewhere

    async def settle(
        self, *, player: str, table: str, hand: str, request: str, at_ms: int, used: bool
    ) -> None:
        """After the decision: the reservation of ``request`` marked used, or dropped."""

        def change(record: Record) -> Record | None:
            mine = record.of_request(request)
            if not used:
                return None if mine is None else record.without(request=request)
            if mine is not None and mine.used:
                return None
            # The reservation's own hand and time stay (the request may name no hand).
            use = (
                Use(at_ms=at_ms, table=table, hand=hand, request=request, used=True)
                if mine is None
                else dataclasses.replace(mine, used=True)
            )
            return record.with_use(use, now_ms=at_ms)

        try:
            await self._update(player, change)
        except Exception as exc:
            self._log.warning(
                "allowance.record_unavailable",
                player=player,
                table_id=table,
                request_id=request,
                used=used,
                error=repr(exc),
            )

    async def read(self, player: str) -> Record:
        """The player's record; raises ``AllowanceRecordUnavailable``."""
        try:
            record, _ = await self.records.get(player)
        except Exception as exc:
            raise AllowanceRecordUnavailable(player=player, detail=repr(exc)) from exc
        return record

    async def clear(
        self, *, player: str, table: str, at_ms: int, request: str = "", cleared: int = 0
    ) -> Record:
        """Forget the uses of ``player`` at ``table``, or everywhere when ``table`` is empty
        (then also noting the reset's time, so a use a racing table writes with an older time
        does not count again, and its ``request`` with the count it ``cleared``; the same
        request again changes nothing). Returns the record as it was; raises
        ``AllowanceRecordUnavailable``."""

        def change(record: Record) -> Record | None:
            if table:
                return None if all(u.table != table for u in record.uses) else record.without(table=table)
            if request and record.reset_request == request:
                return None
            return Record(
                uses=(),
                reset_at_ms=max(at_ms, record.reset_at_ms),
                reset_request=request,
                reset_cleared=cleared,
            )

        try:
            return await self._update(player, change)
        except Exception as exc:
            raise AllowanceRecordUnavailable(player=player, detail=repr(exc)) from exc
