"""The nats-server launcher and the shared fixture start a real JetStream server and stop it."""

from __future__ import annotations

import socket
from pathlib import Path

import nats
import pytest

from openpoker.shell.natsproc import NatsCluster, NatsServer, NatsServerError
from tests.helpers.processes import alive


async def test_fixture_server_has_jetstream(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().account_info()
        assert info.streams == 0
    finally:
        await nc.close()


async def test_start_stop_reaps_and_frees_the_port(tmp_path: Path) -> None:
    server = NatsServer(data_dir=tmp_path)
    server.start()
    pid, port = server.pid, server.port
    assert pid is not None
    assert server.url == f"nats://127.0.0.1:{port}"
    nc = await nats.connect(server.url)
    await nc.close()
    assert server.stop() == 0  # SIGTERM: a clean exit
    assert not alive(pid)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # the port is free again
    assert (tmp_path / "jetstream").is_dir()


def test_port_in_use_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        busy = sock.getsockname()[1]
        with pytest.raises(NatsServerError):
            NatsServer(data_dir=tmp_path, port=busy).start(timeout=10)


async def test_jetstream_data_survives_restart_on_the_same_folder(tmp_path: Path) -> None:
    with NatsServer(data_dir=tmp_path) as first:
        async with await nats.connect(first.url) as nc:
            js = nc.jetstream()
            await js.add_stream(name="KEEP", subjects=["keep.>"])
            await js.publish("keep.a", b"fact")
    with NatsServer(data_dir=tmp_path) as second:
        async with await nats.connect(second.url) as nc:
            msg = await nc.jetstream().get_last_msg("KEEP", "keep.a")
    assert msg.data == b"fact"


async def test_a_started_cluster_places_an_r3_stream_at_once(nats_cluster: NatsCluster) -> None:
    # start() returns only once the meta leader has heard from every peer; before that, creating
    # an R3 stream fails with "no suitable peers for placement" (CI saw it).
    leaders = {meta["leader"] for node in nats_cluster.nodes if (meta := node.meta_cluster())}
    assert len(leaders) == 1
    async with await nats.connect(nats_cluster.urls) as nc:
        js = nc.jetstream()
        info = await js.add_stream(name="R3NOW", subjects=["r3now.>"], num_replicas=3)
        assert info.config.num_replicas == 3
        ack = await js.publish("r3now.a", b"x")
        assert ack.seq == 1
