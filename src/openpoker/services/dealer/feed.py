"""The dealer's view of the table logs: an ordered JetStream consumer over every table subject.

On start the feed catches every table up to the last message in ``TABLE_EVENTS`` (subjects
``poker.table.>``) from the table's checkpoint and its own log after it (``catchup``), then the
app goes live and drivers begin to act, and the feed follows the whole stream from the next
message, folding each envelope into its table's track (``DealerApp.apply``). An ordered
consumer is ephemeral and re-created by the client on a gap, so the dealer keeps no consumer
state on the server: its checkpoints (bucket ``poker-dealer``) are the only state it keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from openpoker.eventstore import codec
from openpoker.eventstore.loading import Finding, Problem
from openpoker.services.dealer.app import DealerApp
from openpoker.services.dealer.catchup import catch_up, table_of
from openpoker.services.dealer.errors import LogUnreachable
from openpoker.shell.logs import get_logger

TABLE_SUBJECTS = "poker.table.>"


__all__ = ["TABLE_SUBJECTS", "TableFeed", "stream_sequence", "table_of", "undecodable"]


# ``$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>``
_V1_ACK_TOKENS = 9


def stream_sequence(msg: Msg) -> int:
    """The message's stream sequence, read from the reply subject's v1 form without building
    ``msg.metadata`` (its dataclasses and timestamp were a tenth of the feed's cost per
    envelope); any other form goes through ``msg.metadata``."""
    reply = msg.reply
    if reply.startswith("$JS.ACK."):
        tokens = reply.split(".")
        if len(tokens) == _V1_ACK_TOKENS and tokens[5].isdigit():
            return int(tokens[5])
    return int(msg.metadata.sequence.stream)


def undecodable(app: DealerApp, table_id: str, subject: str, sequence: int, exc: Exception) -> Finding:
    """The finding for a message on a table's subject that is no envelope."""
    track = app.drivers[table_id].track if table_id in app.drivers else None
    return Finding(
        stream=table_id,
        subject=subject,
        sequence=sequence,
        version=(track.version if track is not None else 0) + 1,
        problem=Problem.UNDECODABLE,
        detail=str(exc),
    )


class TableFeed:
    def __init__(self, js: JetStreamContext, app: DealerApp, *, stream: str) -> None:
        self._js = js
        self._app = app
        self._stream = stream
        self._sub: object | None = None
        self._task: asyncio.Task[None] | None = None
        self.applied = 0  # stream sequence of the last envelope applied
        self._catch_up_to = 0

    async def _wait_for_stream(self) -> int:
        while True:
            try:
                info = await self._js.stream_info(self._stream)
                return int(info.state.last_seq or 0)
            except NotFoundError:
                get_logger().info("dealer.waiting_for_stream", stream=self._stream)
                await asyncio.sleep(0.5)

    def start(self) -> None:
        """Start following in the background (the table service creates the stream; the dealer
        serves its API meanwhile and goes live once it has caught up)."""
        self._task = asyncio.get_running_loop().create_task(self._follow(), name="dealer-feed")

    async def _follow(self) -> None:
        last = await self._wait_for_stream()
        self._catch_up_to = last
        if last > 0:
            await self._catch_up(last)
        self.applied = last
        self._sub = await self._js.subscribe(
            TABLE_SUBJECTS,
            stream=self._stream,
            ordered_consumer=True,
            config=api.ConsumerConfig(
                deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=last + 1
            ),
            cb=self._on_message,
            pending_msgs_limit=50_000,
            pending_bytes_limit=128 * 1024 * 1024,
        )
        self._app.go_live()

    async def _catch_up(self, last: int) -> None:
        began = time.monotonic()
        while True:
            try:
                restored, tables = await catch_up(
                    self._js,
                    self._app,
                    stream=self._stream,
                    subjects=TABLE_SUBJECTS,
                    stop=last,
                    fold=self._fold,
                )
                break
            except (NatsError, TimeoutError) as exc:  # NATS away: again (each table from where it is)
                get_logger().warning("dealer.catch_up_retry", error=repr(exc))
                await asyncio.sleep(0.5)
        get_logger().info(
            "dealer.caught_up",
            tables=tables,
            from_checkpoint=restored,
            sequence=last,
            seconds=round(time.monotonic() - began, 3),
        )

    async def _on_message(self, msg: Msg) -> None:
        sequence = stream_sequence(msg)
        await self._fold(msg.subject, sequence, msg.data)
        self.applied = sequence

    async def _fold(self, subject: str, sequence: int, data: bytes) -> None:
        """Decode and apply one table message (never raises: one bad message must not stop us)."""
        table_id = table_of(subject)
        try:
            envelope = codec.decode(data)
        except Exception as exc:  # protobuf's DecodeError and friends
            envelope = None
            if self._app.verifier is not None:  # checked as a load checks: the table is quarantined
                self._app.quarantine(table_id, undecodable(self._app, table_id, subject, sequence, exc))
            else:
                get_logger().warning("dealer.bad_envelope", subject=subject, sequence=sequence)
        try:
            if envelope is not None:
                self._app.apply(table_id, envelope, sequence, subject=subject)
        except Exception:  # one bad message must not stop the feed; the table's driver is stale
            get_logger().exception("dealer.bad_envelope", subject=subject, sequence=sequence)

    def behind(self) -> int | None:
        """Messages left to fold before the dealer has caught up (None: the stream's end is not
        known yet, as while it waits for the stream)."""
        if self._catch_up_to == 0 and not self._app.live:
            return None
        return max(0, self._catch_up_to - self.applied)

    async def pending(self) -> int:
        try:
            info = await self._js.stream_info(self._stream)
        except NotFoundError:
            return 0
        except (NatsError, TimeoutError) as exc:  # never INTERNAL for a NATS that is away
            raise LogUnreachable() from exc
        return max(0, int(info.state.last_seq or 0) - self.applied)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        sub = self._sub
        if sub is not None:
            await sub.unsubscribe()  # type: ignore[attr-defined]
