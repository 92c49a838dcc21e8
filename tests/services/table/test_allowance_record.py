"""The site-wide allowance record (``tablelog.allowances``) and its keeper
(``services.table.site_allowance``) on their own: the stored form, what counts, compare-and-set,
a retried time-out finding its own reservation, a reservation left by a crash counting."""

from __future__ import annotations

import pytest

from openpoker.services.table.site_allowance import SiteAllowances
from openpoker.tablelog.allowances import (
    DAY_MS,
    KEEP_MS,
    MemoryAllowanceRecords,
    Record,
    RecordChanged,
    Use,
    decode,
    encode,
    key_of,
)

HOUR = 60 * 60 * 1000


def _use(at_ms: int, table: str, request: str = "", used: bool = True) -> Use:
    return Use(at_ms=at_ms, table=table, hand="h", request=request or f"r-{table}-{at_ms}", used=used)


def test_the_stored_form_round_trips_and_anything_else_reads_as_no_record() -> None:
    record = Record(uses=(_use(HOUR, "t1"), _use(2 * HOUR, "t2", used=False)), reset_at_ms=5)
    assert decode(encode(record)) == record
    assert decode(b"") == Record()
    assert decode(b"not json") == Record()
    assert decode(b'{"uses": [[1, "t"]]}') == Record()
    # Keys hold only what NATS keys may: any player id becomes base64url.
    assert key_of("ann") == "YW5u"
    assert set(key_of("a.b c/*>")) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_what_counts_elsewhere_the_window_the_table_and_the_last_reset() -> None:
    record = Record(uses=(_use(1 * HOUR, "t1"), _use(2 * HOUR, "t2", used=False), _use(3 * HOUR, "t3")))
    assert record.elsewhere("t1", 4 * HOUR, DAY_MS) == 2  # a reservation counts too
    assert record.elsewhere("t9", 4 * HOUR, DAY_MS) == 3
    assert record.elsewhere("t9", 1 * HOUR + DAY_MS, DAY_MS) == 2  # the first left the window
    after_reset = Record(uses=record.uses, reset_at_ms=2 * HOUR + 1)
    assert after_reset.elsewhere("t9", 4 * HOUR, DAY_MS) == 1
    # Adding drops what is older than KEEP_MS; without() drops a request or a table.
    kept = record.with_use(_use(1 * HOUR + KEEP_MS, "t4"), now_ms=1 * HOUR + KEEP_MS)
    assert [u.table for u in kept.uses] == ["t2", "t3", "t4"]
    assert [u.table for u in kept.without(table="t3").uses] == ["t2", "t4"]
    assert [u.table for u in kept.without(request=kept.uses[0].request).uses] == ["t3", "t4"]


async def test_memory_records_compare_and_set_on_the_revision() -> None:
    records = MemoryAllowanceRecords()
    assert await records.get("ann") == (Record(), 0)
    first = await records.put("ann", Record(reset_at_ms=1), revision=0)
    with pytest.raises(RecordChanged):
        await records.put("ann", Record(reset_at_ms=2), revision=0)  # created meanwhile
    await records.put("ann", Record(reset_at_ms=3), revision=first)
    assert (await records.get("ann"))[0].reset_at_ms == 3


async def _reserve(site: SiteAllowances, table: str, request: str, used_here: int = 0) -> int:
    return await site.reserve(
        player="ann",
        table=table,
        hand="h1",
        request=request,
        at_ms=HOUR,
        window_ms=DAY_MS,
        limit=2,
        used_here=used_here,
    )


async def test_a_retried_time_out_finds_its_own_reservation() -> None:
    site = SiteAllowances(MemoryAllowanceRecords())
    assert await _reserve(site, "t1", "r1") == 0
    assert await _reserve(site, "t1", "r1") == 0  # the same request: no second reservation
    record = await site.read("ann")
    assert [(u.table, u.request, u.used) for u in record.uses] == [("t1", "r1", False)]
    await site.settle(player="ann", table="t1", hand="h1", request="r1", at_ms=HOUR, used=True)
    assert [(u.request, u.used) for u in (await site.read("ann")).uses] == [("r1", True)]


async def test_a_reservation_nobody_settled_counts_and_nothing_is_reserved_past_the_limit() -> None:
    site = SiteAllowances(MemoryAllowanceRecords())
    await _reserve(site, "t1", "r1")  # its table crashed before settling
    assert await _reserve(site, "t2", "r2") == 1  # counted: one left, reserved for t2
    assert await _reserve(site, "t3", "r3") == 2  # none left: nothing reserved
    assert [u.request for u in (await site.read("ann")).uses] == ["r1", "r2"]
    # This table's own use counts too: with one here and one elsewhere, nothing is reserved.
    assert await _reserve(site, "t1", "r4", used_here=1) == 1
    await site.settle(player="ann", table="t2", hand="h1", request="r2", at_ms=HOUR, used=False)
    assert [u.request for u in (await site.read("ann")).uses] == ["r1"]
