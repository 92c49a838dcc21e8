"""The table service's own events, stored in the table log beside the engine's.

The engine (``engine.table``) decides and folds the game; two facts belong to the service:

* ``OwnerChanged{epoch, owner}``: a table-service instance that took over a partition lease (the
  KV revision is the epoch) appends it to a table before anything else, so every append of a
  stale owner after it fails on the expected sequence, and a reader sees the writer epochs grow.
* ``HandVoided{hand_id, reason, returned}``: the dealer voided a hand that cannot be finished;
  every chip committed in it goes back to the seats still at the table (``returned`` holds each
  seat's stack at the start of the hand). The engine has no void command, so the service applies
  it to the folded state (``services.table.model``).

Both are frozen slotted keyword-only dataclasses registered with ``engine.codec``, so they are
stored as ``Event{type, payload=engine.codec JSON}`` exactly like engine events. Never rename a
class or a field once stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpoker.engine import codec
from openpoker.engine.hand_events import SeatAmount


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerChanged:
    epoch: int  # the partition lease revision of the new writer (the fencing token)
    owner: str  # the instance's name, shown in NOT_OWNER errors


@dataclass(frozen=True, slots=True, kw_only=True)
class HandVoided:
    hand_id: str
    reason: str
    returned: tuple[SeatAmount, ...]  # (seat, stack at the start of the hand) per seat still seated


codec.register(OwnerChanged, HandVoided)

SERVICE_EVENTS = (OwnerChanged, HandVoided)
