"""The table log's own events, stored beside the engine's.

The engine (``engine.table``) decides and folds the game, ``HandVoided`` included; three facts
belong to the service:

* ``OwnerChanged{epoch, owner}``. A table-service instance that took over a partition lease (the
  KV revision is the epoch) appends it to a table before anything else, so every append of a
  stale owner after it fails on the expected sequence, and a reader sees the writer epochs grow.
* ``BuyInIntended{request_id, player, amount, kind}``: a join or top-up is about to move chips
  cash -> escrow in the wallet (id ``<request_id>:<kind>``). Appended before the wallet is
  asked, so a crash at any later point leaves a durable record of money that may be in escrow
  with no seat behind it. The request's own envelope (command id ``request_id``) closes it: the
  chips now back a seat.
* ``BuyInCancelled{request_id}``: the request will never seat (appended only while the intent
  is open, so exactly one of the seat and the cancel is in the log); its chips are owed back.
* ``BuyInRefunded{request_id, chips}``: the owed chips went back to cash under
  ``<request_id>:refund`` (``chips`` 0: none had moved). Appended only after the wallet
  confirmed, so a crash before it only makes the next owner send the same refund again.

Whoever owns the table finishes an intent left open or owed (``services.table.intents``).

It is a frozen slotted keyword-only dataclass registered with ``engine.codec``, so it is stored
as ``Event{type, payload=engine.codec JSON}`` exactly like engine events. Never rename the class
or a field once stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpoker.engine import codec
from openpoker.engine.table_events import HandVoided

# Every event a table log holds besides the game's own is named here, the engine's void too.
__all__ = ["SERVICE_EVENTS", "BuyInCancelled", "BuyInIntended", "BuyInRefunded", "HandVoided", "OwnerChanged"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerChanged:
    epoch: int  # the partition lease revision of the new writer (the fencing token)
    owner: str  # the instance's name, shown in NOT_OWNER errors


@dataclass(frozen=True, slots=True, kw_only=True)
class BuyInIntended:
    request_id: str  # the join's or top-up's request id (the wallet's is ``<request_id>:<kind>``)
    player: str
    amount: int
    kind: str  # "buy-in" (a join) or "top-up"


@dataclass(frozen=True, slots=True, kw_only=True)
class BuyInCancelled:
    request_id: str  # the intent's


@dataclass(frozen=True, slots=True, kw_only=True)
class BuyInRefunded:
    request_id: str  # the intent's
    chips: int  # returned under ``<request_id>:refund`` (0: none had moved)


codec.register(OwnerChanged)
codec.register(BuyInIntended)
codec.register(BuyInCancelled)
codec.register(BuyInRefunded)

SERVICE_EVENTS = (OwnerChanged, BuyInIntended, BuyInCancelled, BuyInRefunded)
