"""Escrow reconciliation of the tables nobody uses: an instance reconciles every table of the
partitions it takes, not only the tables something loads, and claims (when configured) a free
partition only when one of its tables has an orphan; cheaply: one wallet call per table, the log
read without loading the table for writing, a few tables at a time, and a table taken over only
when it has an orphan."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.eventstore.subjects import partition_of
from openpoker.services.table import reconcile
from openpoker.services.table.ownership import Ownership, PartitionHeld, StaticOwnership
from openpoker.services.table.wallet import Escrow
from openpoker.tablelog.events import OwnerChanged
from openpoker.tablelog.store import MemoryTableEvents, TableStore, decode_events
from tests.helpers.waiting import until
from tests.services.table import helpers
from tests.services.table.helpers import PARTITIONS, FakeWallet, Running, create, join, rid


async def serve(
    events: MemoryTableEvents,
    wallet: FakeWallet,
    ownership: Ownership,
    *,
    every: float = 3600.0,
    grace: float = 0.05,
    claim: bool = True,
) -> Running:
    """An instance with reconciliation on, its periodic loop started (as the server does)."""
    running = await helpers.serve(events, wallet, ownership, reconcile_every=every, grace=grace, claim=claim)
    assert running.app.reconciler is not None
    running.app.reconciler.start()
    return running


async def orphan(wallet: FakeWallet, table_id: str, player: str, amount: int = 300) -> None:
    """A buy-in whose table process died before its append: escrow, no log record."""
    await wallet.buy_in(request_id=f"{rid()}:buy-in", table_id=table_id, player=player, amount=amount)


def returns(wallet: FakeWallet, player: str) -> list[str]:
    return [c[1] for c in wallet.calls if c[0] == "cash_out" and c[2] == player]


async def owners_in_log(events: MemoryTableEvents, table_id: str) -> list[str]:
    subject = TableStore(events, partitions=PARTITIONS).subject(table_id)
    stored = await events.read(subject)
    return [e.owner for s in stored for e in decode_events(s.envelope) if isinstance(e, OwnerChanged)]


def same_partition(n: int, prefix: str) -> list[str]:
    """``n`` table ids of one partition."""
    first = f"{prefix}0"
    wanted = partition_of(first, PARTITIONS)
    found = (f"{prefix}{i}" for i in itertools.count(1))
    return [first, *itertools.islice((t for t in found if partition_of(t, PARTITIONS) == wanted), n - 1)]


class Partial(StaticOwnership):
    """Holds only the partitions of ``tables``; another instance holds the rest."""

    def __init__(self, tables: list[str], name: str = "table-2", epoch: int = 2) -> None:
        super().__init__(name, epoch)
        self.mine = {partition_of(t, PARTITIONS) for t in tables}

    async def epoch(self, partition: int) -> int:
        if partition not in self.mine:
            raise PartitionHeld(partition=partition, holder="table-9")
        return await super().epoch(partition)

    async def holder_of(self, partition: int) -> str | None:
        return self.name if partition in self.mine else "table-9"


async def setup_tables(events: MemoryTableEvents, wallet: FakeWallet, seated: dict[str, str]) -> None:
    """An earlier instance (now gone) created these tables and seated these players."""
    old = await serve(events, wallet, StaticOwnership("table-1", 1), every=3600.0, claim=False)
    try:
        for table_id, player in seated.items():
            await create(old.stub, table_id)
            if player:
                await join(old.stub, player, 1, table=f"tables/{table_id}")
        await old.app.drain()
    finally:
        await old.stop()


async def test_a_table_nobody_uses_after_a_restart_is_reconciled() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000, "dan": 1000})
    await setup_tables(events, wallet, {"t1": "ann", "t2": "", "t3": "cat"})
    await orphan(wallet, "t1", "dan")  # beside a seated player
    await orphan(wallet, "t2", "bob")  # at a table with nobody seated
    # The new instance gets no call at all: it claims the tables' partitions and sweeps them.
    new = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        await until(lambda: wallet.cash["bob"] == 1000 and wallet.cash["dan"] == 1000, within=20.0)
        assert new.app.reconciler is not None
        await new.app.reconciler.drain()
        assert (wallet.escrow[("t1", "dan")], wallet.escrow[("t2", "bob")]) == (0, 0)
        assert len(returns(wallet, "bob")) == len(returns(wallet, "dan")) == 1
        # Seated players keep their chips; the table with no orphan was never taken over.
        assert (wallet.escrow[("t1", "ann")], wallet.escrow[("t3", "cat")]) == (200, 200)
        assert returns(wallet, "ann") == returns(wallet, "cat") == []
        assert "t3" not in new.app.writer.tables
        assert await owners_in_log(events, "t3") == ["table-1"]
        assert await owners_in_log(events, "t2") == ["table-1", "table-2"]  # taken to return
    finally:
        await new.stop()


async def orphans_in_two_partitions(prefix: str) -> tuple[MemoryTableEvents, FakeWallet, str, str, str]:
    """Tables ``used`` (ann seated) and ``idle`` in one partition, ``other`` in another; orphans
    of bob at ``idle`` and of cat at ``other``."""
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000})
    used, idle = same_partition(2, f"{prefix}a")
    other = next(
        t
        for t in (f"{prefix}b{i}" for i in itertools.count())
        if partition_of(t, PARTITIONS) != partition_of(used, PARTITIONS)
    )
    await setup_tables(events, wallet, {used: "ann", idle: "", other: ""})
    await orphan(wallet, idle, "bob")
    await orphan(wallet, other, "cat")
    return events, wallet, used, idle, other


async def test_without_claiming_the_partitions_taken_by_use_are_swept() -> None:
    events, wallet, used, _, other = await orphans_in_two_partitions("u")
    calls = len(wallet.calls)
    new = await serve(events, wallet, Partial([used]), claim=False)
    try:
        await asyncio.sleep(0.1)
        assert wallet.cash["bob"] == 700  # nothing held yet, nothing claimed: nothing swept
        # A call at one table takes its partition: every table of that partition is swept.
        await new.stub.GetTable(pb.GetTableRequest(name=f"tables/{used}"))
        await until(lambda: wallet.cash["bob"] == 1000, within=20.0)
        await new.app.drain()
        # The table of a partition another instance holds is theirs to reconcile.
        assert (wallet.cash["cat"], wallet.escrow[(other, "cat")]) == (700, 300)
        assert ("escrows", other, "", 0) not in wallet.calls[calls:]
    finally:
        await new.stop()


async def test_claiming_leaves_another_instances_partitions_alone() -> None:
    events, wallet, used, _, other = await orphans_in_two_partitions("c")
    calls = len(wallet.calls)
    new = await serve(events, wallet, Partial([used]), claim=True)
    try:
        # The free partition's orphan is claimed and returned, with no call at any table ...
        await until(lambda: wallet.cash["bob"] == 1000, within=20.0)
        await new.app.drain()
        # ... while the partition another instance holds is not even looked at.
        assert (wallet.cash["cat"], wallet.escrow[(other, "cat")]) == (700, 300)
        assert ("escrows", other, "", 0) not in wallet.calls[calls:]
    finally:
        await new.stop()


class CountingWallet(FakeWallet):
    """Counts how many ``escrows`` calls are in flight at once."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.in_flight = 0
        self.most = 0

    async def escrows(self, table_id: str) -> tuple[Escrow, ...]:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.001)  # a wallet round trip: lets the other passes run
            return await super().escrows(table_id)
        finally:
            self.in_flight -= 1


class CountingEvents(MemoryTableEvents):
    """Counts table loads (each reads the table's snapshot first)."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    async def load_snapshot(self, stream_id: str) -> object:  # type: ignore[override]
        self.loads += 1
        return await super().load_snapshot(stream_id)


async def test_many_idle_tables_cost_one_look_each_and_no_partition_is_taken() -> None:
    events = CountingEvents()
    players = {f"p{i}": 1000 for i in range(30)}
    wallet = CountingWallet(cash=dict(players))
    await setup_tables(events, wallet, {f"idle{i}": f"p{i}" for i in range(30)})
    loads, calls = events.loads, len(wallet.calls)
    new = await serve(events, wallet, StaticOwnership("table-2", 2), grace=0.2)
    try:
        # The claim looks at every table of the free partitions once: one wallet call each.
        await until(lambda: sum(1 for c in wallet.calls[calls:] if c[0] == "escrows") >= 30, within=20.0)
        await asyncio.sleep(0.3)  # more than the grace: no sweep follows
        assert sum(1 for c in wallet.calls[calls:] if c[0] == "escrows") == 30
        assert 1 < wallet.most <= reconcile.CONCURRENCY
        # Each table's log read once, without loading it for writing; every escrow is a seated
        # player's, so no partition was taken (they stay free for the instances their traffic
        # reaches), no table taken over, nothing appended, nobody's chips moved.
        assert events.loads - loads == 30
        assert new.app.writer.partitions == {}
        assert new.app.writer.tables == {}
        for i in range(30):
            assert await owners_in_log(events, f"idle{i}") == ["table-1"]
        assert not [c for c in wallet.calls[calls:] if c[0] != "escrows"]
    finally:
        await new.stop()


@pytest.mark.parametrize("claim", [True, False])
async def test_the_periodic_pass_covers_tables_nothing_loaded(claim: bool) -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    used, idle = same_partition(2, "c")
    await setup_tables(events, wallet, {used: "ann", idle: ""})
    new = await serve(events, wallet, StaticOwnership("table-2", 2), every=0.02, grace=0.0, claim=claim)
    try:
        await new.stub.GetTable(pb.GetTableRequest(name=f"tables/{used}"))
        await new.app.drain()
        # An orphan that appears later, at a table nothing has loaded, goes back on a later pass.
        await orphan(wallet, idle, "bob")
        await until(lambda: wallet.cash["bob"] == 1000, within=20.0)
        assert len(returns(wallet, "bob")) == 1
    finally:
        await new.stop()
