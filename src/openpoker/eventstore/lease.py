"""Partition leases in a KV bucket: who SHOULD own a partition (safety is in the log).

Theory of operation (ARCHITECTURE.md, eventsourcing.md §4.2):

* ``acquire``: ``kv.create(key)``; if the key exists but is deleted or purged, ``kv.update`` over
  that revision. The revision returned is the **owner epoch**: a stream sequence, so greater than
  every earlier acquisition. The new owner then appends ``OwnerChanged{epoch}`` to each table it
  activates, and every append carries the expected sequence, so a stale owner's write fails.
* ``renew`` every TTL/4: ``kv.update(key, last=revision)`` (compare-and-set on the revision of
  our last good write). The epoch stays the acquisition revision.
* Give the lease up **only** on a definite conflict (someone else's revision is there) or when
  80% of the TTL has passed since the last good renewal. Dropping it on the first slow renewal
  turns the loss of one NATS node into a failover of every table (measured).

``should_give_up`` is the pure rule; ``LeaseKeeper`` applies it with a clock and the KV bucket.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from nats.js.errors import BadRequestError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from openpoker.eventstore.errors import EventStoreError

# JetStream's error code for a compare-and-set whose expected last sequence is not the key's:
# nats-py raises it from KV delete as a plain BadRequestError.
WRONG_LAST_SEQUENCE = 10071

GIVE_UP_FRACTION = 0.8


class LeaseHeld(EventStoreError):
    """Another owner holds the lease."""

    reason = "LEASE_HELD"
    kind = "conflict"

    def __init__(self, *, key: str, holder: str, revision: int) -> None:
        super().__init__(f"lease {key} held by {holder!r} (revision {revision})", key=key, holder=holder)
        self.key = key
        self.holder = holder
        self.revision = revision


class LeaseLost(EventStoreError):
    """We no longer hold the lease (conflict on renewal, or too long without renewing)."""

    reason = "LEASE_LOST"
    kind = "conflict"

    def __init__(self, *, key: str, epoch: int, why: str) -> None:
        super().__init__(f"lease {key} (epoch {epoch}) lost: {why}", key=key, epoch=epoch, why=why)
        self.key = key
        self.epoch = epoch
        self.why = why


def should_give_up(*, now: float, last_good_renewal: float, ttl: float, definite_conflict: bool) -> bool:
    """The give-up rule: a definite conflict, or 80% of the TTL without a good renewal."""
    return definite_conflict or now - last_good_renewal >= GIVE_UP_FRACTION * ttl


class LeaseKeeper:
    """Holds one lease key: acquire, renew in the background, release; reports loss once."""

    def __init__(
        self,
        kv: KeyValue,
        key: str,
        *,
        owner: str,
        ttl: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kv = kv
        self.key = key
        self.owner = owner
        self.ttl = ttl
        self._clock = clock
        self.epoch = 0
        self._revision = 0
        self._last_good = 0.0
        self._task: asyncio.Task[None] | None = None
        self.lost: asyncio.Event = asyncio.Event()
        self.lost_reason = ""

    @property
    def held(self) -> bool:
        return self.epoch > 0 and not self.lost.is_set()

    async def acquire(self) -> int:
        """Take the lease; returns the owner epoch. Raises ``LeaseHeld`` if someone holds it.

        ``kv.create`` also takes over a deleted or purged key (nats-py re-creates over the
        tombstone's revision); an expired key is simply gone (the bucket has no limit markers).
        A key that expires while this runs is tried again: its expiry can fall between the
        refused create and nats-py's own read inside ``create`` (which then raises
        ``KeyNotFoundError``), or between the refused create and the read below.
        """
        value = self.owner.encode()
        revision = 0
        for _ in range(2):  # a second try covers a key that expired between create and get
            try:
                revision = await self._kv.create(self.key, value)
                break
            except KeyNotFoundError:
                continue
            except KeyWrongLastSequenceError:
                try:
                    entry = await self._kv.get(self.key)
                except KeyNotFoundError:
                    continue
                raise LeaseHeld(
                    key=self.key, holder=(entry.value or b"").decode(), revision=entry.revision or 0
                ) from None
        else:
            raise LeaseHeld(key=self.key, holder="", revision=0)
        self.epoch = self._revision = revision
        self._last_good = self._clock()
        self.lost.clear()
        self.lost_reason = ""
        return revision

    async def renew(self) -> int:
        """One compare-and-set renewal; raises ``KeyWrongLastSequenceError`` on a definite conflict."""
        revision = await self._kv.update(self.key, self.owner.encode(), last=self._revision)
        self._revision = revision
        self._last_good = self._clock()
        return revision

    async def _adopt_own_write(self) -> bool:
        """After a conflict: if the key holds our value, an earlier renewal landed but its ack
        was lost; continue from its revision. Returns True when the lease is still ours."""
        try:
            entry = await self._kv.get(self.key)
        except Exception:
            return True
        if entry.value == self.owner.encode() and entry.revision:
            self._revision = entry.revision
            self._last_good = self._clock()
            return True
        return False

    def _lose(self, why: str) -> None:
        if not self.lost.is_set():
            self.lost_reason = why
            self.lost.set()

    async def keep(self) -> None:
        """Renew every TTL/4 until lost or cancelled (run it as a task: ``start``).

        Attempts start every TTL/4 whatever the previous one took (each is bounded by TTL/4),
        so an outage shorter than 80% of the TTL never costs the lease.
        """
        next_at = self._last_good + self.ttl / 4
        while not self.lost.is_set():
            await asyncio.sleep(max(0.0, next_at - self._clock()))
            next_at = self._clock() + self.ttl / 4
            definite = False
            try:
                await asyncio.wait_for(self.renew(), timeout=self.ttl / 4)
            except KeyWrongLastSequenceError:
                definite = not await self._adopt_own_write()
            except Exception:
                definite = False
            if should_give_up(
                now=self._clock(), last_good_renewal=self._last_good, ttl=self.ttl, definite_conflict=definite
            ):
                self._lose("conflict" if definite else "no renewal for 80% of the TTL")

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.keep(), name=f"lease:{self.key}")

    async def release(self) -> None:
        """Stop renewing and delete the key if it is still ours (graceful hand-over)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.held:
            for _ in range(2):
                try:
                    await self._kv.delete(self.key, last=self._revision)
                    break
                except (KeyWrongLastSequenceError, BadRequestError) as e:
                    # A renewal that timed out here may still have landed: our revision is
                    # stale, not the lease lost. Adopt it and delete again; never someone else's.
                    if isinstance(e, BadRequestError) and e.err_code != WRONG_LAST_SEQUENCE:
                        raise
                    if not await self._adopt_own_write():
                        break
        self._lose("released")

    def check(self) -> None:
        """Raise ``LeaseLost`` if the lease is gone (call before taking a command)."""
        if self.lost.is_set():
            raise LeaseLost(key=self.key, epoch=self.epoch, why=self.lost_reason)
