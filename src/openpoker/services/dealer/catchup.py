"""A restarted dealer's catch-up: each table from its checkpoint, then only its own log after it.

``catch_up`` lists the table subjects in ``TABLE_EVENTS`` and, for each table, restores the
track from its checkpoint (``checkpoint``, in the bucket ``poker-dealer``) if it decodes and
names the envelope actually stored at the sequence it covers (same subject, version and hash:
a checkpoint from a stream since reset or rewritten is ignored), then folds the table's own
subject after that point up to the stream's end when the dealer started (``stop``). A table
without a usable checkpoint folds its subject from the start. The reads are per table, a few at
a time (``PARALLEL``), and each ends at ``stop``: a short tail after a checkpoint (``GETS``) by
direct gets, one request each (paced by nature: nothing for the server to cut off), a longer
one or a whole table log by an ordered consumer of that subject with flow control. The feed then follows
the whole stream from ``stop + 1``. So a start reads the tails since the last checkpoints, never
the whole stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from openpoker.eventstore import codec
from openpoker.services.dealer import checkpoint
from openpoker.services.dealer.app import DealerApp
from openpoker.services.dealer.tracker import TableTrack
from openpoker.shell.logs import get_logger

PARALLEL = 16  # tables read at once
# A checkpointed table's tail of up to this many envelopes is read by direct gets (a request
# each); a longer one by a consumer, which delivers many times faster once created.
GETS = 32
RETRY = 0.5  # seconds before a table whose read failed is read again from where it stands
STALL = 5.0  # seconds without a message before a table's read is started again where it stands

Fold = Callable[[str, int, bytes], Awaitable[None]]  # subject, stream sequence, data


def table_of(subject: str) -> str:
    return subject.rsplit(".", 1)[-1]


async def table_subjects(js: JetStreamContext, stream: str, subjects: str) -> list[str]:
    info = await js.stream_info(stream, subjects_filter=subjects)
    return sorted((info.state.subjects or {}).keys())


async def usable(js: JetStreamContext, stream: str, subject: str, data: bytes | None) -> TableTrack | None:
    """The checkpoint's track if it can be trusted for ``subject``'s table, else None."""
    if data is None:
        return None
    table_id = table_of(subject)
    try:
        track = checkpoint.decode(data, table_id)
        raw = await js.get_msg(stream, seq=track.sequence)
        stored = codec.decode(raw.data or b"")
        if raw.subject != subject or stored.version != track.version or stored.hash != track.last_hash:
            raise checkpoint.CheckpointUnusable("the log holds another envelope at its sequence")
    except NotFoundError:
        get_logger().warning("dealer.checkpoint_ignored", table_id=table_id, reason="not in the log")
        return None
    except Exception as exc:  # unusable, or an undecodable message: fold the table's log instead
        get_logger().warning("dealer.checkpoint_ignored", table_id=table_id, reason=str(exc))
        return None
    return track


async def read_tail(
    js: JetStreamContext, stream: str, subject: str, *, after: int, stop: int, fold: Fold
) -> None:
    """Fold ``subject``'s messages after sequence ``after`` up to ``stop`` (inclusive) by an
    ordered consumer (a table with no usable checkpoint: its whole log)."""
    try:
        last = int((await js.get_last_msg(stream, subject)).seq or 0)
    except NotFoundError:
        return
    stop = min(stop, last)
    while after < stop:
        after = await _read_once(js, stream, subject, after=after, stop=stop, fold=fold)


async def short_tail(js: JetStreamContext, stream: str, subject: str, track: TableTrack) -> bool:
    """Whether ``subject`` holds at most ``GETS`` envelopes after ``track`` (its last one says)."""
    try:
        raw = await js.get_last_msg(stream, subject)
        return codec.decode(raw.data or b"").version - track.version <= GETS
    except NotFoundError:
        return True
    except (NatsError, TimeoutError):
        raise
    except Exception:  # an undecodable last message: the consumer's read meets it in order
        return False


async def get_tail(
    js: JetStreamContext, stream: str, subject: str, *, after: int, stop: int, fold: Fold
) -> int:
    """Fold ``subject``'s messages after ``after`` up to ``stop`` one direct get each (the tail
    after a checkpoint: about ``checkpoint.EVERY`` messages; no consumer, so nothing to pace);
    give up after ``GETS`` and return the sequence reached."""
    for _ in range(GETS):
        try:
            raw = await js.get_msg(stream, seq=after + 1, subject=subject, next=True, direct=True)
        except NotFoundError:
            return stop
        sequence = int(raw.seq or 0)
        if sequence > stop or sequence <= after:
            return stop
        await fold(subject, sequence, raw.data or b"")
        after = sequence
    return after


async def _read_once(
    js: JetStreamContext, stream: str, subject: str, *, after: int, stop: int, fold: Fold
) -> int:
    """Read from ``after`` until ``stop`` or a stall; return the sequence reached."""
    reached = asyncio.Event()
    position = after

    async def take(msg: Msg) -> None:
        nonlocal position
        sequence = int(msg.metadata.sequence.stream)
        if sequence > stop:  # in order: nothing at or before ``stop`` is left (the feed has it)
            reached.set()
            return
        if sequence <= position:
            return
        position = sequence
        await fold(msg.subject, sequence, msg.data)
        if sequence >= stop:
            reached.set()

    sub = await js.subscribe(
        subject,
        stream=stream,
        ordered_consumer=True,
        config=api.ConsumerConfig(
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after + 1
        ),
        cb=take,
        pending_msgs_limit=20_000,
        pending_bytes_limit=64 * 1024 * 1024,
    )
    try:
        while not reached.is_set():
            before = position
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reached.wait(), STALL)
            if position == before and not reached.is_set():
                get_logger().warning("dealer.catch_up_stalled", subject=subject, at=position)
                break
    finally:
        await sub.unsubscribe()
    return stop if reached.is_set() else position


async def catch_up(
    js: JetStreamContext,
    app: DealerApp,
    *,
    stream: str,
    subjects: str,
    stop: int,
    fold: Fold,
) -> tuple[int, int]:
    """Fold every table up to ``stop``; return (tables restored from a checkpoint, tables)."""
    listed = await table_subjects(js, stream, subjects)
    gate = asyncio.Semaphore(PARALLEL)
    restored = 0

    async def one(subject: str) -> None:
        nonlocal restored
        table_id = table_of(subject)
        async with gate:
            try:
                data = await app.checkpoints.get(table_id)
            except (NatsError, TimeoutError) as exc:  # the bucket away: fold the log instead
                get_logger().warning("dealer.checkpoint_ignored", table_id=table_id, reason=repr(exc))
                data = None
            track = await usable(js, stream, subject, data)
            if track is not None and track.sequence <= stop:
                app.restore(track)
                restored += 1
            while True:
                d = app.drivers.get(table_id)
                after = 0 if d is None else d.track.sequence
                try:
                    if track is not None and await short_tail(js, stream, subject, track):
                        after = await get_tail(js, stream, subject, after=after, stop=stop, fold=fold)
                    if after < stop:
                        await read_tail(js, stream, subject, after=after, stop=stop, fold=fold)
                    return
                except (NatsError, TimeoutError) as exc:  # NATS busy or away: again, from here
                    get_logger().warning("dealer.catch_up_retry", subject=subject, error=str(exc))
                    await asyncio.sleep(RETRY)

    await asyncio.gather(*(one(s) for s in listed))
    return restored, len(listed)
