"""Test helper: write a table's events the way the table service does (sealed envelopes)."""

from __future__ import annotations

from openpoker.eventstore.writer import SealedWriter


class TableWriter(SealedWriter):
    """Appends envelopes of (type, payload) events to one table's subject."""

    async def play_hand(self, hand_id: str, *, end: bool = True) -> None:
        await self.append(("HandStarted", {"type": "HandStarted", "hand_id": hand_id}))
        await self.append(("DeckCommitted", {"type": "DeckCommitted", "hand_id": hand_id}))
        if end:
            await self.append(("HandEnded", {"type": "HandEnded", "hand_id": hand_id, "stacks": [100, 200]}))
