"""Which tables an operator paused, kept in the KV bucket ``poker-dealer`` (key
``paused.<table_id>``), so a pause survives a dealer restart."""

from __future__ import annotations

import contextlib

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, NoKeysError
from nats.js.kv import KeyValue

from openpoker.eventstore.streams import DEALER_PAUSES, ensure_bucket
from openpoker.services.dealer.app import PauseStore

DEALER_BUCKET = DEALER_PAUSES
_PREFIX = "paused."


class KvPauseStore(PauseStore):
    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv

    @classmethod
    async def open(cls, js: JetStreamContext) -> KvPauseStore:
        return cls(await ensure_bucket(js, DEALER_BUCKET))

    async def load(self) -> set[str]:
        try:
            keys = await self._kv.keys()
        except NoKeysError:
            return set()
        return {k[len(_PREFIX) :] for k in keys if k.startswith(_PREFIX)}

    async def set(self, table_id: str, paused: bool) -> None:
        key = _PREFIX + table_id
        if paused:
            await self._kv.put(key, b"1")
            return
        with contextlib.suppress(KeyNotFoundError):
            await self._kv.delete(key)
