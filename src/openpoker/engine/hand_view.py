"""What a client may see of a hand: ``HandView`` and its parts, built by ``engine.hand.view``.

These are in a module of their own, not in ``engine.hand``, because ``engine.hand`` may be compiled
by mypyc (``make install``), and a compiled module's dataclasses keep only erased annotations
(``int | None`` becomes ``type``), while ``engine.codec`` decodes by the field annotations.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpoker.engine.betting import LegalActions
from openpoker.engine.cards import Card
from openpoker.engine.hand_events import Street


@dataclass(frozen=True, slots=True, kw_only=True)
class PotView:
    amount: int
    eligible: tuple[int, ...]  # seats


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerView:
    seat: int
    player: str
    stack: int
    bet: int
    folded: bool
    all_in: bool
    hole: tuple[Card, ...] | None  # None: face down to this viewer


@dataclass(frozen=True, slots=True, kw_only=True)
class HandView:
    hand_id: str
    button: int
    street: Street
    board: tuple[Card, ...]
    players: tuple[PlayerView, ...]
    pots: tuple[PotView, ...]
    to_act: int | None
    legal: LegalActions | None  # the viewer's choices when it is their turn
    over: bool
