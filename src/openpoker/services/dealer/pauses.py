"""Which tables are paused and why, kept in the KV bucket ``poker-dealer`` (key
``paused.<table_id>``, value ``pausing.Pause`` as JSON), so a pause survives a dealer restart."""

from __future__ import annotations

import contextlib

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, NoKeysError
from nats.js.kv import KeyValue

from openpoker.eventstore.streams import DEALER_PAUSES, ensure_bucket
from openpoker.services.dealer.app import PauseStore
from openpoker.services.dealer.pausing import Pause

DEALER_BUCKET = DEALER_PAUSES
_PREFIX = "paused."


class KvPauseStore(PauseStore):
    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv

    @classmethod
    async def open(cls, js: JetStreamContext) -> KvPauseStore:
        return cls(await ensure_bucket(js, DEALER_BUCKET))

    async def load(self) -> dict[str, Pause]:
        try:
            keys = await self._kv.keys()
        except NoKeysError:
            return {}
        pauses = {}
        for key in keys:
            if key.startswith(_PREFIX):
                with contextlib.suppress(KeyNotFoundError):  # lifted meanwhile
                    entry = await self._kv.get(key)
                    pauses[key[len(_PREFIX) :]] = Pause.decode(entry.value or b"")
        return pauses

    async def set(self, table_id: str, pause: Pause | None) -> None:
        key = _PREFIX + table_id
        if pause is not None:
            await self._kv.put(key, pause.encode())
            return
        with contextlib.suppress(KeyNotFoundError):
            await self._kv.delete(key)
