"""Which tables are paused and why, kept in the KV bucket ``poker-dealer``, so a pause survives a
dealer restart.

Every pause is in ONE value, key ``paused`` (a JSON object: table id -> ``pausing.Pause``), read
with a single direct get. Listing keys (``paused.<table_id>``, one per pause, as before) goes
through a consumer over the whole bucket, checkpoints included, and that listing was seen to
come back short under load: a paused table would then have dealt again after a restart. Writes
are compare-and-set on the value's revision. Keys of the old layout are still read at load and
folded into the value at the next change of that table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from nats.js import JetStreamContext
from nats.js.errors import BadRequestError, KeyNotFoundError
from nats.js.kv import KeyValue

from openpoker.eventstore.streams import DEALER_PAUSES, ensure_bucket
from openpoker.services.dealer.app import PauseStore
from openpoker.services.dealer.pausing import Pause

DEALER_BUCKET = DEALER_PAUSES
KEY = "paused"
_LEGACY_PREFIX = "paused."
_WRITE_TRIES = 8  # compare-and-set attempts before a write gives up (one dealer writes)


def encode_pauses(pauses: dict[str, Pause]) -> bytes:
    return json.dumps({t: json.loads(p.encode()) for t, p in sorted(pauses.items())}, sort_keys=True).encode()


def decode_pauses(data: bytes) -> dict[str, Pause]:
    """The stored pauses; a value that is not an object reads as none (the log says so)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return {}
    if not isinstance(doc, dict):
        return {}
    return {str(t): Pause.decode(json.dumps(p).encode()) for t, p in doc.items()}


class KvPauseStore(PauseStore):
    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv
        self._lock = asyncio.Lock()
        self._legacy: set[str] = set()  # tables paused under an old-layout key

    @classmethod
    async def open(cls, js: JetStreamContext) -> KvPauseStore:
        return cls(await ensure_bucket(js, DEALER_BUCKET))

    async def _read(self) -> tuple[dict[str, Pause], int | None]:
        try:
            entry = await self._kv.get(KEY)
        except KeyNotFoundError:  # never written, or deleted
            return {}, None
        return decode_pauses(entry.value or b""), entry.revision

    async def load(self) -> dict[str, Pause]:
        pauses, _ = await self._read()
        for table_id, pause in (await self._load_legacy()).items():
            pauses.setdefault(table_id, pause)
        return pauses

    async def _load_legacy(self) -> dict[str, Pause]:
        """Pauses under old-layout keys: a watch of ``paused.>`` only (``kv.keys`` would watch
        the whole bucket, checkpoints included, and filter here)."""
        found = {}
        watcher = await self._kv.watch(_LEGACY_PREFIX + ">", ignore_deletes=True)
        try:
            async for entry in watcher:
                if entry is None:  # no more stored values
                    break
                found[entry.key[len(_LEGACY_PREFIX) :]] = Pause.decode(entry.value or b"")
        finally:
            await watcher.stop()  # type: ignore[no-untyped-call]
        self._legacy |= set(found)
        return found

    async def set(self, table_id: str, pause: Pause | None) -> None:
        async with self._lock:
            for _ in range(_WRITE_TRIES):
                pauses, revision = await self._read()
                if pause is None:
                    pauses.pop(table_id, None)
                else:
                    pauses[table_id] = pause
                data = encode_pauses(pauses)
                try:
                    if revision is None:
                        await self._kv.create(KEY, data)
                    else:
                        await self._kv.update(KEY, data, last=revision)
                    break
                except BadRequestError:  # another write came first (wrong last sequence): again
                    continue
            else:
                raise RuntimeError(f"the pauses could not be written in {_WRITE_TRIES} tries")
            if table_id in self._legacy:
                self._legacy.discard(table_id)
                with contextlib.suppress(KeyNotFoundError):
                    await self._kv.delete(_LEGACY_PREFIX + table_id)
