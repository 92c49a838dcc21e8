"""The table log's own event, stored beside the engine's.

The engine (``engine.table``) decides and folds the game, ``HandVoided`` included; one fact
belongs to the service: ``OwnerChanged{epoch, owner}``. A table-service instance that took over a
partition lease (the KV revision is the epoch) appends it to a table before anything else, so
every append of a stale owner after it fails on the expected sequence, and a reader sees the
writer epochs grow.

It is a frozen slotted keyword-only dataclass registered with ``engine.codec``, so it is stored
as ``Event{type, payload=engine.codec JSON}`` exactly like engine events. Never rename the class
or a field once stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpoker.engine import codec
from openpoker.engine.table_events import HandVoided

# Every event a table log holds besides the game's own is named here, the engine's void too.
__all__ = ["SERVICE_EVENTS", "HandVoided", "OwnerChanged"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerChanged:
    epoch: int  # the partition lease revision of the new writer (the fencing token)
    owner: str  # the instance's name, shown in NOT_OWNER errors


codec.register(OwnerChanged)

SERVICE_EVENTS = (OwnerChanged,)
