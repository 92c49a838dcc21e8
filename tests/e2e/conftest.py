"""The whole system as real processes: nats-server and the rng, wallet, table and dealer
services on free loopback ports and a temporary data folder (``pokerctl.local.LocalSystem``),
started once per test module and always stopped by it. Secure, as ``pokerctl up`` runs it: TLS,
the local PKI under the data folder, tokens for people on the client ports, sealed decks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openpoker.pokerctl.local import LocalSystem
from tests.helpers.system import local_system

# A restarted table service is a new instance: it owns its tables again once the crashed one's
# partition leases expire. Short leases keep the restart tests short.
ENV = {"POKER_TABLE_LEASE_TTL": "2"}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("e2e"), ENV, secure=True) as local:
        yield local
