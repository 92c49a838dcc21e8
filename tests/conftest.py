"""Fixtures shared by every test package.

``nats_server`` starts a real ``nats-server`` with JetStream on a free 127.0.0.1 port and a
temporary store folder, and always stops it (even when the test fails); ``nats_url`` is its URL
and ``nc`` a client connected to it, closed after the test (a module that wants streams in place
overrides ``nc`` with a fixture that asks for this one and adds them).
``nats_cluster`` is a 3-node JetStream cluster on loopback (``.urls``; ``kill_node``/
``start_node`` for failover tests), also always stopped. All are function-scoped: every test
gets empty servers, so tests never see each other's streams. A server starts in tens of
milliseconds, a cluster in about a second.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
from hypothesis import settings
from nats.aio.client import Client

from openpoker.shell.natsproc import NatsCluster, NatsServer

# Hypothesis' settings, in one place (docs/testing.md). No deadline in any profile: one example
# stalled past the 200 ms default on a shared machine fails the run as "unreliable timings" (and
# the deadline also caps the draw-time health check at 1 s); the properties are about results, not
# speed (bench/ measures speed). A test that deliberately runs more or fewer examples says so in
# its own @settings. HYPOTHESIS_PROFILE picks the profile; unset, it is the one Hypothesis chose
# itself: "ci" where it sees a CI environment (derandomized, no example database), else "default".
settings.register_profile("default", settings.get_profile("default"), deadline=None)
settings.register_profile("ci", settings.get_profile("ci"), deadline=None)
settings.register_profile("thorough", settings.get_profile("default"), max_examples=1_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", settings.get_current_profile_name()))

# gRPC core logs connection-level INFO lines (e.g. GOAWAY when a test server stops) to stderr;
# tests assert on statuses, so keep only errors. Read by gRPC core when it initialises.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to test a stale mypyc build of the engine (``make install`` compiles its hot
    modules): an extension module wins the import over its edited source, so the tests would
    run the old code. Any engine source newer than the oldest built module makes it stale."""
    engine = Path(__file__).resolve().parent.parent / "src" / "openpoker" / "engine"
    built = [p.stat().st_mtime for p in engine.glob("*.so")]
    if not built:
        return
    newer = sorted(p.name for p in engine.glob("*.py") if p.stat().st_mtime > min(built))
    if newer:
        pytest.exit(
            f"src/openpoker/engine/*.so is older than {', '.join(newer)}: run `make install` to rebuild "
            "the compiled engine (or `make engine-pure` to use the sources)",
            returncode=2,
        )


@pytest.fixture(scope="module", autouse=True)
def _leaks_fail_their_own_module() -> Iterator[None]:
    """Collect garbage after each module: a socket or connection a module leaves open then warns
    (an error here) in that module's last test, not in whatever test a later collection happens
    to run in (CI once failed an unrelated test for a leak of a failed fixture elsewhere)."""
    yield
    gc.collect()


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(data_dir=tmp_path / "nats")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nats_url(nats_server: NatsServer) -> str:
    return nats_server.url


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def nats_cluster(tmp_path: Path) -> Iterator[NatsCluster]:
    cluster = NatsCluster(data_dir=tmp_path / "nats-cluster")
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
