"""The engine's version: every envelope the project writes records it, every snapshot is keyed by it.

Bump it when a change to the engine changes what folding the same events yields (a rule fixed, a
field added to a state): snapshots taken under another version are then ignored and the log is
folded again from the start. Stored events stay readable across versions (``engine.codec``);
what a stream's events mean is the envelope's ``rules_version``, not this.
"""

from __future__ import annotations

ENGINE_VERSION = "openpoker-engine/0.6"
