"""One signature for the envelopes a writer seals at the same moment.

An Ed25519 signature costs the table service about as much CPU as the rest of an action's
append, and the tables of one process seal their envelopes concurrently (a batch of actions for
many tables is decided in one turn of the event loop). So the writer does not sign each envelope
as it seals it: ``BatchSigner.sign`` queues it, and once the event loop has run every task that
was ready, one call signs the queue with ``Signer.sign_all`` (one signature over the Merkle root,
an inclusion proof per envelope; a lone envelope is signed as before). No envelope waits for
another to arrive: the queue is signed in the same pass of the loop.
"""

from __future__ import annotations

import asyncio

from openpoker.eventstore.envelope import Envelope
from openpoker.eventstore.signing import Signer

# Envelopes under one signature at most: bounds an inclusion proof to 8 hashes.
MAX_BATCH = 256


class BatchSigner:
    """Signs with ``signer`` the envelopes queued in one pass of the running event loop."""

    def __init__(self, signer: Signer, *, max_batch: int = MAX_BATCH) -> None:
        self.signer = signer
        self.max_batch = max_batch
        self._queue: list[tuple[Envelope, asyncio.Future[Envelope]]] = []
        self.signatures = 0  # signatures made (for benchmarks: envelopes per signature)
        self.envelopes = 0

    @property
    def key_id(self) -> str:
        return self.signer.key_id

    async def sign(self, envelope: Envelope) -> Envelope:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Envelope] = loop.create_future()
        if not self._queue:
            # After the tasks already ready: those that seal in this pass join the batch.
            loop.call_soon(self._flush)
        self._queue.append((envelope, done))
        return await done

    def _flush(self) -> None:
        queue, self._queue = self._queue, []
        for start in range(0, len(queue), self.max_batch):
            chunk = queue[start : start + self.max_batch]
            try:
                signed = self.signer.sign_all([envelope for envelope, _ in chunk])
            except Exception as exc:  # every waiter learns it; none is left hanging
                for _, done in chunk:
                    if not done.done():
                        done.set_exception(exc)
                continue
            self.signatures += 1
            self.envelopes += len(chunk)
            for (_, done), envelope in zip(chunk, signed, strict=True):
                if not done.done():  # a waiter cancelled meanwhile
                    done.set_result(envelope)
