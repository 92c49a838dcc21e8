"""Deadline forwarding: gRPC Python does not pass a caller's deadline on to downstream calls.

Every outgoing call made inside a handler passes ``timeout=remaining(context)``: the time the
caller has left, minus a margin for our own reply, so the downstream call gives up before our
caller does (grpc.md §1.5, measured: without it the downstream sees no deadline at all).
"""

from __future__ import annotations

from typing import Any

from grpc import aio

DEFAULT_TIMEOUT = 5.0
DEFAULT_MARGIN = 0.05
MINIMUM = 0.001
# Without a caller deadline gRPC reports an effectively infinite remaining time.
_NO_DEADLINE = 1e6


def remaining(
    context: aio.ServicerContext[Any, Any] | None,
    *,
    margin: float = DEFAULT_MARGIN,
    default: float = DEFAULT_TIMEOUT,
) -> float:
    """Seconds to give a downstream call: caller's remaining time minus ``margin``.

    ``default`` applies when there is no incoming context or the caller set no deadline (we
    still never call downstream without one). Never returns less than ``MINIMUM``: a call with
    an already-expired budget fails fast with DEADLINE_EXCEEDED instead of hanging.
    """
    left = None if context is None else context.time_remaining()
    if left is None or left > _NO_DEADLINE:
        return default
    return max(MINIMUM, left - margin)
