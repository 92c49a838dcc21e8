"""Who may write which table: partition leases (the writer epoch) behind a small port.

``Ownership.epoch(partition)`` returns this instance's epoch for the partition, acquiring the
lease on first use, or raises ``NotOwner`` naming the holder. The lease only says who SHOULD
write; safety is the log's (``services.table.writer``): a new owner appends ``OwnerChanged{epoch}``
to a table before its first command, every append carries the expected sequence, and a writer
never appends on top of a higher epoch than its own.

``KvOwnership`` holds ``eventstore.lease.LeaseKeeper``s in the leases bucket, renewed in the
background; a lost lease is reported to ``on_lost`` (the app drops that partition's tables).
``StaticOwnership`` (unit tests, single process) owns every partition at a fixed epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from openpoker.eventstore.lease import LeaseHeld, LeaseKeeper
from openpoker.eventstore.subjects import partition_lease_key


class PartitionHeld(Exception):
    def __init__(self, *, partition: int, holder: str) -> None:
        super().__init__(f"partition {partition} held by {holder!r}")
        self.partition = partition
        self.holder = holder


class Ownership(Protocol):
    name: str

    async def epoch(self, partition: int) -> int:
        """Our epoch for ``partition`` (acquire if needed); ``PartitionHeld`` if someone else."""
        ...

    def lost(self, partition: int) -> None:
        """Forget the partition (our write was fenced): acquire again on next use."""
        ...

    async def holder_of(self, partition: int) -> str | None:
        """Who holds ``partition`` now (our ``name`` when we do), None when nobody does; a
        look, not an acquisition."""
        ...

    async def close(self) -> None: ...


class StaticOwnership:
    def __init__(self, name: str = "table-1", epoch: int = 1) -> None:
        self.name = name
        self._epoch = epoch

    async def epoch(self, partition: int) -> int:
        return self._epoch

    def lost(self, partition: int) -> None:
        pass

    async def holder_of(self, partition: int) -> str | None:
        return self.name

    async def close(self) -> None:
        pass


class KvOwnership:
    def __init__(
        self, kv: KeyValue, *, name: str, ttl: float, on_lost: Callable[[int], None] | None = None
    ) -> None:
        self.name = name
        self._kv = kv
        self._ttl = ttl
        self._keepers: dict[int, LeaseKeeper] = {}
        self.on_lost = on_lost

    async def epoch(self, partition: int) -> int:
        keeper = self._keepers.get(partition)
        if keeper is not None and keeper.held:
            return keeper.epoch
        if keeper is not None:  # lost since: tell the app, then try to take it again
            self._keepers.pop(partition, None)
            if self.on_lost is not None:
                self.on_lost(partition)
        keeper = LeaseKeeper(self._kv, partition_lease_key(partition), owner=self.name, ttl=self._ttl)
        try:
            epoch = await keeper.acquire()
        except LeaseHeld as held:
            raise PartitionHeld(partition=partition, holder=held.holder) from None
        keeper.start()
        self._keepers[partition] = keeper
        return epoch

    async def holder_of(self, partition: int) -> str | None:
        keeper = self._keepers.get(partition)
        if keeper is not None and keeper.held:
            return self.name
        try:
            entry = await self._kv.get(partition_lease_key(partition))
        except KeyNotFoundError:  # never taken, expired, or deleted
            return None
        return (entry.value or b"").decode() or None

    def lost(self, partition: int) -> None:
        keeper = self._keepers.pop(partition, None)
        if keeper is not None:
            keeper.lost.set()
            keeper.lost_reason = "fenced by a newer owner"

    async def close(self) -> None:
        for keeper in list(self._keepers.values()):
            await keeper.release()
        self._keepers.clear()
