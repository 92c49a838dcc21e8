"""Event payloads: ``engine.codec`` JSON as the compact bytes stored in ``Event.payload``."""

from __future__ import annotations

import json

from openpoker.engine import codec

# One compact encoder for every event: ``json.dumps`` with ``separators`` builds a new encoder
# per call (same output: ``ensure_ascii``, key order as given).
_COMPACT = json.JSONEncoder(separators=(",", ":"), check_circular=False)  # documents are trees


def encode(event: object) -> bytes:
    """``engine.codec.encode(event)`` as compact JSON bytes (raises its ``CodecError``)."""
    return _COMPACT.encode(codec.encode(event)).encode()
