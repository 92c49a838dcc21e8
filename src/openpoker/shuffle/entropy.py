"""Where seeds come from: the operating system's CSPRNG, and nothing else.

``os.urandom`` reads the kernel CSPRNG (``getrandom(2)`` on Linux). If it raises, there is no
seed and no shuffle: ``EntropyUnavailable`` stops the hand (the dealer pauses the table). There
is deliberately no fallback to a time-, pid- or ``random``-based seed: that was exactly the
1999 ASF failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from openpoker.shuffle import SEED_BYTES
from openpoker.shuffle.errors import EntropyUnavailable

SeedSource = Callable[[], bytes]


def os_seed() -> bytes:
    """32 fresh bytes from the OS CSPRNG, or ``EntropyUnavailable``."""
    try:
        seed = os.urandom(SEED_BYTES)
    except (OSError, NotImplementedError) as exc:
        raise EntropyUnavailable(cause=type(exc).__name__) from None
    if len(seed) != SEED_BYTES:  # never seen; cheap to refuse
        raise EntropyUnavailable(cause="short read")
    return seed
