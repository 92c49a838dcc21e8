"""The whole system as real processes for a test module: nats-server and every service."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from openpoker.pokerctl.local import LocalSystem


@contextlib.contextmanager
def local_system(
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    *,
    secure: bool = False,
    nats_auth: bool | None = None,
) -> Iterator[LocalSystem]:
    """``pokerctl.local.LocalSystem`` on free loopback ports with its data in ``data_dir``,
    started with ``env`` added to the environment (the processes read their settings from it)
    and always stopped, the environment then restored. For module-scoped fixtures, which cannot
    use ``monkeypatch`` and have no running event loop. ``secure``: TLS, the local PKI and sealed
    decks, as ``pokerctl up`` runs it, with NATS secured too unless ``nats_auth`` is False."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        local = LocalSystem(data_dir=data_dir, free_ports=True, secure=secure, nats_auth=nats_auth)
        try:
            asyncio.run(local.start())
            yield local
        finally:
            asyncio.run(local.stop())
