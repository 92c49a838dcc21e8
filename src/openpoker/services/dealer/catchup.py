"""A restarted dealer's catch-up: each table from its checkpoint, then only its own log after it.

``catch_up`` lists the table subjects in ``TABLE_EVENTS`` and, for each table, restores the
track from its checkpoint (``checkpoint``, in the bucket ``poker-dealer``) if it decodes and
names the envelope actually stored at the sequence it covers (same subject, version and hash:
a checkpoint from a stream since reset or rewritten is ignored), then folds the table's own
subject after that point up to the stream's end when the dealer started (``stop``). A table
without a usable checkpoint folds its subject from the start. The reads are per table, a few at
a time (``PARALLEL``), by ordered consumers with flow control, and each ends at ``stop``; the
feed then follows the whole stream from ``stop + 1``. So a start reads the tails since the last
checkpoints, never the whole stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from openpoker.eventstore import codec
from openpoker.services.dealer import checkpoint
from openpoker.services.dealer.app import DealerApp
from openpoker.services.dealer.tracker import TableTrack
from openpoker.shell.logs import get_logger

PARALLEL = 8  # tables read at once
STALL = 5.0  # seconds without a message before a table's read is started again where it stands

Fold = Callable[[Msg], Awaitable[None]]


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
    """Fold ``subject``'s messages after sequence ``after`` up to ``stop`` (inclusive)."""
    try:
        last = int((await js.get_last_msg(stream, subject)).seq or 0)
    except NotFoundError:
        return
    stop = min(stop, last)
    while after < stop:
        after = await _read_once(js, stream, subject, after=after, stop=stop, fold=fold)


async def _read_once(
    js: JetStreamContext, stream: str, subject: str, *, after: int, stop: int, fold: Fold
) -> int:
    """Read from ``after`` until ``stop`` or a stall; return the sequence reached."""
    reached = asyncio.Event()
    position = after

    async def take(msg: Msg) -> None:
        nonlocal position
        sequence = int(msg.metadata.sequence.stream)
        if sequence <= position or sequence > stop:
            return
        position = sequence
        await fold(msg)
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
    return position


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
    stored = await app.checkpoints.load()
    listed = await table_subjects(js, stream, subjects)
    gate = asyncio.Semaphore(PARALLEL)
    restored = 0

    async def one(subject: str) -> None:
        nonlocal restored
        async with gate:
            track = await usable(js, stream, subject, stored.get(table_of(subject)))
            after = 0
            if track is not None and track.sequence <= stop:
                app.restore(track)
                after = track.sequence
                restored += 1
            await read_tail(js, stream, subject, after=after, stop=stop, fold=fold)

    await asyncio.gather(*(one(s) for s in listed))
    return restored, len(listed)
